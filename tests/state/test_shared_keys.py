"""The key-value part of ``SharedState``, on both implementations: set-if-absent across
workers, TTLs, buckets that count live keys only, JSON values only."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from _state_backends import Backend

from backchannel.state import MemoryState, SharedState, StateStore
from backchannel.testing import run


def test_every_worker_sees_the_same_keys_and_add_is_set_if_absent(backend: Backend) -> None:
    async def body() -> None:
        async with backend.new() as a, backend.new() as b:
            assert isinstance(a, StateStore)
            assert a.worker_id != b.worker_id and len(a.worker_id) == 8
            value = {"items": [1, 2], "text": "é\n", "n": 1.5, "yes": True}
            assert await a.add("k", value, ttl=10) == "added"
            assert await b.add("k", {"other": 1}, ttl=10) == "exists"
            got = await b.get("k")
            assert got == value
            got["items"].append(3)
            assert await a.get("k") == value  # what came out was a copy
            assert await a.get("missing") is None
            await b.put("k", [1, "two"], ttl=10)
            assert await a.get("k") == [1, "two"]
            await a.delete("k")
            await a.delete("k")  # absent: nothing happens
            assert await b.get("k") is None

    run(body)


def test_one_add_wins_among_many_workers_racing(backend: Backend) -> None:
    async def body() -> None:
        workers = [backend.new() for _ in range(4)]
        try:
            outcomes = await asyncio.gather(*(worker.add("once:x", n, ttl=10) for n in range(20) for worker in workers))
            assert sorted(outcomes).count("added") == 1
            assert outcomes.count("exists") == 79
        finally:
            for worker in workers:
                await worker.aclose()

    run(body)


def test_ttls_pass_and_put_restarts_them(backend: Backend) -> None:
    async def body() -> None:
        async with backend.new() as a, backend.new() as b:
            await a.add("a", 1, ttl=0.4)
            await a.put("b", 2, ttl=5)
            await backend.pass_time(0.5)
            assert await b.get("a") is None
            assert await b.get("b") == 2
            await b.put("b", 3, ttl=0.4)  # put restarts the TTL from now
            assert await a.get("b") == 3
            await backend.pass_time(0.5)
            assert await a.get("b") is None
            assert await b.add("a", 4, ttl=5) == "added"  # an expired key can be added again

    run(body)


def test_a_bucket_counts_its_live_keys_only(backend: Backend) -> None:
    async def body() -> None:
        async with backend.new() as a, backend.new() as b:
            assert await a.add("1{alice}", 1, ttl=0.4, bucket="alice", limit=2) == "added"
            assert await b.add("2{alice}", 1, ttl=5, bucket="alice", limit=2) == "added"
            assert await a.add("3{alice}", 1, ttl=5, bucket="alice", limit=2) == "full"
            assert await a.get("3{alice}") is None  # "full" stored nothing
            assert await b.add("3{bob}", 1, ttl=5, bucket="bob", limit=2) == "added"  # another bucket
            await a.put("2{alice}", 5, ttl=5)  # replacing keeps it in alice's bucket
            assert await b.add("4{alice}", 1, ttl=5, bucket="alice", limit=2) == "full"
            await b.delete("2{alice}")  # a deleted key leaves its bucket at once
            assert await a.add("4{alice}", 1, ttl=5, bucket="alice", limit=2) == "added"
            assert await a.add("5{alice}", 1, ttl=5, bucket="alice", limit=2) == "full"
            await backend.pass_time(0.5)  # "1" expired: its place is free
            assert await b.add("5{alice}", 1, ttl=5, bucket="alice", limit=2) == "added"
            assert await b.add("6{alice}", 1, ttl=5, bucket="alice", limit=2) == "full"
            assert await a.add("7{alice}", 1, ttl=5, bucket="alice") == "added"  # no limit given: counted only

    run(body)


def test_put_keeps_a_bucketed_key_counted_for_its_new_ttl(backend: Backend) -> None:
    async def body() -> None:
        async with backend.new() as a:
            assert await a.add("k{c}", 1, ttl=0.4, bucket="c", limit=1) == "added"
            await a.put("k{c}", 2, ttl=5)
            await backend.pass_time(0.5)  # past the first TTL, within the second
            assert await a.get("k{c}") == 2
            assert await a.add("other{c}", 1, ttl=5, bucket="c", limit=1) == "full"

    run(body)


@pytest.mark.parametrize("value", [object(), {"nested": [object()]}])
def test_values_must_be_json(backend: Backend, value: Any) -> None:
    async def body() -> None:
        async with backend.new() as a:
            with pytest.raises(TypeError):
                await a.add("k", value, ttl=1)
            with pytest.raises(TypeError):
                await a.add("k", value, ttl=1, bucket="b", limit=1)
            with pytest.raises(TypeError):
                await a.put("k", value, ttl=1)
            assert await a.get("k") is None

    run(body)


def test_memory_state_alone_is_a_fleet_of_one() -> None:
    async def body() -> None:
        alone, other = MemoryState(), MemoryState()
        assert not alone.spans_workers
        await alone.add("k", 1, ttl=10)
        assert await other.get("k") is None  # two lone states share nothing
        with pytest.raises(ValueError, match="MemoryHub"):
            MemoryState(alone.hub, max_keys=3)

    run(body)


def test_shared_state_is_an_async_context_manager(backend: Backend) -> None:
    async def body() -> None:
        state = backend.new()
        async with state as entered:
            assert entered is state
            assert isinstance(entered, SharedState) and entered.spans_workers  # a hub, or Redis
            assert await state.alive(state.worker_id)
        async with backend.new() as other:
            assert not await other.alive(state.worker_id)

    run(body)
