"""``SharedState.watch``: keys a ``RedisState`` reads with each renewal of its worker's lease, in
the same round trip, so a worker knows them at every request without a read of its own (the
store's generation, ``state/generation.py``). What was read counts for at most the lease,
and not at all once the worker has found its connection to Redis lost: Redis may be back empty."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import redis

from _services import redis_server
from backchannel.state import MemoryState, RedisState
from backchannel.state.shared import Watched
from backchannel.testing import run, within


def _counts(client: redis.Redis) -> dict[str, int]:
    info: dict[str, Any] = client.info("stats", "commandstats")  # type: ignore[assignment]
    counts = {"reads": int(info["total_reads_processed"])}
    for name, value in info.items():
        if name.startswith("cmdstat_"):
            counts[name.removeprefix("cmdstat_")] = int(value["calls"])
    return counts


def test_a_watched_key_is_read_with_each_lease_renewal_in_the_same_round_trip(redis_url: str) -> None:
    async def body() -> None:
        async with RedisState(redis_url, heartbeat=0.05, lease=1.0) as state:
            watched = state.watch("generation")
            assert state.watch("generation") is watched
            await state.put("generation", {"id": "a"}, ttl=60)
            await within(lambda: watched.recent() == {"id": "a"}, "the heartbeat reading the key")
            await state.delete("generation")
            await within(lambda: watched.recent() is None, "the heartbeat seeing the key gone")
            await state.put("generation", {"id": "b"}, ttl=60)
            await within(lambda: watched.recent() == {"id": "b"}, "the heartbeat reading the new value")
            with redis.Redis.from_url(redis_url) as other:  # not a value of ours: read as nothing
                other.set("bc:generation", b"\x00 not json")
            await within(lambda: watched.recent() is None, "the heartbeat reading what is not JSON")
            await state.put("generation", {"id": "c"}, ttl=60)
            await within(lambda: watched.recent() == {"id": "c"}, "the heartbeat going on after it")

            with redis.Redis.from_url(redis_url) as probe:
                before = _counts(probe)
                renewed = before.get("set", 0) + 5
                await within(lambda: _counts(probe).get("set", 0) >= renewed, "five renewals", timeout=10)
                after = _counts(probe)
        delta = {name: after.get(name, 0) - before.get(name, 0) for name in after}
        assert abs(delta["get"] - delta["set"]) <= 1, delta  # one read of the key per renewal
        infos, pings = delta.get("info", 0), delta.get("ping", 0)
        assert delta["reads"] - infos - pings <= delta["set"] + 1, delta  # ... in the renewal's round trip

    run(body)


def test_a_read_from_before_a_lost_connection_or_older_than_the_lease_does_not_count() -> None:
    watched = Watched("generation", within=60.0)
    sent = time.monotonic()
    watched.saw({"id": "a"}, sent)
    assert watched.recent() == {"id": "a"}
    watched.lost()
    assert watched.recent() is None
    watched.saw({"id": "a"}, sent)  # the answer to a call sent before the loss, arriving after it
    assert watched.recent() is None
    watched.saw({"id": "b"}, time.monotonic())
    assert watched.recent() == {"id": "b"}
    watched.saw({"id": "a"}, sent)  # older than the last read: nothing new
    assert watched.recent() == {"id": "b"}

    aged = Watched("generation", within=0.5)
    aged.saw({"id": "a"}, time.monotonic() - 1.0)
    assert aged.recent() is None


def test_a_redis_restart_makes_what_was_read_not_count_at_once() -> None:
    async def body(service: Any) -> None:
        # A long heartbeat: only the lost connection, heard by the subscriber, can make it stale.
        async with RedisState(service.url, heartbeat=30, lease=60) as state:
            watched = state.watch("generation")
            watched.saw({"id": "a"}, time.monotonic())
            await asyncio.to_thread(service.restart)
            await within(lambda: watched.recent() is None, "the worker hearing its connection lost")

    with redis_server() as service:
        run(lambda: body(service))


def test_a_store_without_a_heartbeat_that_reads_keys_watches_none() -> None:
    assert MemoryState().watch("generation") is None
