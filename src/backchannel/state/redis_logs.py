"""Append-only logs in Redis Streams, written without blocking the caller.

``append`` puts the write in a queue and returns; one writer task sends what is queued
in order, many appends per round trip (``XADD key <position>-1 d <data>`` each, and one
``PEXPIRE`` per log, in one write on the writer's own connection), so the delivery path
of an SSE event never waits for Redis. ``delete`` queues a log's ``DEL`` the same way,
after the appends before it: the streams a session forgets go in one round trip.
``flush`` waits for what was queued before it. When Redis cannot be reached a batch is
dropped (logged), and the ``flush`` that waited for it raises ``StateUnavailable``; the
queue is bounded, so an outage cannot grow it without end.
"""

from __future__ import annotations

__all__ = ["LogWriter", "read_log", "stream_id"]

import asyncio
import contextlib
import logging
import math
from collections import deque
from typing import Any

import redis.exceptions
from redis.asyncio.connection import Connection

from .redis_link import DOWN, Link, stop_task

logger = logging.getLogger("backchannel.state")

_BATCH = 1000  # appends per round trip at most
_MAX_QUEUED = 100_000  # appends waiting at most; past that new ones are dropped
_DELETE = -1  # the position of a queued delete of the whole log


def stream_id(position: int) -> str:
    """The entry id of ``position``: ``<position>-1``, so position 0 is a valid id too."""
    return f"{position}-1"


def _after(position: int) -> str:
    return stream_id(position) if position >= 0 else "0-0"


def _entries(response: Any) -> list[tuple[int, bytes]]:
    found: list[tuple[int, bytes]] = []
    for _stream, entries in response or ():
        for entry_id, fields in entries:
            found.append((int(entry_id.partition(b"-")[0]), fields[b"d"]))
    return found


async def read_log(link: Link, key: str, after: int, wait: float) -> list[tuple[int, bytes]]:
    """The entries of the stream ``key`` after ``after``; with ``wait`` > 0 and none yet,
    block for the next, in slices shorter than the socket timeout (a blocked ``XREAD``
    must answer before the connection's own read times out)."""
    found = _entries(await link.call("XREAD", "STREAMS", key, _after(after)))
    if found or wait <= 0:
        return found
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait
    slice_ms = max(1, int(link.timeout * 500))  # half the socket timeout
    while True:
        remaining_ms = math.ceil((deadline - loop.time()) * 1000)
        if remaining_ms <= 0:
            return []
        block = min(slice_ms, remaining_ms)
        found = _entries(await link.call("XREAD", "BLOCK", block, "STREAMS", key, _after(after)))
        if found:
            return found


class LogWriter:
    """The queue of appends of one ``RedisState`` and the task that writes them."""

    def __init__(self, link: Link) -> None:
        self._link = link
        self._queue: deque[tuple[str, int, bytes, int]] = deque()
        self._queued = 0  # appends ever queued
        self._done = 0  # ... and handled since (written, refused by Redis, or lost): a prefix
        self._losses = 0  # times appends were lost (a batch, or an append the full queue refused)
        self._waiters: list[tuple[int, int, asyncio.Future[None]]] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        # The writer's own: one task uses it, so no pool to take it from and give it back to
        # on every batch (most of what a small batch costs through redis-py's pipeline).
        self._connection: Connection | None = None

    def delete(self, key: str) -> None:
        """Queue the deletion of the log ``key``, after the appends queued before it."""
        self.append(key, _DELETE, b"", 0.0)

    def append(self, key: str, position: int, data: bytes, ttl: float) -> None:
        if self._closed:
            raise RuntimeError("this RedisState was closed; its logs take no more appends")
        if len(self._queue) >= _MAX_QUEUED:
            # Redis has been away for a while: keep the memory bounded, lose this append.
            self._losses += 1
            if self._losses % 1000 == 1:
                logger.warning("shared state: %d log appends waiting; dropping new ones", len(self._queue))
            return
        self._queued += 1
        self._queue.append((key, position, bytes(data), max(1, math.ceil(ttl * 1000))))
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="backchannel-redis-log-writer")
        self._wake.set()

    async def flush(self) -> None:
        target = self._queued
        if self._done >= target:
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((target, self._losses, waiter))
        await waiter

    async def aclose(self, timeout: float) -> None:
        """Write what is queued (for at most ``timeout`` seconds), then stop the task."""
        self._closed = True
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.flush(), timeout)
        task, self._task = self._task, None
        if task is not None:
            await stop_task(task)
        if self._connection is not None:
            await self._connection.disconnect(nowait=True)
        lost = self._link.unavailable()
        for _, _, waiter in self._waiters:
            if not waiter.done():
                waiter.set_exception(lost)
        self._waiters.clear()

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._queue:
                batch = [self._queue.popleft() for _ in range(min(len(self._queue), _BATCH))]
                written = await self._write(batch)
                self._done += len(batch)
                if not written:
                    self._losses += 1
                self._settle()

    async def _write(self, batch: list[tuple[str, int, bytes, int]]) -> bool:
        commands: list[tuple[Any, ...]] = []
        ttls: dict[str, int] = {}
        for key, position, data, ttl_ms in batch:
            if position == _DELETE:
                commands.append(("DEL", key))
                ttls.pop(key, None)
            else:
                commands.append(("XADD", key, stream_id(position), "d", data))
                ttls[key] = ttl_ms  # the last append's TTL wins, as if each had set it
        commands += [("PEXPIRE", key, ttl_ms) for key, ttl_ms in ttls.items()]
        try:
            async with asyncio.timeout(self._link.timeout):
                results = await self._send(commands)
        except DOWN as error:
            logger.warning(
                "shared state: %d log appends lost, %s unreachable (%r)", len(batch), self._link.where, error
            )
            return False
        except Exception:
            logger.exception("shared state: %d log appends lost", len(batch))
            return False
        for (key, position, _, _), result in zip(batch, results, strict=False):
            if isinstance(result, redis.exceptions.ResponseError):
                logger.warning("log %r: position %d is not after the last one; append dropped", key, position)
        return True

    async def _send(self, commands: list[tuple[Any, ...]]) -> list[Any]:
        """``commands`` in one write, and their replies (an error reply as its exception). A
        connection that had served may have died with a Redis restart: once more, afresh. On a
        cluster the logs' keys live on several nodes: one pipeline, which writes once to each."""
        if self._link.cluster:
            pipeline = self._link.client.pipeline()
            for command in commands:
                pipeline.execute_command(*command)
            return await pipeline.execute(raise_on_error=False)
        connection = self._connection
        if connection is None:
            connection = self._connection = self._link.new_connection()
        for attempt in (1, 2):
            reused = connection.is_connected
            try:
                if not reused:
                    await connection.connect()  # type: ignore[no-untyped-call]
                await connection.send_packed_command(connection.pack_commands(commands), check_health=False)
                results: list[Any] = []
                for _ in commands:
                    try:
                        results.append(await connection.read_response())
                    except redis.exceptions.ResponseError as refused:
                        results.append(refused)
                return results
            except redis.exceptions.ConnectionError:
                await connection.disconnect(nowait=True)
                if attempt == 2 or not reused:
                    raise
        raise AssertionError("unreachable")

    def _settle(self) -> None:
        waiting = []
        for target, losses_before, waiter in self._waiters:
            if waiter.done():
                continue
            if self._done < target:
                waiting.append((target, losses_before, waiter))
            elif self._losses > losses_before:  # a loss since this flush began, among its appends
                waiter.set_exception(self._link.unavailable())
            else:
                waiter.set_result(None)
        self._waiters = waiting
