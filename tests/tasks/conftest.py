"""The tasks tests' fixtures: ``new_state`` makes one worker's shared state, a worker of an
in-process ``MemoryHub`` or a ``RedisState`` on one real ``redis-server`` (emptied per test)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from _services import RedisServer, redis_server
from backchannel.state.memory import MemoryHub, MemoryState
from backchannel.state.shared import SharedState


@pytest.fixture(scope="session")
def tasks_redis() -> Iterator[RedisServer]:
    with redis_server() as server:
        yield server


@pytest.fixture(params=["memory", "redis"])
def new_state(request: pytest.FixtureRequest) -> tuple[str, Callable[[], SharedState], MemoryHub | None]:
    """(backend, a maker of one worker's state, the hub when in-process)."""
    if request.param == "memory":
        hub = MemoryHub()
        return "memory", lambda: MemoryState(hub), hub
    import redis

    from backchannel.state.redis import RedisState

    service: RedisServer = request.getfixturevalue("tasks_redis")
    with redis.Redis.from_url(service.url) as client:
        client.flushall()
    return "redis", lambda: RedisState(service.url), None
