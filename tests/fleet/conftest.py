"""Fixtures of the fleet tests: ``new_state`` makes one worker's shared state, either a worker of
an in-process ``MemoryHub`` or a ``RedisState`` on one real ``redis-server`` (emptied per test)."""

from __future__ import annotations

from _states import fleet_redis, new_state

__all__ = ["fleet_redis", "new_state"]
