"""What ``RedisState`` costs in round trips to Redis, counted by Redis itself (``INFO stats``
``total_reads_processed``: one per command, or per pipeline, a client sends): logs forgotten at
once (a session letting its 64 oldest streams go) share one round trip, and a log's appends and
its deletion keep their order."""

from __future__ import annotations

import asyncio

import redis
from _state_backends import HEARTBEAT, LEASE

from backchannel.state import RedisState
from backchannel.testing import run


def _reads(client: redis.Redis) -> int:
    """Round trips Redis has served before this question, less the subscriber's pings."""
    info = client.info("stats", "commandstats")
    pings = info.get("cmdstat_ping", {}).get("calls", 0)  # type: ignore[union-attr]
    return int(info["total_reads_processed"]) - 1 - int(pings)  # type: ignore[index]


def test_logs_deleted_at_once_cost_one_round_trip(redis_url: str) -> None:
    async def body() -> None:
        # A long heartbeat: no lease renewal inside the count.
        async with RedisState(redis_url, heartbeat=30, lease=60) as state:
            for number in range(64):
                state.log_append(f"log:{{s}}:{number}", 1, b"event", ttl=60)
            await state.flush()
            with redis.Redis.from_url(redis_url) as probe:
                assert probe.exists(*(f"bc:log:{{s}}:{number}" for number in range(64))) == 64
                before = _reads(probe)
                await asyncio.gather(*(state.log_delete(f"log:{{s}}:{number}") for number in range(64)))
                after = _reads(probe)
                assert probe.exists(*(f"bc:log:{{s}}:{number}" for number in range(64))) == 0
            assert after - before - 1 <= 1  # (the probe's first INFO is counted in ``after``)

    run(body)


def test_a_deletion_queued_after_appends_leaves_nothing_and_a_later_append_starts_afresh(redis_url: str) -> None:
    async def body() -> None:
        async with RedisState(redis_url, heartbeat=HEARTBEAT, lease=LEASE) as a, RedisState(redis_url) as b:
            a.log_append("log", 1, b"one", ttl=60)
            a.log_append("log", 2, b"two", ttl=60)
            await a.log_delete("log")  # queued behind the appends, which never outlive it
            assert await b.log_read("log", 0) == []
            a.log_append("log", 1, b"again", ttl=60)
            await a.flush()
            assert await b.log_read("log", 0) == [(1, b"again")]

    run(body)
