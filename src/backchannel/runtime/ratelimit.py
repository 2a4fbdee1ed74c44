"""A token bucket: at most ``rate`` events a second on average, bursts up to ``burst``.

Used for log messages on both sides (the spec says to rate-limit them, and a client
must survive a server that floods) and for ``completion/complete`` on the server, one
bucket per caller (``KeyedBuckets``). Refused events are counted so the loss can be
reported rather than hidden.
"""

from __future__ import annotations

__all__ = ["KeyedBuckets", "TokenBucket"]

import time
from collections.abc import Callable, Hashable


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

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._stamp) * self.rate)
        self._stamp = now

    def allow(self) -> bool:
        self._refill()
        if self._tokens >= 1:
            self._tokens -= 1
            return True
        self.dropped += 1
        return False

    def retry_after(self) -> float:
        """Seconds until ``allow`` would next say yes (0.0 when it would now)."""
        self._refill()
        return max(0.0, (1 - self._tokens) / self.rate)

    def rested(self) -> bool:
        """Full again: no different from a new bucket, so a keeper of many may forget it."""
        self._refill()
        return self._tokens >= self.burst

    def take_dropped(self) -> int:
        dropped, self.dropped = self.dropped, 0
        return dropped


class KeyedBuckets:
    """One ``TokenBucket`` per key (a connection, a principal), made on first use.

    A bucket that has filled up again is forgotten the next time the table grows past
    twice what it held after the last sweep, so keys that stop sending (closed
    connections, callers gone quiet) cost nothing for long: the table holds the keys
    active in the last ``burst / rate`` seconds, and at most twice that.
    """

    _FIRST_SWEEP = 64

    def __init__(self, rate: float, burst: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        TokenBucket(rate, burst, clock=clock)  # the same checks, made once here rather than on first use
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._buckets: dict[Hashable, TokenBucket] = {}
        self._sweep_at = self._FIRST_SWEEP

    def __len__(self) -> int:
        return len(self._buckets)

    def bucket(self, key: Hashable) -> TokenBucket:
        """``key``'s bucket (a new, full one for a key not seen or forgotten)."""
        found = self._buckets.get(key)
        if found is None:
            if len(self._buckets) >= self._sweep_at:
                self._sweep()
            found = self._buckets[key] = TokenBucket(self.rate, self.burst, clock=self._clock)
        return found

    def allow(self, key: Hashable) -> bool:
        return self.bucket(key).allow()

    def _sweep(self) -> None:
        for key in [key for key, bucket in self._buckets.items() if bucket.rested()]:
            del self._buckets[key]
        self._sweep_at = max(self._FIRST_SWEEP, 2 * len(self._buckets))
