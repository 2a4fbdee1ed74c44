"""What the server told the client, as events an ``async for`` hands out, and the queue they wait in.

``client.listen(...)`` yields ``ListChanged``, ``ResourceUpdated`` and ``Resubscribed``;
``client.log_messages()`` yields ``LogMessage``; ``client.notifications()`` yields the
protocol's own ``NotificationReceived``. Each is something the server did (or, for
``Resubscribed``, what the client did after the server's stream broke), named in the past tense.
"""

from __future__ import annotations

__all__ = ["EventFeed", "ListChanged", "ListenEvent", "LogMessage", "ResourceUpdated", "Resubscribed", "event_of"]

import asyncio
from collections import deque
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeAlias, TypeVar

from ..types.logging import LOGGING_LEVELS

E = TypeVar("E")
ListKind: TypeAlias = Literal["tools", "prompts", "resources"]


@dataclass(frozen=True, slots=True)
class ListChanged:
    """The server's list of ``kind`` changed: list it again (a cached copy is already dropped)."""

    kind: ListKind


@dataclass(frozen=True, slots=True)
class ResourceUpdated:
    """The resource at ``uri`` changed: read it again (a cached copy is already dropped)."""

    uri: str


@dataclass(frozen=True, slots=True)
class Resubscribed:
    """The stream broke and the client opened it again (``attempts`` tries): what changed in
    between was not heard, so read again whatever matters (cached copies are already dropped)."""

    attempts: int


@dataclass(frozen=True, slots=True)
class LogMessage:
    """One ``notifications/message``: ``data`` logged at ``level`` by ``logger`` (None: unnamed)."""

    level: str
    logger: str | None
    data: Any


ListenEvent: TypeAlias = ListChanged | ResourceUpdated | Resubscribed
_LISTS: dict[str, ListKind] = {
    "notifications/tools/list_changed": "tools",
    "notifications/prompts/list_changed": "prompts",
    "notifications/resources/list_changed": "resources",
}


def event_of(method: str, params: dict[str, Any]) -> ListChanged | ResourceUpdated | LogMessage | None:
    """The event a notification is, or None (another kind, or malformed: a feed never sees those)."""
    kind = _LISTS.get(method)
    if kind is not None:
        return ListChanged(kind)
    if method == "notifications/resources/updated":
        uri = params.get("uri")
        return ResourceUpdated(uri) if isinstance(uri, str) else None
    if method == "notifications/message":
        level, name = params.get("level"), params.get("logger")
        if level in LOGGING_LEVELS and "data" in params and (name is None or isinstance(name, str)):
            return LogMessage(level, name, params["data"])
    return None


class _End:
    """The feed's end marker: ``error`` to raise, or None when it ended well."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException | None) -> None:
        self.error = error


class EventFeed(Generic[E]):
    """The events waiting for one ``async for``, at most ``limit`` of them.

    A consumer slower than the server costs events, never memory: past ``limit``, new events
    are dropped and counted in ``dropped``. With ``coalesce``, an event equal to one still
    waiting is not queued twice (three ``ListChanged("tools")`` in a row need one listing).
    ``end`` closes it: the waiting events are still handed out first, then ``next`` says so.
    """

    def __init__(self, *, limit: int = 1000, coalesce: bool = False) -> None:
        self._events: deque[E] = deque()
        self._limit = limit
        self._coalesce = coalesce
        self._wakeup = asyncio.Event()
        self._end: _End | None = None
        #: Events dropped because more than ``limit`` were waiting.
        self.dropped = 0

    @property
    def ended(self) -> bool:
        return self._end is not None

    def put(self, event: E) -> None:
        if self._end is not None or (self._coalesce and event in self._events):
            return
        if len(self._events) >= self._limit:
            self.dropped += 1
            return
        self._events.append(event)
        self._wakeup.set()

    def end(self, error: BaseException | None = None) -> None:
        """No more events; ``next`` raises ``error`` (when given) once the waiting ones are out."""
        if self._end is None:
            self._end = _End(error)
            self._wakeup.set()

    async def next(self) -> E | None:
        """The next event; None once the feed has ended well (raises the error it ended with)."""
        while not self._events:
            if self._end is not None:
                if self._end.error is not None:
                    raise self._end.error
                return None
            self._wakeup.clear()
            await self._wakeup.wait()
        return self._events.popleft()
