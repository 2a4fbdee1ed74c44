"""The two implementations of ``SharedState`` behind one face, for the contract tests.

A ``Backend`` makes workers of one fleet (``new()``: several ``MemoryState`` on one
``MemoryHub``, or several ``RedisState`` on one Redis) and lets time pass: the memory
fleet runs on a ``FakeClock`` that moves at once, Redis measures TTLs itself, so there
time passes for real (short TTLs keep it brief).
"""

from __future__ import annotations

__all__ = ["Backend", "Inbox", "MemoryBackend", "RedisBackend"]

import asyncio
from typing import Any

from backchannel.state import MemoryHub, MemoryState, RedisState, SharedState
from backchannel.testing import FakeClock

#: Short enough that the liveness tests are quick, long enough for a loaded 2-core machine.
HEARTBEAT = 0.2
LEASE = 0.8


class Backend:
    kind: str

    def new(self, **options: Any) -> SharedState:
        raise NotImplementedError

    async def pass_time(self, seconds: float) -> None:
        raise NotImplementedError


class MemoryBackend(Backend):
    kind = "memory"

    def __init__(self) -> None:
        self.clock = FakeClock()
        self.hub = MemoryHub(clock=self.clock)

    def new(self, **options: Any) -> SharedState:
        return MemoryState(self.hub, **options)

    async def pass_time(self, seconds: float) -> None:
        self.clock.advance(seconds)


class RedisBackend(Backend):
    kind = "redis"

    def __init__(self, url: str) -> None:
        self.url = url

    def new(self, **options: Any) -> SharedState:
        return RedisState(self.url, **{"heartbeat": HEARTBEAT, "lease": LEASE, **options})

    async def pass_time(self, seconds: float) -> None:
        await asyncio.sleep(seconds)  # Redis keeps the TTLs on its own clock


class Inbox:
    """A listener that keeps what it is given; ``wait_for(n)`` waits (bounded) until it holds n."""

    def __init__(self) -> None:
        self.messages: list[bytes] = []
        self._grew = asyncio.Event()

    def __call__(self, message: bytes) -> None:
        asyncio.get_running_loop()  # raises unless delivery happens on the event loop
        self.messages.append(message)
        self._grew.set()

    async def wait_for(self, count: int, timeout: float = 3.0) -> list[bytes]:
        async with asyncio.timeout(timeout):
            while len(self.messages) < count:
                self._grew.clear()
                await self._grew.wait()
        return self.messages
