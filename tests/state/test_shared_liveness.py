"""Liveness: a worker holds a lease from ``start`` to ``aclose``; one that dies without
closing (``kill -9`` of a real process holding a ``RedisState``; ``hub.kill`` in memory)
is seen as gone by every other worker within the lease, and messages stop reaching it."""

from __future__ import annotations

import asyncio
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _state_backends import LEASE, Backend, Inbox, MemoryBackend, RedisBackend

from _subprocesses import checkout_env
from backchannel.testing import run

WORKER = Path(__file__).with_name("_redis_worker.py")


def test_a_worker_is_alive_from_start_to_close(backend: Backend) -> None:
    async def body() -> None:
        a, b = backend.new(), backend.new()
        try:
            assert not await b.alive(a.worker_id)  # not started yet
            await a.start()
            await a.start()  # idempotent
            await b.start()
            assert await b.alive(a.worker_id) and await a.alive(b.worker_id)
            assert not await b.alive("nobody00")
            await backend.pass_time(2 * LEASE)  # the heartbeat renews the lease
            assert await b.alive(a.worker_id)
            await a.aclose()
            assert not await b.alive(a.worker_id)  # given up at once, not left to expire
            await a.aclose()  # idempotent
            with pytest.raises(RuntimeError, match="closed"):
                await a.start()
        finally:
            await a.aclose()
            await b.aclose()

    run(body)


def test_a_closed_worker_hears_nothing_more(backend: Backend) -> None:
    async def body() -> None:
        async with backend.new() as a, backend.new() as b:
            heard = Inbox()
            a.listen("work", heard)
            await a.listening("work")
            assert await b.publish("work", b"1") == 1
            await heard.wait_for(1)
            await a.aclose()
            assert await b.publish("work", b"2") == 0
            a.listen("work", heard)  # a closed state takes no listener
            assert await b.publish("work", b"3") == 0
            assert heard.messages == [b"1"]

    run(body)


def test_memory_hub_kill_stands_for_kill_minus_nine() -> None:
    async def body() -> None:
        backend = MemoryBackend()
        async with backend.new() as a, backend.new() as b, backend.new() as c:
            heard_a, heard_c = Inbox(), Inbox()
            a.listen("work", heard_a)
            c.listen("work", heard_c)
            await a.put("k", 1, ttl=10)
            assert await b.publish("work", b"before") == 2
            await heard_a.wait_for(1)
            backend.hub.kill(a.worker_id)
            assert not await b.alive(a.worker_id)
            assert await c.alive(c.worker_id)
            assert await b.publish("work", b"after") == 1  # only c hears it now
            assert await heard_c.wait_for(2) == [b"before", b"after"]
            assert heard_a.messages == [b"before"]
            assert await b.get("k") == 1  # nothing was cleaned up for the dead worker
            with pytest.raises(RuntimeError, match="closed"):
                await a.start()

    run(body)


def _read_line(process: subprocess.Popen[str], timeout: float) -> str:
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], timeout)
    if not ready:
        raise TimeoutError(f"the worker printed nothing within {timeout}s")
    return process.stdout.readline().strip()


def test_a_redis_worker_killed_with_sigkill_is_gone_within_its_lease(redis_url: str) -> None:
    heartbeat, lease = 0.2, LEASE
    process = subprocess.Popen(
        [sys.executable, str(WORKER), redis_url, str(heartbeat), str(lease)],
        stdout=subprocess.PIPE,
        text=True,
        env=checkout_env(),
    )
    try:
        worker_id = _read_line(process, 20.0)
        assert len(worker_id) == 8, worker_id

        async def body() -> None:
            async with RedisBackend(redis_url).new() as observer:
                assert await observer.alive(worker_id)
                assert await observer.publish("work", b"ping") == 1
                await asyncio.sleep(2 * lease)  # alive past one lease: its heartbeat renews it
                assert await observer.alive(worker_id)
                os.kill(process.pid, signal.SIGKILL)
                killed = time.monotonic()
                while await observer.alive(worker_id):  # noqa: ASYNC110 - Redis's state: no event to wait on
                    await asyncio.sleep(0.02)
                gone_after = time.monotonic() - killed
                # The lease was renewed at most `lease` s before Redis forgets it; the margin
                # is for this machine's scheduling, not for the contract.
                assert gone_after <= lease + 0.4, f"still alive {gone_after:.2f}s after kill -9"
                assert await observer.publish("work", b"ping") == 0  # its subscription died with it
                # what it wrote stays readable by the others until the TTL it set
                assert await observer.log_read("log:{worker}", 0) == [(1, b"written before the kill")]

        run(body)
    finally:
        process.kill()
        process.wait(10)


def test_close_leaves_no_task_behind_even_right_after_start(backend: Backend) -> None:
    """Closing while the heartbeat and the subscriber have barely begun ends them all."""

    async def body() -> None:
        for _ in range(10):
            state = backend.new()
            await state.start()
            await state.get("k")
            await state.aclose()
        assert asyncio.all_tasks() == {asyncio.current_task()}

    run(body, timeout=5)
