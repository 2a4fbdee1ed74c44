"""A token bucket: at most ``rate`` events a second on average, bursts up to ``burst``.

Used for log messages on both sides: the spec says to rate-limit them, and a
client must survive a server that floods. Refused events are counted so the
loss can be reported rather than hidden.
"""

from __future__ import annotations

__all__ = ["TokenBucket"]

import time
from collections.abc import Callable


class TokenBucket:
    def __init__(self, rate: float, burst: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("rate must be positive and burst at least 1")
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._tokens = burst
        self._stamp = clock()
        #: Events refused since the last call to ``take_dropped``.
        self.dropped = 0

    def allow(self) -> bool:
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._stamp) * self.rate)
        self._stamp = now
        if self._tokens >= 1:
            self._tokens -= 1
            return True
        self.dropped += 1
        return False

    def take_dropped(self) -> int:
        dropped, self.dropped = self.dropped, 0
        return dropped
