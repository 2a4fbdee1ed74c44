"""The state a server keeps, and what a fleet of workers shares, behind one interface.

- ``StateStore`` / ``MemoryStore`` (``store.py``): keys with a TTL, atomic set-if-absent,
  buckets with a bound; ``ctx.once`` results and decline memory live there.
- ``SharedState`` (``shared.py``): a ``StateStore`` plus messages between workers, logs
  for resumable streams and worker liveness. ``MemoryState`` (``memory.py``) is the
  in-process default; ``RedisState`` (``redis.py``) serves many processes and loads
  redis-py only when it is first named here.

This layer sits beside ``transports/``: it imports ``types/`` and nothing above it.
"""

from __future__ import annotations

__all__ = [
    "Added",
    "MemoryHub",
    "MemoryState",
    "MemoryStore",
    "RedisState",
    "SharedState",
    "StateStore",
    "StateUnavailable",
    "StoreFull",
]

from typing import TYPE_CHECKING, Any

from .memory import MemoryHub, MemoryState
from .shared import SharedState, StateUnavailable
from .store import Added, MemoryStore, StateStore, StoreFull

if TYPE_CHECKING:
    from .redis import RedisState


def __getattr__(name: str) -> Any:
    # PEP 562: a server that keeps its state in memory never imports redis-py.
    if name == "RedisState":
        from .redis import RedisState

        return RedisState
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
