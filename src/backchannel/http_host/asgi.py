"""The little of ASGI the MCP endpoint needs, with no web framework underneath.

Keeping the app framework-free makes it mountable anywhere an ASGI app is
(Starlette, FastAPI, plain uvicorn) and keeps a stdio server free of it all.
"""

from __future__ import annotations

__all__ = [
    "CLIENT_LEFT",
    "TIMED_OUT",
    "Mailbox",
    "NoItem",
    "RawHeaders",
    "Receive",
    "Scope",
    "Send",
    "encode_headers",
    "header_map",
    "next_item",
    "read_body",
    "send_bytes",
    "watching",
]

import asyncio
import contextlib
import enum
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any, Final, Generic, TypeVar

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
T = TypeVar("T")


class NoItem(enum.Enum):
    """What a reader of a ``Mailbox`` gets instead of an item, and why."""

    #: The client disconnected (put by ``watching``).
    CLIENT_LEFT = "the client left"
    #: The wait ran out of time (returned by ``Mailbox.get`` with a timeout).
    TIMED_OUT = "the wait timed out"


CLIENT_LEFT: Final = NoItem.CLIENT_LEFT
TIMED_OUT: Final = NoItem.TIMED_OUT


class Mailbox(Generic[T]):
    """What one response waits on: items in order, for a single reader.

    Every POST has one, and so does every stream it turns into; ``asyncio.Queue``
    would cost a lock-free but heavy object (getter and putter queues, an event)
    and ``asyncio.timeout`` a scope object per wait, where one future and, at most,
    one timer do.
    """

    __slots__ = ("_items", "_waiter")

    def __init__(self) -> None:
        self._items: deque[T | NoItem] = deque()
        self._waiter: asyncio.Future[bool] | None = None

    def put(self, item: T | NoItem) -> None:
        self._items.append(item)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(True)

    def empty(self) -> bool:
        return not self._items

    def get_nowait(self) -> T | NoItem:
        return self._items.popleft()

    async def get(self, timeout: float | None = None) -> T | NoItem:
        """The next item (a ``NoItem`` put in it included); ``TIMED_OUT`` if ``timeout`` seconds pass first."""
        if not self._items:
            loop = asyncio.get_running_loop()
            waiter: asyncio.Future[bool] = loop.create_future()
            self._waiter = waiter
            timer = loop.call_later(timeout, _expire, waiter) if timeout is not None else None
            try:
                if not await waiter:
                    return TIMED_OUT
            finally:
                self._waiter = None
                if timer is not None:
                    timer.cancel()
        return self._items.popleft()


def _expire(waiter: asyncio.Future[bool]) -> None:
    if not waiter.done():
        waiter.set_result(False)


#: Header names as ``header_map`` gives them, by the bytes that came: a client sends the same few
#: names on every request, and a lookup costs a third of a decode and a lowercasing. Bounded: past
#: ``_NAMES_KEPT`` names, a new one is decoded every time (a client inventing names costs time, not memory).
_NAMES: dict[bytes, str] = {}
_NAMES_KEPT = 512


def header_map(scope: Scope) -> dict[str, str]:
    """Request headers with lowercase names; repeated headers joined with ", " (RFC 9110).

    Each name's values are joined once, at the end: thousands of one header cost linear time
    (joined as they came, the value so far was copied for every repeat)."""
    headers: dict[str, str] = {}
    repeated: dict[str, list[str]] | None = None
    names = _NAMES
    for raw_name, raw_value in scope.get("headers", ()):
        name = names.get(raw_name)
        if name is None:
            name = raw_name.decode("latin-1").lower()
            if len(names) < _NAMES_KEPT:
                names[raw_name] = name
        value = raw_value.decode("latin-1")
        if name not in headers:
            headers[name] = value
            continue
        if repeated is None:
            repeated = {}
        values = repeated.get(name)
        if values is None:
            repeated[name] = [headers[name], value]
        else:
            values.append(value)
    if repeated is not None:
        for name, values in repeated.items():
            headers[name] = ", ".join(values)
    return headers


async def read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole request body; None as soon as it grows past ``limit`` bytes, or when the client
    leaves before its end (a truncated or badly framed body, a body that took too long: the
    server says ``http.disconnect``). Either way there is no body to act on: the caller answers
    413, which goes nowhere once the client is gone."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


RawHeaders = list[tuple[bytes, bytes]]


def encode_headers(headers: Mapping[str, str]) -> RawHeaders:
    """Headers as ASGI carries them; the fixed sets are encoded once, at import."""
    return [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]


async def send_start(send: Send, status: int, headers: Mapping[str, str] | RawHeaders) -> None:
    raw = headers if isinstance(headers, list) else encode_headers(headers)
    await send({"type": "http.response.start", "status": status, "headers": raw})


async def send_bytes(send: Send, status: int, body: bytes, headers: Mapping[str, str] | RawHeaders) -> None:
    """A complete response in one go."""
    raw = headers if isinstance(headers, list) else encode_headers(headers)
    length = (b"content-length", str(len(body)).encode())
    await send({"type": "http.response.start", "status": status, "headers": [*raw, length]})
    await send({"type": "http.response.body", "body": body})


class watching:  # lower case: it reads as ``async with watching(receive, box) as gone``
    """An event set when the client disconnects, for as long as the block runs.

    Each of ``boxes`` also receives ``CLIENT_LEFT`` then, so a reader blocked on it wakes
    up without racing two futures for every item it reads. With ``after``, watching
    starts only once the block has run that many seconds: a response that is over
    sooner (most are) costs a timer instead of a task, and a departure is noticed
    that much later, which suits a stream whose request goes on without it anyway.
    (A class rather than ``asynccontextmanager``: one of these opens per stream.)
    """

    __slots__ = ("_after", "_boxes", "_receive", "_timer", "_watcher", "gone")

    def __init__(self, receive: Receive, *boxes: Mailbox[Any], after: float = 0.0) -> None:
        self._receive = receive
        self._boxes = boxes
        self._after = after
        self._timer: asyncio.TimerHandle | None = None
        self._watcher: asyncio.Task[None] | None = None
        self.gone = asyncio.Event()

    async def __aenter__(self) -> asyncio.Event:
        if self._after > 0:
            self._timer = asyncio.get_running_loop().call_later(self._after, self._start)
        else:
            self._start()
        return self.gone

    async def __aexit__(self, *exc_info: object) -> None:
        if self._timer is not None:
            self._timer.cancel()
        watcher = self._watcher
        if watcher is not None:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher

    def _start(self) -> None:
        self._watcher = asyncio.get_running_loop().create_task(self._watch())

    async def _watch(self) -> None:
        while (await self._receive())["type"] != "http.disconnect":
            pass
        self.gone.set()
        for box in self._boxes:
            box.put(CLIENT_LEFT)


async def next_item(box: Mailbox[T], gone: asyncio.Event, timeout: float | None = None) -> T | NoItem:
    """The next item of ``box`` (watched with ``watching``): ``CLIENT_LEFT`` if the client left,
    ``TIMED_OUT`` if ``timeout`` passed first."""
    if gone.is_set():
        return CLIENT_LEFT
    return await box.get(timeout)
