"""Fixtures of the shared-state tests: one real Redis for the session (emptied before each
test that uses it) and ``backend``, which runs a contract test once per implementation."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis
from _state_backends import Backend, MemoryBackend, RedisBackend

from _services import RedisServer, redis_server


@pytest.fixture(scope="session")
def redis_service() -> Iterator[RedisServer]:
    """Shared by every test that does not stop or restart Redis (those start their own)."""
    with redis_server() as server:
        yield server


@pytest.fixture
def redis_url(redis_service: RedisServer) -> str:
    with redis.Redis.from_url(redis_service.url) as client:
        client.flushall()
    return redis_service.url


@pytest.fixture(params=["memory", "redis"])
def backend(request: pytest.FixtureRequest) -> Backend:
    if request.param == "memory":
        return MemoryBackend()
    return RedisBackend(request.getfixturevalue("redis_url"))
