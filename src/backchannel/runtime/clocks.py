"""The clocks of our requests in flight: each one's deadline, pushed out by progress when
asked, and stopped while a person answers the peer (``Connection.timeouts_paused``)."""

from __future__ import annotations

__all__ = ["ProgressCallback", "RequestClocks", "extending"]

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator

from ..protocol.events import ProgressReceived, RequestId

ProgressCallback = Callable[[ProgressReceived], Awaitable[None] | None]


class RequestClocks:
    """The deadline scope of each of our requests that has a timeout; ``forget`` it when the wait ends."""

    def __init__(self) -> None:
        self._deadlines: dict[RequestId, asyncio.Timeout] = {}
        self._paused_left: dict[RequestId, float] = {}
        self._pauses = 0

    def track(self, request_id: RequestId, scope: asyncio.Timeout) -> None:
        self._deadlines[request_id] = scope

    def forget(self, request_id: RequestId) -> None:
        self._deadlines.pop(request_id, None)
        self._paused_left.pop(request_id, None)

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Stop every clock while the block runs; each resumes with what it had left.

        A tool call that asks the user a question must not time out because the user
        took a while: the time spent inside this block does not count against any
        request's timeout (the clocks resume with what they had left).
        """
        loop = asyncio.get_running_loop()
        if self._pauses == 0:
            now = loop.time()
            for request_id, scope in self._deadlines.items():
                when = scope.when()
                if when is not None:
                    self._paused_left[request_id] = max(0.0, when - now)
                    scope.reschedule(None)
        self._pauses += 1
        try:
            yield
        finally:
            self._pauses -= 1
            if self._pauses == 0:
                now = loop.time()
                for request_id, left in self._paused_left.items():
                    paused = self._deadlines.get(request_id)
                    if paused is not None:
                        paused.reschedule(now + left)
                self._paused_left.clear()


def extending(
    callback: ProgressCallback | None, scope: asyncio.Timeout, extend_by: float | None, hard_deadline: float | None
) -> ProgressCallback:
    """A progress callback that first pushes the request's deadline out (bounded by ``hard_deadline``)."""

    def on_progress(event: ProgressReceived) -> Awaitable[None] | None:
        if extend_by is not None and scope.when() is not None:
            deadline = asyncio.get_running_loop().time() + extend_by
            if hard_deadline is not None:
                deadline = min(deadline, hard_deadline)
            scope.reschedule(deadline)
        return callback(event) if callback is not None else None

    return on_progress
