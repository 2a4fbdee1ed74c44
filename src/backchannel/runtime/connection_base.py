"""What a connection holds, and how its output leaves: shared by serving and requesting.

``ConnectionBase`` keeps the records of one ``Connection`` (its session, transport,
handler tasks, waiters) and writes what the session queued. Most transports take the
messages as they come (``write``). A transport that ``routes_by_request`` (HTTP) sends
each one on the response of the peer's request it belongs to: the session does not
know which that is, but the runtime does at each command it gives, so it takes what
that one command queued and tags it there (``_route``), and ``_flush`` hands the
tagged messages to ``write_routed``. On the other transports none of this runs.
"""

from __future__ import annotations

__all__ = ["ConnectionBase"]

import asyncio
import contextvars
import inspect
import itertools
import logging
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, cast

from ..protocol.events import Outgoing, ProgressReceived, RequestId
from ..protocol.session import Session
from ..telemetry import conventions as telemetry_names
from ..telemetry import spans
from ..transports.base import LazyEvent, RoutedTransport, Transport
from ..types.errors import ConnectionClosed, MCPError
from .clocks import ProgressCallback, RequestClocks

if TYPE_CHECKING:
    from ..telemetry.spans import Operation

logger = logging.getLogger("backchannel")


class ConnectionBase:
    """The records and the output of a ``Connection``; use ``Connection``."""

    #: Set by the host that builds the connection, only when telemetry is on: the attributes every
    #: span and metric of this connection carries (``network.transport``, ``mcp.session.id``,
    #: ``server.address``...; docs/observability.md). Class-level defaults: an idle connection
    #: pays nothing for telemetry unless it is on.
    telemetry_attributes: dict[str, Any] | None = None
    #: Telemetry's records of the requests in flight (the peer's, ours), made when first needed.
    _served_operations: dict[RequestId, Operation] | None = None
    _sent_operations: dict[RequestId, Operation] | None = None
    #: The peer's requests whose progress we sent and whose answer is still to come (made when
    #: first needed: an idle HTTP session pays nothing for it). Such an answer lets the peer
    #: read the progress first (``Connection._let_progress_be_read``).
    _progressed: set[RequestId] | None = None

    def __init__(self, session: Session, transport: Transport) -> None:
        self.session = session
        self.transport = transport
        # Lazy parts (the event's deque, the set): an idle HTTP session keeps a connection for long.
        self.closed: asyncio.Event = LazyEvent()
        #: ``closed.is_set()`` as a plain attribute, for the paths every message takes (set with it).
        self._ended = False
        self._tasks: dict[RequestId, asyncio.Task[None]] = {}
        self._background: set[asyncio.Task[Any]] | None = None
        self._waiters: dict[RequestId, asyncio.Future[dict[str, Any]]] = {}
        self._progress: dict[RequestId, ProgressCallback] = {}
        #: Tasks whose progress still reaches ``_progress`` (2025-11-25): task id -> request id.
        self._task_progress: dict[str, RequestId] = {}
        self._clocks = RequestClocks()
        self._tokens = itertools.count(1)
        self._flush_scheduled = False
        self._close_reason = "connection closed"
        #: Whether the transport sends each message on its request's response (HTTP): a
        #: ``RoutedTransport``, read once here; ``_router`` is that transport, used only then.
        self._routes: bool = getattr(transport, "routes_by_request", False)
        self._router = cast(RoutedTransport, transport)
        #: For such a transport: what waits to be written, each with the peer's request it belongs to.
        self._routed: list[tuple[Outgoing, RequestId | None]] = []

    # ------------------------------------------------------------- output

    def _route(self, related: RequestId | None) -> None:
        """A transport that routes by request: what the last session command queued belongs
        to the peer's request ``related`` (None: to none). Call it after each such command."""
        items = self.session.outgoing()
        if items:
            self._routed.extend([(item, related) for item in items])

    def _route_received(self) -> None:
        """Like ``_route``, after ``receive_message``: what the session queued by itself then
        is an error answering the message read (it belongs to that request, by its id) or
        ``notifications/initialized`` (it belongs to none)."""
        for item in self.session.outgoing():
            answers = type(item) is dict and "method" not in item
            self._routed.append((item, item.get("id") if answers else None))  # type: ignore[union-attr]

    def _flush(self) -> None:
        self._flush_scheduled = False
        if self._routes:
            self._route(None)  # nothing is left untagged, but were it, it would belong to no request
            routed, self._routed = self._routed, []
            if routed and not self._ended:
                try:
                    self._router.write_routed(routed)
                except ConnectionClosed as exc:
                    logger.debug("dropping %d outgoing messages: %s", len(routed), exc)
            return
        items = self.session.outgoing()
        if items and not self._ended:
            try:
                self.transport.write(items)
            except ConnectionClosed as exc:
                logger.debug("dropping %d outgoing messages: %s", len(items), exc)

    def _schedule_flush(self) -> None:
        # Answers finishing in the same loop turn leave in one write.
        if not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)

    # ----------------------------------------------------------- the rest

    async def close(self) -> None:
        """Close the transport; ``run()`` then ends and everything pending fails."""
        self._flush()
        await self.transport.close()

    def shrink(self) -> None:
        """Give back the room of the records emptied since they grew (a dict keeps its table
        when its last entry goes): call it when the connection may stay idle for long, as an
        HTTP session does between requests."""
        for records in (self._tasks, self._waiters, self._progress, self._task_progress):
            if not records:
                records.clear()
        self.session.shrink()

    @property
    def active_handlers(self) -> int:
        return len(self._tasks)

    @property
    def pending_requests(self) -> int:
        return len(self._waiters)

    def _spawn(self, coroutine: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coroutine)
        if self._background is None:
            self._background = set()
        self._background.add(task)
        task.add_done_callback(self._background_done)

    def _background_done(self, task: asyncio.Task[Any]) -> None:
        if self._background is not None:
            self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("notification handler failed", exc_info=task.exception())

    def _run_callback(self, callback: ProgressCallback, event: ProgressReceived) -> None:
        try:
            outcome = callback(event)
        except Exception:
            logger.exception("progress callback failed")
            return
        if inspect.isawaitable(outcome):
            self._spawn(outcome)

    # ------------------------------------------------------------ telemetry
    # Called only when telemetry made an operation for the request (docs/observability.md): the
    # dicts stay None, and these are never reached, on a connection that never saw it on.

    def _serving(self, request_id: RequestId, operation: spans.Operation) -> contextvars.Context | None:
        """Keep the peer's request's operation until it ends; the context to run its handler in."""
        if self._served_operations is None:
            self._served_operations = {}
        self._served_operations[request_id] = operation
        return spans.handler_context(operation)

    def _served_answered(self, request_id: RequestId, result: dict[str, Any] | None, error: MCPError | None) -> None:
        assert self._served_operations is not None
        operation = self._served_operations.pop(request_id, None)
        if operation is not None:
            if error is None:
                spans.finish(operation, result)
            else:
                spans.finish(operation, None, error.code, error.message)

    def _served_unanswered(self, request_id: RequestId) -> None:
        """The handler stopped with no answer: the peer cancelled it, or the connection ended."""
        assert self._served_operations is not None
        operation = self._served_operations.pop(request_id, None)
        if operation is not None:
            if operation.cancelled:
                spans.finish_unanswered(operation, telemetry_names.CANCELLED, operation.cancel_reason)
            else:
                spans.finish_unanswered(operation, telemetry_names.CONNECTION_CLOSED, self._close_reason)

    def _cancel_received(self, request_id: RequestId, reason: str | None) -> None:
        assert self._served_operations is not None
        operation = self._served_operations.get(request_id)
        if operation is not None:
            spans.add_cancelled(operation, reason)

    def _progress_sent(self, request_id: RequestId, progress: float, total: float | None) -> None:
        assert self._served_operations is not None
        operation = self._served_operations.get(request_id)
        if operation is not None:
            spans.add_progress(operation, progress, total)

    def _progress_received(self, event: ProgressReceived) -> None:
        assert self._sent_operations is not None
        operation = self._sent_operations.get(event.request_id)
        if operation is not None:
            spans.add_progress(operation, event.progress, event.total)
