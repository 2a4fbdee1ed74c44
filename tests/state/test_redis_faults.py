"""``RedisState`` against a real redis-server: a restart under live workers (clear errors
while it is down, service and subscriptions back by themselves after), no Redis at all,
every key with a TTL and the key count back to its baseline, keys laid out for Cluster,
and redis-py loaded only by those who name ``RedisState``."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable

import pytest
import redis
from _state_backends import HEARTBEAT, LEASE, Inbox
from redis.crc import key_slot

from _services import redis_server
from _subprocesses import checkout_env
from backchannel.state import RedisState, StateUnavailable
from backchannel.testing import free_port, run
from backchannel.types.errors import INTERNAL_ERROR

#: The brief's bound on a call to an unreachable Redis: about two socket timeouts (1 s each).
CALL_BOUND = 2.5


async def _fails_clearly(call: Awaitable[object], where: str) -> None:
    started = time.monotonic()
    with pytest.raises(StateUnavailable) as caught:
        await call
    assert time.monotonic() - started < CALL_BOUND
    assert caught.value.code == INTERNAL_ERROR
    assert f"Redis at {where}" in caught.value.message and "try again" in caught.value.message


def test_a_redis_restart_fails_calls_clearly_then_service_resumes_by_itself() -> None:
    with redis_server() as server:
        where = f"127.0.0.1:{server.port}"

        async def body() -> None:
            options = {"heartbeat": HEARTBEAT, "lease": LEASE}
            async with RedisState(server.url, **options) as a, RedisState(server.url, **options) as b:
                heard = Inbox()
                a.listen("work", heard)
                await a.listening("work")
                assert await b.publish("work", b"before") == 1
                await heard.wait_for(1)

                await asyncio.to_thread(server.stop)
                await _fails_clearly(a.get("k"), where)
                await _fails_clearly(a.add("k", 1, ttl=10), where)
                await _fails_clearly(a.add("k{b}", 1, ttl=10, bucket="b", limit=3), where)
                await _fails_clearly(a.put("k", 1, ttl=10), where)
                await _fails_clearly(a.delete("k"), where)
                await _fails_clearly(b.publish("work", b"lost"), where)
                await _fails_clearly(b.alive(a.worker_id), where)
                await _fails_clearly(b.log_read("log", 0), where)
                await _fails_clearly(b.log_read("log", 0, wait=5), where)
                await _fails_clearly(b.log_delete("log"), where)
                a.log_append("log", 1, b"lost", ttl=10)  # never blocks, even now
                await _fails_clearly(a.flush(), where)  # ... and flush says it was lost
                await _fails_clearly(a.listening("work", timeout=0.5), where)

                await asyncio.to_thread(server.start)  # same port, empty (no persistence)
                await a.listening("work", timeout=5)  # re-subscribed by itself
                assert await b.publish("work", b"after") == 1
                assert await heard.wait_for(2) == [b"before", b"after"]
                assert await b.add("k", 2, ttl=10) == "added" and await a.get("k") == 2
                async with asyncio.timeout(5):  # the heartbeat takes the lease again
                    while not await b.alive(a.worker_id):  # noqa: ASYNC110 - Redis's state: no event to wait on
                        await asyncio.sleep(0.05)
                a.log_append("log", 2, b"kept", ttl=10)
                await a.flush()
                assert await b.log_read("log", 0) == [(2, b"kept")]

        run(body, timeout=30)


def test_a_redis_that_stops_answering_costs_a_call_one_timeout_not_a_hang() -> None:
    with redis_server() as server:
        assert server.process is not None
        where = f"127.0.0.1:{server.port}"

        async def body() -> None:
            async with RedisState(server.url, heartbeat=HEARTBEAT, lease=LEASE) as a:
                heard = Inbox()
                a.listen("work", heard)
                await a.listening("work")
                os.kill(server.process.pid, signal.SIGSTOP)  # connections open, nothing answers
                try:
                    await _fails_clearly(a.get("k"), where)
                    await _fails_clearly(a.publish("work", b"lost"), where)
                    await _fails_clearly(a.log_read("log", 0, wait=5), where)
                finally:
                    os.kill(server.process.pid, signal.SIGCONT)
                assert await a.add("k", 1, ttl=10) == "added"
                await a.listening("work", timeout=5)
                assert await a.publish("work", b"back") == 1
                assert (await heard.wait_for(1))[-1] == b"back"

        run(body, timeout=30)


def test_no_redis_at_all_fails_start_and_calls_clearly() -> None:
    port = free_port()  # nothing listens there

    async def body() -> None:
        state = RedisState(f"redis://127.0.0.1:{port}/0")
        await _fails_clearly(state.start(), f"127.0.0.1:{port}")
        await _fails_clearly(state.get("k"), f"127.0.0.1:{port}")
        await _fails_clearly(state.publish("c", b"m"), f"127.0.0.1:{port}")
        with pytest.raises(RuntimeError, match="start"):
            await state.listening("c")
        await state.aclose()  # nothing was left running

    run(body)


def test_every_key_has_a_ttl_and_the_count_returns_to_its_baseline(redis_url: str) -> None:
    with redis.Redis.from_url(redis_url) as probe:
        baseline = probe.dbsize()

        async def body() -> None:
            workers = [RedisState(redis_url, heartbeat=HEARTBEAT, lease=LEASE) for _ in range(3)]
            for worker in workers:
                await worker.start()
            a, b, c = workers
            await a.add("once:{s1}:x", {"r": 1}, ttl=0.5)
            await b.add("decline:{alice}:f", True, ttl=0.5, bucket="{alice}", limit=10)
            await c.add("decline:{alice}:g", True, ttl=0.5, bucket="{alice}", limit=10)
            await b.put("decline:{alice}:g", False, ttl=0.6)
            await c.add("decline:{bob}:f", True, ttl=0.5, bucket="{bob}", limit=10)  # a bucket only added to
            await a.put("session:{s1}", {"v": "2025-11-25"}, ttl=0.5)
            for position in range(1, 20):
                a.log_append("events:{s1}:1", position, b"e", ttl=0.5)
            heard = Inbox()
            c.listen("session:{s1}", heard)
            await c.listening("session:{s1}")
            await a.publish("session:{s1}", b"m")
            await heard.wait_for(1)
            await a.flush()
            keys = probe.keys("*")
            assert len(keys) == baseline + 11  # 3 leases, 3 declines + 2 buckets, once, session, 1 log
            assert all(0 < probe.pttl(key) <= 1500 for key in keys), {key: probe.pttl(key) for key in keys}
            for worker in workers:
                await worker.aclose()

        run(body)
        deadline = time.monotonic() + 5
        while probe.dbsize() != baseline:  # Redis reclaims expired keys by itself, ~10 times a second
            assert time.monotonic() < deadline, probe.keys("*")
            time.sleep(0.05)


def test_keys_are_laid_out_for_redis_cluster(redis_url: str) -> None:
    async def body() -> None:
        async with RedisState(redis_url, prefix="app1:") as a, RedisState(redis_url, prefix="app2:") as other:
            await a.add("decline:{alice}:1", 1, ttl=10, bucket="{alice}", limit=5)
            await a.add("plain:{bob}:1", 1, ttl=10, bucket="bob", limit=5)
            assert await other.get("decline:{alice}:1") is None  # another prefix, another namespace
            with redis.Redis.from_url(redis_url) as probe:
                keys = sorted(key.decode() for key in probe.keys("*"))
            assert keys == sorted(
                [
                    "app1:decline:{alice}:1",
                    "app1:bucket:{alice}",  # the bucket's own hash tag
                    "app1:plain:{bob}:1",
                    "app1:bucket:{bob}",  # a bucket name without one becomes the tag
                    f"app1:worker:{{{a.worker_id}}}",
                    f"app2:worker:{{{other.worker_id}}}",
                ]
            )
            # a bucket's keys and its sorted set hash to one slot, as the add script needs
            assert key_slot(b"app1:decline:{alice}:1") == key_slot(b"app1:bucket:{alice}")
            assert key_slot(b"app1:plain:{bob}:1") == key_slot(b"app1:bucket:{bob}")

    run(body)
    with pytest.raises(ValueError, match="hash tag"):
        RedisState(redis_url, prefix="{bc}:")
    with pytest.raises(ValueError, match="heartbeat"):
        RedisState(redis_url, heartbeat=2, lease=1)


def test_only_naming_redis_state_loads_redis_py() -> None:
    code = (
        "import sys\n"
        "import backchannel.server, backchannel.state\n"
        "from backchannel.state import MemoryState, SharedState\n"
        "print('redis' in sys.modules)\n"
        "from backchannel.state import RedisState\n"
        "print('redis' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True, env=checkout_env()
    )
    assert out.stdout.split() == ["False", "True"]
