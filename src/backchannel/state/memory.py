"""``MemoryState``: the shared state of a fleet of one, kept in this process (the default).

It is today's behaviour with no Redis: keys in a ``MemoryStore``, messages delivered on
the event loop, logs in lists, and a worker is alive from ``start`` to ``aclose``. Several
``MemoryState`` objects built on one ``MemoryHub`` act as several workers of one fleet
(shared keys, channels and logs, a worker id each), so tests of routing between workers
run in one process without sockets; ``hub.kill(worker_id)`` stands for ``kill -9``.
"""

from __future__ import annotations

__all__ = ["MemoryHub", "MemoryState"]

import asyncio
import bisect
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .shared import Listener, SharedState, new_worker_id
from .store import Added, MemoryStore

logger = logging.getLogger("backchannel.state")


@dataclass(slots=True)
class _Log:
    positions: list[int] = field(default_factory=list)
    entries: list[bytes] = field(default_factory=list)
    expires: float = 0.0


class MemoryHub:
    """What the ``MemoryState`` workers of one in-process fleet share.

    ``clock`` drives every TTL (keys and logs): a ``FakeClock`` lets tests pass time
    without sleeping. ``max_keys`` bounds the key-value store (``MemoryStore``)."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic, max_keys: int = 100_000) -> None:
        self.clock = clock
        self.store = MemoryStore(max_keys=max_keys, clock=clock)
        self._members: dict[str, MemoryState] = {}
        self._alive: set[str] = set()
        # channel -> worker id -> that worker's listeners, so a publish counts workers
        self._channels: dict[str, dict[str, list[Listener]]] = {}
        self._logs: dict[str, _Log] = {}
        self._log_waiters: dict[str, list[asyncio.Future[None]]] = {}
        self._logs_after_sweep = 0

    def kill(self, worker_id: str) -> None:
        """Make ``worker_id`` die as a process would under ``kill -9``: not alive from now
        on, its listeners dropped (messages to it reach nobody), nothing cleaned up on its
        behalf. Its keys and logs stay until their TTLs pass, as they would in Redis."""
        member = self._members.pop(worker_id, None)
        if member is not None:
            member._dead = True
        self._alive.discard(worker_id)
        self._drop_listeners(worker_id)

    # ------------------------------------------------------------ for MemoryState

    def _join(self, member: MemoryState) -> str:
        worker_id = new_worker_id()
        while worker_id in self._members:
            worker_id = new_worker_id()
        self._members[worker_id] = member
        return worker_id

    def _drop_listeners(self, worker_id: str) -> None:
        for channel in list(self._channels):
            by_worker = self._channels[channel]
            for listener in by_worker.pop(worker_id, ()):
                listener.active = False
            if not by_worker:
                del self._channels[channel]

    def _live_log(self, name: str, now: float) -> _Log | None:
        log = self._logs.get(name)
        if log is not None and log.expires <= now:
            del self._logs[name]
            return None
        return log

    def _new_log(self, name: str, now: float) -> _Log:
        # Logs nobody reads again would pile up: sweep the expired ones whenever the
        # count has doubled since the last sweep (amortised O(1) per new log).
        if len(self._logs) > 2 * self._logs_after_sweep + 64:
            self._logs = {key: log for key, log in self._logs.items() if log.expires > now}
            self._logs_after_sweep = len(self._logs)
        log = self._logs[name] = _Log()
        return log

    def _wake_readers(self, name: str) -> None:
        for waiter in self._log_waiters.pop(name, ()):
            if not waiter.done():
                waiter.set_result(None)


class MemoryState(SharedState):
    """The in-process ``SharedState``. Alone (``hub=None``) it is a fleet of one with its
    own ``MemoryHub(clock=clock, max_keys=max_keys)``; give several of them one ``hub``
    (which then holds the clock and the bound) to run several workers in one process."""

    def __init__(
        self,
        hub: MemoryHub | None = None,
        *,
        clock: Callable[[], float] | None = None,
        max_keys: int | None = None,
    ) -> None:
        self.spans_workers = hub is not None
        if hub is None:
            hub = MemoryHub(clock=clock or time.monotonic, max_keys=max_keys or 100_000)
        elif clock is not None or max_keys is not None:
            raise ValueError("a shared MemoryHub holds the clock and max_keys: pass them to MemoryHub(...)")
        self.hub = hub
        self.worker_id = hub._join(self)
        self._started = False
        self._closed = False
        self._dead = False  # killed through the hub: it hears nothing any more

    def __repr__(self) -> str:
        return f"MemoryState(worker_id={self.worker_id!r})"

    # ------------------------------------------------------------ keys

    async def get(self, key: str) -> Any:
        return await self.hub.store.get(key)

    async def add(
        self, key: str, value: Any, *, ttl: float, bucket: str | None = None, limit: int | None = None
    ) -> Added:
        return await self.hub.store.add(key, value, ttl=ttl, bucket=bucket, limit=limit)

    async def put(self, key: str, value: Any, *, ttl: float) -> None:
        await self.hub.store.put(key, value, ttl=ttl)

    async def delete(self, key: str) -> None:
        await self.hub.store.delete(key)

    async def claim(self, pool: str, member: str, *, ttl: float, limit: int) -> Added:
        return await self.hub.store.claim(pool, member, ttl=ttl, limit=limit)

    async def release(self, pool: str, member: str) -> None:
        await self.hub.store.release(pool, member)

    async def full(self) -> bool:
        return await self.hub.store.full()

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        if self._closed or self._dead:
            raise RuntimeError(f"worker {self.worker_id} was closed; make a new MemoryState")
        if not self._started:
            self._started = True
            self.hub._alive.add(self.worker_id)

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.hub._alive.discard(self.worker_id)
        self.hub._drop_listeners(self.worker_id)
        self.hub._members.pop(self.worker_id, None)

    # ------------------------------------------------------------ messages

    async def publish(self, channel: str, message: bytes) -> int:
        by_worker = self.hub._channels.get(channel)
        if not by_worker:
            return 0
        loop = asyncio.get_running_loop()
        for listeners in by_worker.values():
            for listener in listeners:
                # call_soon keeps the order of publishes and, like a network, never runs
                # a listener inside the publisher's call
                loop.call_soon(listener.receive, message)
        return len(by_worker)

    def listen(self, channel: str, deliver: Callable[[bytes], None]) -> Callable[[], None]:
        listener = Listener(deliver)
        if self._dead or self._closed:
            listener.active = False
            return lambda: None
        channels = self.hub._channels
        channels.setdefault(channel, {}).setdefault(self.worker_id, []).append(listener)

        def stop() -> None:
            if not listener.active:
                return
            listener.active = False
            by_worker = channels.get(channel)
            mine = by_worker.get(self.worker_id) if by_worker is not None else None
            if mine is None or by_worker is None:
                return
            mine.remove(listener)
            if not mine:
                del by_worker[self.worker_id]
                if not by_worker:
                    del channels[channel]

        return stop

    async def listening(self, channel: str, *, timeout: float = 2.0) -> None:
        if self.worker_id not in self.hub._channels.get(channel, {}):
            raise ValueError(f"worker {self.worker_id} does not listen on {channel!r}")

    # ------------------------------------------------------------ logs

    def log_append(self, log: str, position: int, data: bytes, *, ttl: float) -> None:
        hub = self.hub
        now = hub.clock()
        entry = hub._live_log(log, now)
        if entry is None:
            entry = hub._new_log(log, now)
        elif entry.positions and position <= entry.positions[-1]:
            logger.warning("log %r: position %d is not after %d; append dropped", log, position, entry.positions[-1])
            return
        entry.positions.append(position)
        entry.entries.append(bytes(data))
        entry.expires = now + ttl
        hub._wake_readers(log)

    async def log_read(self, log: str, after: int, *, wait: float = 0.0) -> list[tuple[int, bytes]]:
        found = self._read(log, after)
        if found or wait <= 0:
            return found
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        while not found:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return []
            waiter: asyncio.Future[None] = loop.create_future()
            waiters = self.hub._log_waiters.setdefault(log, [])
            waiters.append(waiter)
            try:
                await asyncio.wait_for(waiter, remaining)
            except TimeoutError:
                return []
            finally:
                if waiter in waiters:
                    waiters.remove(waiter)
                    if not waiters:
                        self.hub._log_waiters.pop(log, None)
            found = self._read(log, after)
        return found

    def _read(self, log: str, after: int) -> list[tuple[int, bytes]]:
        entry = self.hub._live_log(log, self.hub.clock())
        if entry is None:
            return []
        start = bisect.bisect_right(entry.positions, after)
        return list(zip(entry.positions[start:], entry.entries[start:], strict=True))

    async def log_delete(self, log: str) -> None:
        self.hub._logs.pop(log, None)

    async def flush(self) -> None:
        """Nothing to wait for: appends are written when they are made."""

    # ------------------------------------------------------------ liveness

    async def alive(self, worker_id: str) -> bool:
        return worker_id in self.hub._alive
