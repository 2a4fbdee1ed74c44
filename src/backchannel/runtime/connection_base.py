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
import inspect
import itertools
import logging
from collections.abc import Awaitable
from typing import Any

from ..protocol.events import Outgoing, ProgressReceived, RequestId
from ..protocol.session import Session
from ..transports.base import Transport
from ..types.errors import ConnectionClosed
from .clocks import ProgressCallback, RequestClocks

logger = logging.getLogger("backchannel")


class ConnectionBase:
    """The records and the output of a ``Connection``; use ``Connection``."""

    def __init__(self, session: Session, transport: Transport) -> None:
        self.session = session
        self.transport = transport
        self.closed = asyncio.Event()
        self._tasks: dict[RequestId, asyncio.Task[None]] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self._waiters: dict[RequestId, asyncio.Future[dict[str, Any]]] = {}
        self._progress: dict[RequestId, ProgressCallback] = {}
        #: Tasks whose progress still reaches ``_progress`` (2025-11-25): task id -> request id.
        self._task_progress: dict[str, RequestId] = {}
        self._clocks = RequestClocks()
        self._tokens = itertools.count(1)
        self._flush_scheduled = False
        self._close_reason = "connection closed"
        #: Whether the transport sends each message on its request's response (HTTP).
        self._routes = transport.routes_by_request
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
            if routed and not self.closed.is_set():
                try:
                    self.transport.write_routed(routed)
                except ConnectionClosed as exc:
                    logger.debug("dropping %d outgoing messages: %s", len(routed), exc)
            return
        items = self.session.outgoing()
        if items and not self.closed.is_set():
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

    @property
    def active_handlers(self) -> int:
        return len(self._tasks)

    @property
    def pending_requests(self) -> int:
        return len(self._waiters)

    def _spawn(self, coroutine: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background_done)

    def _background_done(self, task: asyncio.Task[Any]) -> None:
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
