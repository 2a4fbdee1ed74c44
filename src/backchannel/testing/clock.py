"""A clock that moves only when the test says so.

Hand ``FakeClock()`` to whatever takes a ``clock`` (``Server(clock=...)``,
``MemoryStore(clock=...)``, ``StateSealer(clock=...)``, ``TokenBucket(clock=...)``),
then ``advance`` it past a TTL or an idle timeout instead of sleeping.
"""

from __future__ import annotations

__all__ = ["FakeClock"]


class FakeClock:
    """Call it for the current fake time in seconds; ``advance(seconds)`` moves it on.

    It starts at ``start`` (not zero by default, so code that treats 0 as "unset"
    shows its bug) and never moves by itself: expiry happens exactly when a test
    advances past it, so a test that waits out a TTL takes no time at all.
    """

    __slots__ = ("_now",)

    def __init__(self, start: float = 1_000.0) -> None:
        self._now = float(start)

    def __call__(self) -> float:
        return self._now

    def advance(self, seconds: float) -> float:
        """Move time forward by ``seconds``; the new time. Time never goes back."""
        if seconds < 0:
            raise ValueError(f"a clock cannot go back ({seconds!r} seconds)")
        self._now += seconds
        return self._now

    def __repr__(self) -> str:
        return f"FakeClock({self._now!r})"
