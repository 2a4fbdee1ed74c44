"""The tasks tests' fixtures: ``new_state`` makes one worker's shared state, a worker of an
in-process ``MemoryHub`` or a ``RedisState`` on one real ``redis-server`` (emptied per test)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator

import pytest

_TESTS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _TESTS_DIR not in sys.path:
    sys.path.insert(0, _TESTS_DIR)

from _services import RedisServer, redis_server  # noqa: E402
from backchannel.state.memory import MemoryHub, MemoryState  # noqa: E402
from backchannel.state.shared import SharedState  # noqa: E402


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
