"""Speaking first: our requests to the peer (timeouts, progress, cancellation) and our notifications.

``Requesting`` is the half of ``Connection`` that sends: ``request`` waits for the
peer's answer on a future that the read loop settles, and cancels the request on the
wire when the wait ends early. ``Connection`` is where to use it.
"""

from __future__ import annotations

__all__ = ["Requesting"]

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from ..protocol.events import RequestId
from ..types import meta as M
from ..types.errors import ConnectionClosed, RequestTimeout
from .clocks import ProgressCallback, extending
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

        A task-augmented request answered with a task (2025-11-25) keeps ``on_progress`` after it
        returns: the task's progress comes on the same token until ``release_task_progress``.
        """
        if self.closed.is_set():
            raise ConnectionClosed(f"Connection closed: {self._close_reason}")
        if on_progress is not None or progress_resets_timeout:
            params = dict(params or {})
            params["_meta"] = {**params.get("_meta", {}), M.PROGRESS_TOKEN: next(self._tokens)}
        request_id = self.session.send_request(method, params, stateless_version=stateless_version)
        if sent is not None:
            sent(request_id)
        if self._routes:
            self._route(related)
        waiter: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiters[request_id] = waiter
        self._flush()
        loop = asyncio.get_running_loop()
        started = loop.time()
        hard_deadline = started + max_timeout if max_timeout is not None else None
        try:
            if timeout is None and hard_deadline is None:
                if on_progress is not None:
                    self._progress[request_id] = on_progress
                return await waiter
            first = started + timeout if timeout is not None else hard_deadline
            if hard_deadline is not None and first is not None:
                first = min(first, hard_deadline)
            try:
                async with asyncio.timeout_at(first) as scope:
                    self._clocks.track(request_id, scope)
                    if on_progress is not None or progress_resets_timeout:
                        self._progress[request_id] = extending(
                            on_progress, scope, timeout if progress_resets_timeout else None, hard_deadline
                        )
                    return await waiter
            except TimeoutError:
                waited = timeout if timeout is not None and not progress_resets_timeout else loop.time() - started
                raise RequestTimeout(f"{method} got no answer within {waited:.3g} s; it was cancelled") from None
        except (asyncio.CancelledError, RequestTimeout):
            # The waiter itself is cancelled along with the wait, so ask the session, not the
            # waiter, whether an answer came: ``cancel`` is a no-op (None) once one did.
            if (
                method != "initialize"
                and not self.closed.is_set()
                and self.session.cancel(request_id, "the caller stopped waiting") is not None
            ):
                if self._routes:
                    self._route(related)
                self._flush()
            raise
        finally:
            self._waiters.pop(request_id, None)
            task_id = self.session.task_created_by(request_id)
            if on_progress is not None and task_id is not None:
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
