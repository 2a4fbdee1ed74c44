"""``async for event in client.listen(...)``: what the server says changed, in either era.

The stateless era (2026-07-28 subscriptions.mdx) hears of changes on a ``subscriptions/listen``
request whose answer is a stream. ``listen`` sends it, waits for its acknowledgment (then
``acknowledged`` holds what the server agreed to) and yields what arrives tagged with that
request's id. A stream that ends with a result was closed by the server on purpose: the loop
ends. One that breaks (cut, or ended without an answer) is opened again by itself, with
backoff and jitter, and yields ``Resubscribed`` once acknowledged anew: changes went unheard.

The handshake era has no listen request: a server that declares ``listChanged`` sends its
``list_changed`` notifications to every session, and ``resources/subscribe`` asks for one
resource's ``notifications/resources/updated``. ``listen`` sends ``resources/subscribe`` for
each URI (once however many listeners watch it; ``resources/unsubscribe`` when the last one
stops), and yields what it asked for. Resuming a broken stream is the HTTP transport's work
there (``GET`` with ``Last-Event-ID``); the server keeps the session's subscriptions.

``client.notifications(*methods)`` and ``client.log_messages()`` subscribe to nothing: they
yield what arrives anyway. Every iterator ends by raising ``ConnectionClosed`` when the
connection does. Use each as ``async with client.listen(uri) as events: async for event in
events`` (entering returns once the server acknowledged, so a change made afterwards is
heard); a bare ``async for`` works too, and stops listening when the loop is left.
"""

from __future__ import annotations

__all__ = ["Listeners", "Listening", "LogStream", "NotificationStream", "listen", "log_messages", "notifications"]

import asyncio
import contextlib
import random
from collections import Counter
from collections.abc import AsyncIterator, Iterable
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ..protocol.events import NotificationReceived, RequestId
from ..types import meta as M
from ..types.errors import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, ConnectionClosed, MCPError, RequestTimeout
from ..types.ids import is_request_id
from .cache import cache_groups_dropped_by
from .events import EventFeed, ListChanged, ListenEvent, LogMessage, ResourceUpdated, Resubscribed, event_of

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from .client import Client

E = TypeVar("E")
S = TypeVar("S", bound="_Stream[Any]")
#: Errors that say the server will not serve this listen at all: asking again would not help.
_REFUSALS = frozenset((METHOD_NOT_FOUND, INVALID_PARAMS, INVALID_REQUEST))
_MAX_BACKOFF = 30.0
_FILTERS = (("toolsListChanged", "tools"), ("promptsListChanged", "prompts"), ("resourcesListChanged", "resources"))


class _Stream(Generic[E]):
    """An ``async for`` over what the server sends; an async context manager too."""

    def __init__(self, listeners: Listeners, feed: EventFeed[E]) -> None:
        self._listeners = listeners
        self.feed = feed
        self._started = False

    @property
    def dropped(self) -> int:
        """Events lost because the consumer fell more than the feed's limit behind."""
        return self.feed.dropped

    async def __aenter__(self: S) -> S:
        await self.start()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    def __aiter__(self) -> AsyncIterator[E]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[E]:
        owned = not self._started  # a bare ``async for``: leaving the loop stops it
        try:
            if owned:
                await self.start()
            while (event := await self.feed.next()) is not None:
                yield event
        finally:
            if owned:
                await self.aclose()

    async def start(self) -> None:
        if not self._started:
            self._started = True
            self._listeners.opened(self)

    async def aclose(self) -> None:
        """Stop; events not yet taken are dropped."""
        self._listeners.closed(self)
        self.feed.end()

    def offer(self, method: str, params: dict[str, Any], subscription: RequestId | None) -> None:
        """A notification arrived: queue it when this stream wants it."""


class NotificationStream(_Stream[NotificationReceived]):
    """``client.notifications(...)``: what arrives, unasked (only ``methods``, when named)."""

    def __init__(self, listeners: Listeners, methods: Iterable[str]) -> None:
        super().__init__(listeners, EventFeed())
        self._methods = frozenset(methods)

    def offer(self, method: str, params: dict[str, Any], subscription: RequestId | None) -> None:
        if not self._methods or method in self._methods:
            self.feed.put(NotificationReceived(method=method, params=params))


class LogStream(_Stream[LogMessage]):
    """``client.log_messages()``: the server's log messages, well formed ones only."""

    def __init__(self, listeners: Listeners) -> None:
        super().__init__(listeners, EventFeed())

    def offer(self, method: str, params: dict[str, Any], subscription: RequestId | None) -> None:
        if method == "notifications/message" and isinstance(event := event_of(method, params), LogMessage):
            self.feed.put(event)


class Listening(_Stream[ListenEvent]):
    """One ``client.listen(...)``: its filter, what the server acknowledged, its events."""

    def __init__(self, listeners: Listeners, client: Client, requested: dict[str, Any]) -> None:
        super().__init__(listeners, EventFeed(coalesce=True))
        self._client = client
        #: The ``notifications`` filter asked for (the spec's field names).
        self.requested = requested
        #: What the server agreed to send, set once ``start`` returns. Stateless era: its acknowledgment
        #: (nothing else comes). Handshake era: what its capabilities declare (a list change it sends
        #: without declaring ``listChanged`` is passed on all the same).
        self.acknowledged: dict[str, Any] | None = None
        self._uris = tuple(requested.get("resourceSubscriptions", ()))
        self._stateless = False
        self._subscribed: tuple[str, ...] = ()
        self._request_id: RequestId | None = None
        self._ack: asyncio.Future[None] | None = None
        self._runner: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Subscribe; returns once the server has acknowledged. Raises what refused it."""
        if self._started:
            return
        await super().start()
        self._stateless = self._client.era == "stateless"
        try:
            if self._stateless:
                await self._start_stateless()
            else:
                await self._start_handshake()
        except BaseException:
            await self.aclose()
            raise

    async def aclose(self) -> None:
        if self._runner is not None:
            self._runner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._runner
        if self._subscribed:
            subscribed, self._subscribed = self._subscribed, ()
            await self._listeners.unsubscribe(subscribed)
        await super().aclose()

    def offer(self, method: str, params: dict[str, Any], subscription: RequestId | None) -> None:
        if self._stateless:  # only what carries our listen request's id is ours
            if self._request_id is None or subscription != self._request_id:
                return
            if method == "notifications/subscriptions/acknowledged":
                granted = params.get("notifications")
                self.acknowledged = granted if isinstance(granted, dict) else {}
                if self._ack is not None and not self._ack.done():
                    self._ack.set_result(None)
                return
        event = event_of(method, params)
        if isinstance(event, ListChanged):
            if self.requested.get(f"{event.kind}ListChanged") is True:
                self.feed.put(event)
        elif isinstance(event, ResourceUpdated) and (self._stateless or self._watches(event.uri)):
            self.feed.put(event)

    def _watches(self, uri: str) -> bool:
        # A server may name a part of a watched resource (resources.mdx): ``file:///dir`` covers ``file:///dir/a``.
        return any(uri == watched or uri.startswith(watched.rstrip("/") + "/") for watched in self._uris)

    # -- stateless era -------------------------------------------------------------------------------

    async def _start_stateless(self) -> None:
        first: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._runner = asyncio.get_running_loop().create_task(self._keep_listening(first))
        wait = self._client.request_timeout
        try:
            async with asyncio.timeout(wait):
                await first
        except TimeoutError:
            raise RequestTimeout(f"subscriptions/listen was not acknowledged within {wait:.3g} s") from None

    async def _keep_listening(self, first: asyncio.Future[None]) -> None:
        """Send ``subscriptions/listen``; again after each break, until the server closes it or refuses."""
        retries, backoff = self._client.options.retries.listen_retries, self._client.options.retries.listen_backoff
        attempts = 0  # consecutive tries that the server did not acknowledge
        while True:
            failure = await self._listen_once(first, attempts)
            if failure is None:
                self.feed.end()  # the server answered: it closed the subscription on purpose
                if not first.done():
                    first.set_result(None)
                return
            attempts = 0 if self._ack is not None and self._ack.done() else attempts
            attempts += 1
            refused = isinstance(failure, ConnectionClosed) or failure.code in _REFUSALS
            if not first.done() or refused or attempts > retries:
                if first.done():
                    self.feed.end(failure)
                else:
                    first.set_exception(failure)
                return
            await asyncio.sleep(min(backoff * 2 ** (attempts - 1), _MAX_BACKOFF) * random.uniform(0.5, 1.0))

    async def _listen_once(self, first: asyncio.Future[None], attempts: int) -> MCPError | None:
        """One listen request until it ends: None when answered, else the error that broke it."""
        self._ack = asyncio.get_running_loop().create_future()
        request = asyncio.get_running_loop().create_task(
            self._client.connection.request(
                "subscriptions/listen", {"notifications": self.requested}, timeout=None, sent=self._sent
            )
        )
        try:
            await asyncio.wait((request, self._ack), return_when=asyncio.FIRST_COMPLETED)
            if self._ack.done():
                if attempts:  # again after a break: changes in between went unheard
                    await self._client.cache.drop(self._covered())
                    self.feed.put(Resubscribed(attempts))
                if not first.done():
                    first.set_result(None)
            await request
        except MCPError as exc:
            return exc
        finally:
            self._request_id = None
            if not request.done():  # we stop listening: cancelled on the wire before ``aclose`` returns
                request.cancel()
                with contextlib.suppress(asyncio.CancelledError, MCPError):
                    await request
        return None

    def _sent(self, request_id: RequestId) -> None:
        self._request_id = request_id

    def _covered(self) -> tuple[tuple[str, str | None], ...]:
        """The cache groups this listen would have dropped, had it heard everything."""
        groups: list[tuple[str, str | None]] = []
        for key, kind in _FILTERS:
            if self.requested.get(key) is True:
                groups += cache_groups_dropped_by(f"notifications/{kind}/list_changed", {})
        groups += [("resources/read", uri) for uri in self._uris]
        return tuple(groups)

    # -- handshake era -------------------------------------------------------------------------------

    async def _start_handshake(self) -> None:
        capabilities = self._client.server_capabilities or {}
        acknowledged: dict[str, Any] = {
            key: True
            for key, feature in _FILTERS
            if self.requested.get(key) is True and _declares(capabilities, feature, "listChanged")
        }
        if self._uris and _declares(capabilities, "resources", "subscribe"):
            await self._listeners.subscribe(self._uris)
            self._subscribed = self._uris
            acknowledged["resourceSubscriptions"] = list(self._uris)
        self.acknowledged = acknowledged


class Listeners:
    """The client's open iterators, and the cache entries notifications make stale.

    ``Client.handle_notification`` hands every notification to ``received``: the cache is
    dropped first, then each open iterator takes what it wants, so a consumer that hears of a
    change and lists again never gets the stale copy.
    """

    def __init__(self, client: Client) -> None:
        self._client = client
        self._open: dict[_Stream[Any], None] = {}  # in opening order
        self._watched: Counter[str] = Counter()  # handshake era: listeners per subscribed URI
        self._watchdog: asyncio.Task[None] | None = None
        self._behind: asyncio.Future[None] | None = None  # the last delivery still waiting on the cache

    def received(self, method: str, params: dict[str, Any]) -> Awaitable[None] | None:
        """Act on a notification; an awaitable when the cache must be dropped first (run it)."""
        groups = cache_groups_dropped_by(method, params) if self._client.cache.store is not None else ()
        if not groups and self._behind is None:
            if self._open:
                self._deliver(method, params)
            return None
        return self._in_order(groups, method, params)

    async def _in_order(self, groups: tuple[tuple[str, str | None], ...], method: str, params: dict[str, Any]) -> None:
        """Drop ``groups``, then deliver: after every notification that came before (a store may be slow)."""
        ahead, self._behind = self._behind, asyncio.get_running_loop().create_future()
        mine = self._behind
        try:
            if ahead is not None:
                await ahead
            await self._client.cache.drop(groups)
            self._deliver(method, params)
        finally:
            mine.set_result(None)
            if self._behind is mine:
                self._behind = None

    def _deliver(self, method: str, params: dict[str, Any]) -> None:
        meta = params.get("_meta")
        subscription = meta.get(M.SUBSCRIPTION_ID) if isinstance(meta, dict) else None
        for stream in list(self._open):
            stream.offer(method, params, subscription if is_request_id(subscription) else None)

    def opened(self, stream: _Stream[Any]) -> None:
        self._open[stream] = None
        if self._client.connection.closed.is_set():
            stream.feed.end(ConnectionClosed("Connection closed: the connection had ended before listening"))
        if self._watchdog is None:
            self._watchdog = asyncio.get_running_loop().create_task(self._end_all_when_closed())

    def closed(self, stream: _Stream[Any]) -> None:
        self._open.pop(stream, None)

    async def _end_all_when_closed(self) -> None:
        await self._client.connection.closed.wait()
        for stream in list(self._open):
            stream.feed.end(ConnectionClosed("Connection closed: the connection ended while listening"))

    async def subscribe(self, uris: Iterable[str]) -> None:
        """Handshake era: ``resources/subscribe`` each URI nobody watches yet; all or none."""
        done: list[str] = []
        try:
            for uri in uris:
                if not self._watched[uri]:
                    await self._client.request("resources/subscribe", {"uri": uri})
                self._watched[uri] += 1
                done.append(uri)
        except BaseException:
            await self.unsubscribe(done)
            raise

    async def unsubscribe(self, uris: Iterable[str]) -> None:
        """Handshake era: ``resources/unsubscribe`` each URI its last listener left (best effort)."""
        for uri in uris:
            self._watched[uri] -= 1
            if self._watched[uri] <= 0:
                del self._watched[uri]
                if not self._client.connection.closed.is_set():
                    with contextlib.suppress(MCPError):
                        await self._client.request("resources/unsubscribe", {"uri": uri})


def listen(
    client: Client, *uris: str, tools: bool = False, prompts: bool = False, resources: bool = False
) -> Listening:
    """Hear what changes: each resource in ``uris``, and the lists of ``tools``, ``prompts`` and
    ``resources`` when True. Yields ``ResourceUpdated``, ``ListChanged`` and, after a broken
    stream was opened again, ``Resubscribed``; see the module docstring for both eras::

        async with client.listen("file:///config.json", tools=True) as events:
            async for event in events:
                ...
    """
    wanted = {"toolsListChanged": tools, "promptsListChanged": prompts, "resourcesListChanged": resources}
    requested: dict[str, Any] = {key: True for key, on in wanted.items() if on}
    if uris:
        requested["resourceSubscriptions"] = list(uris)
    if not requested:
        raise ValueError("listen to something: give resource URIs, or tools=, prompts= or resources=True")
    return Listening(client.listeners, client, requested)


def notifications(client: Client, *methods: str) -> NotificationStream:
    """Every notification the server sends from now on (only ``methods``, when named), as
    ``NotificationReceived``; it subscribes to nothing (see ``listen`` for that)."""
    return NotificationStream(client.listeners, methods)


def log_messages(client: Client) -> LogStream:
    """The server's log messages from now on, as ``LogMessage`` (``set_logging_level`` says which)."""
    return LogStream(client.listeners)


def _declares(capabilities: dict[str, Any], feature: str, flag: str) -> bool:
    declared = capabilities.get(feature)
    return isinstance(declared, dict) and declared.get(flag) is True
