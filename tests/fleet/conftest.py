"""Fixtures of the fleet tests: ``new_state`` makes one worker's shared state, either a worker of
an in-process ``MemoryHub`` or a ``RedisState`` on one real ``redis-server`` (emptied per test)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
import redis

from _services import RedisServer, redis_server
from backchannel.state.memory import MemoryHub, MemoryState
from backchannel.state.redis import RedisState
from backchannel.state.shared import SharedState


@pytest.fixture(scope="session")
def fleet_redis() -> Iterator[RedisServer]:
    with redis_server() as server:
        yield server


@pytest.fixture(params=["memory", "redis"])
def new_state(request: pytest.FixtureRequest) -> Callable[[], SharedState]:
    if request.param == "memory":
        hub = MemoryHub()
        return lambda: MemoryState(hub)
    service: RedisServer = request.getfixturevalue("fleet_redis")
    with redis.Redis.from_url(service.url) as client:
        client.flushall()
    return lambda: RedisState(service.url)
