"""Speaking first: our requests to the peer (timeouts, progress, cancellation) and our notifications.

``Requesting`` is the half of ``Connection`` that sends: ``request`` waits for the
peer's answer on a future that the read loop settles, and cancels the request on the
wire when the wait ends early. ``Connection`` is where to use it.
"""

from __future__ import annotations

__all__ = ["Requesting"]

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from ..protocol.events import RequestId
from ..telemetry import conventions as telemetry_names
from ..telemetry.spans import Operation, add_cancelled, finish, finish_unanswered, sent, start_client
from ..types import meta as M
from ..types.errors import ConnectionClosed, MCPError, RequestTimeout
from .clocks import TIMED_OUT, ProgressCallback, extending
from .connection_base import ConnectionBase


class Requesting(ConnectionBase):
    """Our requests and notifications to the peer; part of ``Connection``."""

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        stateless_version: str | None = None,
        related: RequestId | None = None,
        progress_resets_timeout: bool = False,
        max_timeout: float | None = None,
        sent: Callable[[RequestId], None] | None = None,
        timeout_from: Callable[[], Awaitable[object]] | None = None,
    ) -> dict[str, Any]:
        """Send a request and wait for its result.

        Raises ``RequestError`` for an error answer, ``RequestTimeout`` after
        ``timeout`` seconds and ``ConnectionClosed`` when the peer goes away. When
        the wait ends early (timeout or the caller's cancellation), the request is
        cancelled on the wire and a late answer is dropped. ``related`` names the peer's
        request this one serves (a server asking the user mid-tool-call), so HTTP sends it
        on that request's stream. With
        ``progress_resets_timeout``, each progress notification restarts the
        ``timeout`` clock, but never past ``max_timeout`` seconds in all. ``sent`` is told the
        request's id as it is queued (a ``subscriptions/listen`` stream is named by it).
        ``timeout_from`` is awaited once the request is written, and the clock starts when it
        returns (an answer that comes first is taken as usual): a ``Client``'s era probe starts
        it when the server process has read the probe.

        A task-augmented request answered with a task (2025-11-25) keeps ``on_progress`` after it
        returns: the task's progress comes on the same token until ``release_task_progress``.
        """
        if self._ended:
            raise ConnectionClosed(f"Connection closed: {self._close_reason}")
        # With tracing on, ``params`` becomes a copy whose ``_meta`` carries the client span's context.
        operation, params = start_client(method, params, self)
        if on_progress is not None or progress_resets_timeout:
            params = dict(params or {})
            params["_meta"] = {**params.get("_meta", {}), M.PROGRESS_TOKEN: next(self._tokens)}
        try:
            request_id = self.session.send_request(method, params, stateless_version=stateless_version)
        except BaseException as exc:
            if operation is not None:
                finish_unanswered(operation, type(exc).__name__, str(exc))
            raise
        if operation is not None:
            self._sending(request_id, operation, method, params, stateless_version)
        if sent is not None:
            sent(request_id)
        if self._routes:
            self._route(related)
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[dict[str, Any]] = loop.create_future()
        self._waiters[request_id] = waiter
        self._flush()
        try:
            if timeout is None and max_timeout is None:
                if on_progress is not None:
                    self._progress[request_id] = on_progress
                return await waiter
            # No timeout scope of its own: the connection's clocks settle the waiter with
            # ``TIMED_OUT`` when the deadline passes (one loop timer for all, ``clocks.py``).
            if timeout_from is not None:
                await _settled_or_done(waiter, timeout_from())
            started = loop.time()
            hard_deadline = started + max_timeout if max_timeout is not None else None
            first = started + timeout if timeout is not None else hard_deadline
            if hard_deadline is not None and first is not None:
                first = min(first, hard_deadline)
            assert first is not None
            self._clocks.track(request_id, first, waiter)
            if on_progress is not None or progress_resets_timeout:
                self._progress[request_id] = extending(
                    on_progress, self._clocks, request_id, timeout if progress_resets_timeout else None, hard_deadline
                )
            result = await waiter
            if result is TIMED_OUT:
                waited = timeout if timeout is not None and not progress_resets_timeout else loop.time() - started
                raise RequestTimeout(f"{method} got no answer within {waited:.3g} s; it was cancelled")
            return result
        except (asyncio.CancelledError, RequestTimeout) as stopped:
            # The waiter itself is cancelled along with the wait, so ask the session, not the
            # waiter, whether an answer came: ``cancel`` is a no-op (None) once one did.
            cancelled = False
            if (
                method != "initialize"
                and not self._ended
                and self.session.cancel(request_id, "the caller stopped waiting") is not None
            ):
                cancelled = True
                if self._routes:
                    self._route(related)
                self._flush()
            if operation is not None:
                self._sent_stopped(request_id, timed_out=isinstance(stopped, RequestTimeout), cancel_sent=cancelled)
            raise
        finally:
            if operation is not None:
                self._sent_finished(request_id, waiter)
            self._waiters.pop(request_id, None)
            if on_progress is not None and (task_id := self.session.task_created_by(request_id)) is not None:
                self._progress[request_id] = on_progress  # the task's; the clock (and its wrapper) are done
                self._task_progress[task_id] = request_id
            else:
                self._progress.pop(request_id, None)
            self._clocks.forget(request_id)

    def release_task_progress(self, task_id: str) -> None:
        """The task ``task_id`` reached a terminal status, or we stopped following it: forget its
        progress token and callback (later progress is dropped). Safe to call more than once."""
        self.session.release_task_progress(task_id)  # the peer's terminal status may have done it
        request_id = self._task_progress.pop(task_id, None)
        if request_id is not None:
            self._progress.pop(request_id, None)

    def timeouts_paused(self) -> contextlib.AbstractContextManager[None]:
        """Stop the clocks of our pending requests while a person answers the peer.

        A tool call that asks the user a question must not time out because the user
        took a while: the time spent inside this block does not count against any
        request's timeout (the clocks resume with what they had left).
        """
        return self._clocks.paused()

    def notify(self, method: str, params: dict[str, Any] | None = None, *, related: RequestId | None = None) -> None:
        """Send a notification now (it is written before this returns). ``related`` names
        the peer's request it belongs to, so HTTP sends it on that request's stream."""
        self.session.send_notification(method, params)
        if self._routes:
            self._route(related)
        self._flush()

    # ------------------------------------------------------------ telemetry

    def _sending(
        self, request_id: RequestId, operation: Operation, method: str, params: Any, stateless_version: str | None
    ) -> None:
        """Keep our request's operation (progress events find it by id) and name its request."""
        session = self.session
        if method == "initialize":
            version = params.get("protocolVersion") if type(params) is dict else None
        elif stateless_version is not None or session.era == "stateless":
            version = stateless_version or session.stateless_version
        else:
            version = session.protocol_version
        sent(operation, request_id, version if type(version) is str else None)
        if self._sent_operations is None:
            self._sent_operations = {}
        self._sent_operations[request_id] = operation

    def _sent_stopped(self, request_id: RequestId, *, timed_out: bool, cancel_sent: bool) -> None:
        """We stopped waiting: the caller cancelled, or the timeout struck."""
        assert self._sent_operations is not None
        operation = self._sent_operations.pop(request_id, None)
        if operation is not None:
            reason = "the caller stopped waiting"
            if cancel_sent:
                add_cancelled(operation, reason)
            finish_unanswered(operation, telemetry_names.TIMEOUT if timed_out else telemetry_names.CANCELLED, reason)

    def _sent_finished(self, request_id: RequestId, waiter: asyncio.Future[dict[str, Any]]) -> None:
        """Our request's wait is over (unless ``_sent_stopped`` ended it): the answer, or an error."""
        assert self._sent_operations is not None
        operation = self._sent_operations.pop(request_id, None)
        if operation is None:
            return
        if not waiter.done() or waiter.cancelled():
            finish_unanswered(operation, telemetry_names.CANCELLED)
            return
        failure = waiter.exception()
        if failure is None:
            finish(operation, waiter.result(), connection=self)
        elif isinstance(failure, ConnectionClosed):
            finish_unanswered(operation, telemetry_names.CONNECTION_CLOSED, failure.message)
        elif isinstance(failure, MCPError):
            finish(operation, None, failure.code, failure.message)
        else:
            finish_unanswered(operation, type(failure).__name__, str(failure))


async def _settled_or_done(waiter: asyncio.Future[Any], starting: Awaitable[object]) -> None:
    """Wait until ``starting`` is done or ``waiter`` is settled, whichever comes first."""
    start = asyncio.ensure_future(starting)
    try:
        await asyncio.wait((waiter, start), return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not start.done():
            start.cancel()
        elif not start.cancelled():
            start.exception()  # (retrieved: a check that failed ends the wait as its end would)
