"""Which life of the state store a request began in, so that ``ctx.once`` can tell a state whose
results the store has lost (the server's ``once.py`` asks; a ``StateSealer`` keeps what this
worker knows, ``sealer.py``).

``ctx.once`` results live in the server's state store, and a ``requestState`` is valid only as
long as the results it relies on are kept. A store can lose them before their time, though: a
Redis restarted without persistence comes back empty, while the workers' keys still open every
state sealed before. So each request's states carry the *generation* of the store the request
began in (``Round.generation``, ``server/mrtr.py``), and ``ctx.once`` refuses a retry of another
generation (``once.StateLost``, -32602) instead of running its work a second time: whether it ran
before the loss cannot be told.

- A store in this process loses its data only with the process: its generation is a random id
  made at start (``Generation.id``), which a server restarted with the same ``state_key`` does
  not share.
- A store shared by workers names its own, under ``GENERATION``: read by each worker as it joins
  (the server's ``Sharing``) and by each ``ctx.once``, and made anew when the store names none (new
  or emptied) by the first worker to see that, which tells the others (``Generation.on_new``).

A request's first state names the generation this worker knows when the store was seen naming
it lately, and the store's of now otherwise (``Generation.begun``): with Redis, its heartbeat
reads the key with each renewal of the worker's lease, in the same round trip (``watch``), so a
request that asks before any ``ctx.once`` costs no read of its own. Why that is safe:

- *No run twice.* A generation is a random id, and a store that lost its own is given a new one,
  never an old one back (a worker offers its own id only while it has read none, as it joins).
  ``ctx.once`` reads the store's generation before every claim and runs nothing unless it is the
  request's, so once the store has lost the data of the generation a request began in, every
  later claim of that request is refused, however old the id its first state named: a stale id
  can only make a refusal, never a run.
- *Bounded staleness.* The id counts as known for at most the lease (1.5 s by default) after
  the heartbeat's last read, and not at all once this worker has found its connection to Redis
  lost (a restart): then the first state of a request reads the store, as before. A request
  begun in that short while after a loss that Redis did not reveal (``FLUSHALL``, an eviction
  of the key) may name the old generation: its first ``ctx.once`` is refused (-32602) and the
  client starts it again. Nothing of it had run.
"""

from __future__ import annotations

__all__ = ["GENERATION", "GENERATION_TTL", "Generation", "spans_workers"]

import os
import time
from collections.abc import Awaitable, Callable

from .shared import SharedState, Watched
from .store import StateStore, StoreFull

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
        #: A shared store's ``GENERATION`` as its heartbeat reads it (``SharedState.watch``), and whose.
        self._watched: Watched | None = None
        self._watched_in: StateStore | None = None

    async def now(self, store: StateStore) -> str:
        """The generation ``store`` is in now: read from a shared store, this process's own else."""
        return await self.read(store) if spans_workers(store) else self.id

    def begun(self, store: StateStore) -> str | None:
        """The generation a request beginning now begins in, without a read: this process's own
        for a store of its own; for a shared store, ``id`` when the store was seen naming it
        lately (see the module), else None: ``await read(store)``."""
        if not spans_workers(store):
            return self.id
        held = self._watched.recent() if self._watched is not None and self._watched_in is store else None
        return self.id if isinstance(held, dict) and held.get("id") == self.id else None

    async def read(self, store: StateStore) -> str:
        """The generation a shared ``store`` names now, noted in ``id``. A store that names none is
        given one: this process's own if it has never seen another (then none of its states can
        rely on a result kept before), a new one otherwise."""
        asked_at = time.monotonic()
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
        if self._watched_in is not store:  # the heartbeat reads it from now on, if it reads keys
            self._watched = store.watch(GENERATION) if isinstance(store, SharedState) else None
            self._watched_in = store
        if self._watched is not None:
            self._watched.saw({"id": generation}, asked_at)  # a read as good as the heartbeat's
        return generation
