"""Which life of the state store a request began in, so that ``ctx.once`` can tell a state whose
results the store has lost.

``ctx.once`` results live in the server's state store, and a ``requestState`` is valid only as
long as the results it relies on are kept. A store can lose them before their time, though: a
Redis restarted without persistence comes back empty, while the workers' keys still open every
state sealed before. So each request's states carry the *generation* of the store the request
began in (``Round.generation``), and ``ctx.once`` refuses a retry of another generation
(``once.StateLost``, -32602) instead of running its work a second time: whether it ran before
the loss cannot be told.

- A store in this process loses its data only with the process: its generation is a random id
  made at start (``Generation.id``), which a server restarted with the same ``state_key`` does
  not share.
- A store shared by workers names its own, under ``GENERATION``: read by each worker as it joins
  (``Sharing``), by each ``ctx.once``, and by each request's first ``InputRequiredResult``.
  A store that names none is new or emptied: the first worker to see that gives it a new id and
  tells the others (``Generation.on_new``).
"""

from __future__ import annotations

__all__ = ["GENERATION", "GENERATION_TTL", "Generation", "spans_workers"]

import os
from collections.abc import Awaitable, Callable

from ..state.shared import SharedState
from .state import StateStore, StoreFull

#: The key naming the shared store's generation (``{"id": ...}``); gone with everything else when
#: the store loses its data, and then made anew with another id.
GENERATION = "store-generation"
#: How long the generation's key lives. It is never renewed: a renewal racing a loss could write the
#: old generation back. When it expires a new one is made, and requests begun in the old one (at
#: most ``state_ttl`` old) are refused by ``ctx.once`` as after a loss: once a year.
GENERATION_TTL = 365 * 24 * 3600.0


def spans_workers(store: StateStore) -> bool:
    """Whether ``store`` is shared by workers (so it may lose its data while this process runs)."""
    return isinstance(store, SharedState) and store.spans_workers


class Generation:
    """What this worker knows of the store's generation: ``id``, the one new requests begin in."""

    def __init__(self) -> None:
        self.id = os.urandom(8).hex()  # this process's own (hashlib's OpenSSL is not loaded for it)
        #: Whether ``id`` was read from (or written to) a shared store.
        self.known = False
        #: Awaited when this worker gave a shared store a new generation (``Sharing`` tells the fleet).
        self.on_new: Callable[[], Awaitable[None]] | None = None

    async def now(self, store: StateStore) -> str:
        """The generation ``store`` is in now: read from a shared store, this process's own else."""
        return await self.read(store) if spans_workers(store) else self.id

    async def read(self, store: StateStore) -> str:
        """The generation a shared ``store`` names now, noted in ``id``. A store that names none is
        given one: this process's own if it has never seen another (then none of its states can
        rely on a result kept before), a new one otherwise."""
        held = await store.get(GENERATION)
        generation = held.get("id") if isinstance(held, dict) else None
        if not isinstance(generation, str):
            fresh = os.urandom(8).hex() if self.known else self.id
            if await store.add(GENERATION, {"id": fresh}, ttl=GENERATION_TTL) == "added":
                generation = fresh
                if self.known and self.on_new is not None:
                    self.id = generation
                    await self.on_new()  # the other workers begin requests in it from now on too
            else:  # another worker named it first
                held = await store.get(GENERATION)
                generation = held.get("id") if isinstance(held, dict) else None
                if not isinstance(generation, str):
                    raise StoreFull("the server's state store is full (its own bound of keys); retry later")
        self.id = generation
        self.known = True
        return generation
