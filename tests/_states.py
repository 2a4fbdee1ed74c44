"""Shared-state fixtures for tests that run several workers: ``fleet_redis`` (one real
``redis-server``) and ``new_state`` (a maker of one worker's state: a worker of an in-process
``MemoryHub``, or a ``RedisState`` on that server, emptied per test). A conftest or test module
imports both by name to use them."""

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
