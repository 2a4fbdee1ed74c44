"""Pools (``StateStore.claim``/``release``), on both implementations and on the default a store
written before them inherits: a bound on how many of one kind live at once, counting live
members only, one winner per free place among racing workers, no keys of their own."""

from __future__ import annotations

import asyncio
from typing import Any

import redis
from _state_backends import Backend, RedisBackend

from backchannel.state import MemoryStore, StateStore
from backchannel.state.store import Added
from backchannel.testing import FakeClock, run


def test_a_pool_counts_live_members_up_to_its_limit(backend: Backend) -> None:
    async def body() -> None:
        async with backend.new() as a, backend.new() as b:
            assert await a.claim("p", "one", ttl=0.4, limit=2) == "added"
            assert await b.claim("p", "two", ttl=5, limit=2) == "added"
            assert await a.claim("p", "three", ttl=5, limit=2) == "full"
            assert await b.claim("p", "one", ttl=0.4, limit=2) == "exists"  # counted already: renewed
            assert await a.claim("other", "three", ttl=5, limit=2) == "added"  # pools are apart
            await backend.pass_time(0.5)  # "one" has expired
            assert await a.claim("p", "three", ttl=5, limit=2) == "added"
            await b.release("p", "two")
            await b.release("p", "never")  # not counted: nothing happens
            assert await a.claim("p", "four", ttl=5, limit=2) == "added"
            assert await a.claim("p", "five", ttl=5, limit=2) == "full"

    run(body)


def test_one_claim_wins_the_last_place_among_racing_workers(backend: Backend) -> None:
    async def body() -> None:
        workers = [backend.new() for _ in range(4)]
        try:
            claims = [w.claim("race", f"{i}-{n}", ttl=10, limit=5) for i, w in enumerate(workers) for n in range(10)]
            outcomes = await asyncio.gather(*claims)
            assert outcomes.count("added") == 5 and outcomes.count("full") == 35
        finally:
            for worker in workers:
                await worker.aclose()

    run(body)


def test_a_redis_pool_is_one_sorted_set_with_a_ttl(redis_url: str) -> None:
    backend = RedisBackend(redis_url)

    async def body() -> None:
        async with backend.new() as state:
            for n in range(3):
                await state.claim("tasks:{all}", f"m{n}", ttl=30, limit=10)
        with redis.Redis.from_url(redis_url) as client:
            (key,) = list(client.scan_iter())  # the members are in the set, not keys of their own
            assert key == b"bc:pool:tasks:{all}"
            assert client.zcard(key) == 3 and 0 < client.pttl(key) <= 30_000

    run(body)


class _OldStore(StateStore):
    """A store written before pools: only the four abstract methods, over a ``MemoryStore``."""

    def __init__(self, clock: FakeClock) -> None:
        self.inner = MemoryStore(clock=clock)

    async def get(self, key: str) -> Any:
        return await self.inner.get(key)

    async def add(
        self, key: str, value: Any, *, ttl: float, bucket: str | None = None, limit: int | None = None
    ) -> Added:
        return await self.inner.add(key, value, ttl=ttl, bucket=bucket, limit=limit)

    async def put(self, key: str, value: Any, *, ttl: float) -> None:
        await self.inner.put(key, value, ttl=ttl)

    async def delete(self, key: str) -> None:
        await self.inner.delete(key)


def test_a_store_written_before_pools_gets_them_from_its_keys() -> None:
    async def body() -> None:
        clock = FakeClock()
        store = _OldStore(clock)
        assert await store.claim("p", "one", ttl=1, limit=2) == "added"
        assert await store.claim("p", "two", ttl=5, limit=2) == "added"
        assert await store.claim("p", "three", ttl=5, limit=2) == "full"
        assert await store.claim("p", "one", ttl=10, limit=2) == "exists"
        clock.advance(2)  # "one" was renewed for 10 s: still counted
        assert await store.claim("p", "three", ttl=5, limit=2) == "full"
        await store.release("p", "one")
        assert await store.claim("p", "three", ttl=5, limit=2) == "added"
        assert not await store.full()

    run(body)


def test_a_memory_store_forgets_pools_nobody_claims_in_any_more() -> None:
    async def body() -> None:
        clock = FakeClock()
        store = MemoryStore(clock=clock)
        for n in range(1000):
            await store.claim(f"address:{n}", "task", ttl=1, limit=3)
        clock.advance(2)
        for n in range(2000):  # a sweep comes when the number of pools has doubled
            await store.claim(f"later:{n}", "task", ttl=1, limit=3)
        assert not any(name.startswith("address:") for name in store._pools)  # the expired were swept
        assert len(store._pools) == 2000 and store.pool_size("later:1999") == 1

    run(body)
