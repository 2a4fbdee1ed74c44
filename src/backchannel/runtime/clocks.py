"""The clocks of our requests in flight: each one's deadline, pushed out by progress when
asked, and stopped while a person answers the peer (``Connection.timeouts_paused``).

All the deadlines of one connection share one loop timer, set for the earliest. Most
requests are answered long before their deadline, so a request with a timeout costs a
dict entry, not a timer made and cancelled: the timer is moved only for a deadline earlier
than the one it is set for, and when it fires for a request already answered it is set
again for the earliest one left (or for none).
"""

from __future__ import annotations

__all__ = ["TIMED_OUT", "ProgressCallback", "RequestClocks", "extending"]

import asyncio
import contextlib
import contextvars
import math
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from ..protocol.events import ProgressReceived, RequestId

ProgressCallback = Callable[[ProgressReceived], Awaitable[None] | None]

#: What a request's waiter is settled with when its deadline passes (compared by identity).
TIMED_OUT: dict[str, Any] = {}

# A deadline this close counts as reached: uvloop's timers have millisecond resolution and
# may fire that much before the time they were set for.
_RESOLUTION = 0.001


class RequestClocks:
    """The deadline of each of our requests that has one; ``forget`` it when the wait ends.

    ``track(request_id, deadline, waiter)``: when the deadline passes first, the waiter is
    settled with ``TIMED_OUT`` (an answer that came first wins)."""

    def __init__(self) -> None:
        self._deadlines: dict[RequestId, tuple[float | None, asyncio.Future[Any]]] = {}
        self._paused_left: dict[RequestId, float] = {}
        self._pauses = 0
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = math.inf

    def track(self, request_id: RequestId, deadline: float, waiter: asyncio.Future[Any]) -> None:
        self._deadlines[request_id] = (deadline, waiter)
        if deadline < self._timer_at:
            self._set_timer(deadline)

    def forget(self, request_id: RequestId) -> None:
        # The timer stays: moving it costs more than letting it fire once for nothing (also
        # after the connection closed: it then finds nothing to do and is not set again).
        self._deadlines.pop(request_id, None)
        if self._paused_left:
            self._paused_left.pop(request_id, None)

    def deadline(self, request_id: RequestId) -> float | None:
        """When ``request_id`` times out; None when it has no clock or its clock is paused."""
        entry = self._deadlines.get(request_id)
        return entry[0] if entry is not None else None

    def reschedule(self, request_id: RequestId, deadline: float) -> None:
        """Move a tracked request's deadline (progress pushing it out)."""
        entry = self._deadlines.get(request_id)
        if entry is not None:
            self.track(request_id, deadline, entry[1])

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
            deadlines = self._deadlines
            for request_id, (when, waiter) in deadlines.items():
                if when is not None:
                    self._paused_left[request_id] = max(0.0, when - now)
                    deadlines[request_id] = (None, waiter)
        self._pauses += 1
        try:
            yield
        finally:
            self._pauses -= 1
            if self._pauses == 0:
                now = loop.time()
                for request_id, left in self._paused_left.items():
                    self.reschedule(request_id, now + left)
                self._paused_left.clear()

    def _set_timer(self, when: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        # In an empty context, not the caller's: a timer holds its context until it fires, and
        # the caller is often a handler whose context holds its ``Context`` (and through it the
        # connection). A session ended while its tool waited 10 minutes on ``ctx.elicit`` stayed
        # in memory that long.
        self._timer = asyncio.get_running_loop().call_at(when, self._expire, context=contextvars.Context())
        self._timer_at = when

    def _expire(self) -> None:
        """The timer fired: settle every waiter whose deadline has passed, then set the
        timer for the earliest deadline left."""
        self._timer = None
        self._timer_at = math.inf
        due = asyncio.get_running_loop().time() + _RESOLUTION
        earliest = math.inf
        expired = []
        for when, waiter in self._deadlines.values():
            if when is None:
                continue  # paused
            if when <= due:
                expired.append(waiter)
            elif when < earliest:
                earliest = when
        for waiter in expired:
            if not waiter.done():
                waiter.set_result(TIMED_OUT)
        if earliest != math.inf:
            self._set_timer(earliest)


def extending(
    callback: ProgressCallback | None,
    clocks: RequestClocks,
    request_id: RequestId,
    extend_by: float | None,
    hard_deadline: float | None,
) -> ProgressCallback:
    """A progress callback that first pushes the request's deadline out (bounded by ``hard_deadline``)."""

    def on_progress(event: ProgressReceived) -> Awaitable[None] | None:
        if extend_by is not None and clocks.deadline(request_id) is not None:
            deadline = asyncio.get_running_loop().time() + extend_by
            if hard_deadline is not None:
                deadline = min(deadline, hard_deadline)
            clocks.reschedule(request_id, deadline)
        return callback(event) if callback is not None else None

    return on_progress
