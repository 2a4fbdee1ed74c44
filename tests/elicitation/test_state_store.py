"""``MemoryStore``, the in-process ``StateStore``: set-if-absent, TTL per key on an injected
clock, buckets that count live keys only, a bound on the whole store, JSON values only."""

from __future__ import annotations

from typing import Any, TypeVar

import pytest

from backchannel.server.state import MemoryStore, StateStore, StoreFull
from backchannel.testing import run as kit_run

T = TypeVar("T")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


run = kit_run


def test_add_is_set_if_absent_and_get_returns_a_copy() -> None:
    async def body() -> None:
        store = MemoryStore()
        assert isinstance(store, StateStore)
        value = {"items": [1, 2]}
        assert await store.add("k", value, ttl=10) == "added"
        assert await store.add("k", {"other": True}, ttl=10) == "exists"
        got = await store.get("k")
        assert got == value
        got["items"].append(3)
        assert await store.get("k") == value  # what came out was a copy
        assert await store.get("missing") is None

    run(body)


def test_ttl_on_the_injected_clock() -> None:
    async def body() -> None:
        clock = Clock()
        store = MemoryStore(clock=clock)
        await store.add("a", 1, ttl=10)
        await store.put("b", 2, ttl=20)
        clock.now += 10
        assert await store.get("a") is None
        assert await store.get("b") == 2
        await store.put("b", 3, ttl=5)  # put restarts the TTL from now
        clock.now += 4.9
        assert await store.get("b") == 3
        clock.now += 0.2
        assert await store.get("b") is None
        assert len(store) == 0
        assert await store.add("a", 4, ttl=1) == "added"  # an expired key can be added again

    run(body)


def test_a_bucket_counts_its_live_keys_only() -> None:
    async def body() -> None:
        clock = Clock()
        store = MemoryStore(clock=clock)
        assert await store.add("1", 1, ttl=10, bucket="alice", limit=2) == "added"
        assert await store.add("2", 1, ttl=20, bucket="alice", limit=2) == "added"
        assert await store.add("3", 1, ttl=10, bucket="alice", limit=2) == "full"
        assert await store.add("3", 1, ttl=10, bucket="bob", limit=2) == "added"  # another bucket
        await store.put("2", 5, ttl=30)  # still alice's
        assert store.bucket_size("alice") == 2
        await store.delete("1")
        assert store.bucket_size("alice") == 1
        assert await store.add("4", 1, ttl=10, bucket="alice", limit=2) == "added"
        clock.now += 10
        assert store.bucket_size("alice") == 1  # "4" expired, "2" lives on
        assert await store.add("5", 1, ttl=10, bucket="alice", limit=2) == "added"
        assert await store.add("6", 1, ttl=10, bucket="alice", limit=2) == "full"

    run(body)


def test_the_whole_store_is_bounded() -> None:
    async def body() -> None:
        clock = Clock()
        store = MemoryStore(max_keys=2, clock=clock)
        await store.add("a", 1, ttl=10)
        await store.put("b", 1, ttl=10)
        assert await store.add("c", 1, ttl=10) == "full"
        with pytest.raises(StoreFull, match="full"):
            await store.put("c", 1, ttl=10)
        await store.put("a", 2, ttl=10)  # replacing is not growing
        clock.now += 10
        assert await store.add("c", 1, ttl=10) == "added"

    run(body)


def test_many_refreshes_keep_the_expiry_index_small() -> None:
    async def body() -> None:
        clock = Clock()
        store = MemoryStore(clock=clock)
        for n in range(10_000):
            await store.put("k", n, ttl=10)
            clock.now += 0.001
        assert len(store._expiries) <= 2 * len(store) + 64

    run(body)


@pytest.mark.parametrize("value", [object(), lambda: None, {"nested": [object()]}])
def test_values_must_be_json(value: Any) -> None:
    async def body() -> None:
        store = MemoryStore()
        with pytest.raises(TypeError):
            await store.add("k", value, ttl=1)
        with pytest.raises(TypeError):
            await store.put("k", value, ttl=1)
        assert len(store) == 0

    run(body)
