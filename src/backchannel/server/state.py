"""Moved to ``backchannel.state.store``; this name stays so existing imports keep working."""

from ..state.store import Added, MemoryStore, StateStore, StoreFull

__all__ = ["Added", "MemoryStore", "StateStore", "StoreFull"]
