"""What a server keeps between requests, behind one small interface.

``ctx.once`` results and the memory of declined forms live in a ``StateStore``.
The interface is shaped so that a store shared by many worker processes (Redis,
say) can implement it: every method is async, keys are strings, values are JSON
data (dicts, lists, strings, numbers, booleans; never a bare ``None``, which
reads as "absent"), every key has a TTL, and ``add`` is an atomic "set if
absent" that also counts the key in a *bucket* with a bound, so one caller
cannot fill the store for everyone. *Pools* (``claim``/``release``) count
members without values, each with a TTL, under a bound of their own: what all
callers together may keep of one kind (every task, every ``ctx.once`` result),
so that one kind cannot fill the store for the others. Nothing relies on Python
object identity: a value read back is a fresh copy.

``MemoryStore`` is the in-process implementation and the default. It is bounded
(``max_keys``) and takes a ``clock``, so tests move time instead of sleeping
out a TTL. ``SharedState`` (``shared.py``) extends this interface with what a
fleet of workers shares besides keys: messages, logs and liveness.
"""

from __future__ import annotations

__all__ = ["Added", "MemoryStore", "StateStore", "StoreFull", "slot_of"]

import abc
import heapq
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from ..types.errors import StoreFull  # (defined in the errors tree; re-exported here)

#: What ``StateStore.add`` did: stored the value, found the key already there, or
#: refused because the bucket (or the whole store) holds as many keys as allowed.
Added = Literal["added", "exists", "full"]

_encode = msgspec.json.encode
_decode = msgspec.json.decode


def slot_of(scope: str) -> str:
    """A Redis Cluster hash tag for ``scope`` (``{<16 hex digits>}``): the keys of one caller or
    session and the bucket counting them carry it, so they share a node and a script can touch
    them together. Hashed, so that braces in a principal's name cannot break the tag."""
    import hashlib  # (OpenSSL's 0.6 MiB: loaded when a first caller keeps state, not at start)

    return "{" + hashlib.sha256(scope.encode()).hexdigest()[:16] + "}"


class StateStore(abc.ABC):
    """Per-server state with a TTL on every key.

    Implementations must make ``add`` atomic (two callers adding one key: exactly
    one sees ``"added"``) and must count a bucket's keys only while they live. (In
    Redis, for instance: ``SET NX PX`` and a sorted set per bucket scored by expiry,
    trimmed, counted and added to in one script.)
    Values go in and come out as JSON data; a value that is not JSON raises
    ``TypeError`` (or ``msgspec.EncodeError``) from ``add``/``put``.
    """

    @abc.abstractmethod
    async def get(self, key: str) -> Any:
        """The value under ``key``, or None when it is absent or expired."""

    @abc.abstractmethod
    async def add(
        self, key: str, value: Any, *, ttl: float, bucket: str | None = None, limit: int | None = None
    ) -> Added:
        """Store ``value`` under ``key`` for ``ttl`` seconds unless the key exists.

        With ``bucket``, the key is counted in it while it lives, and when the bucket
        already holds ``limit`` keys nothing is stored (``"full"``)."""

    @abc.abstractmethod
    async def put(self, key: str, value: Any, *, ttl: float) -> None:
        """Store ``value`` under ``key`` for ``ttl`` seconds from now, replacing what is
        there; a key made by ``add`` stays in its bucket. Raises ``StoreFull`` when
        creating the key would pass the store's own bound."""

    @abc.abstractmethod
    async def delete(self, key: str) -> None:
        """Forget ``key`` (and its place in a bucket); nothing happens when it is absent."""

    # Pools have working defaults built on the four methods above (a key per member, counted in
    # a bucket), so a store written before them still works; the stores here keep no such keys.

    async def claim(self, pool: str, member: str, *, ttl: float, limit: int) -> Added:
        """Count ``member`` in ``pool`` for ``ttl`` seconds from now: ``"added"``; ``"full"`` (and
        nothing counted) when the pool already counts ``limit`` live members; ``"exists"`` when
        ``member`` is counted already, whose time then runs ``ttl`` from now. A pool holds no
        values and needs no key of the caller's: it bounds how many of one kind live at once."""
        key = f"pool:{pool}:{member}"
        added = await self.add(key, 1, ttl=ttl, bucket=f"pool:{pool}", limit=limit)
        if added == "exists":
            await self.put(key, 1, ttl=ttl)
        return added

    async def release(self, pool: str, member: str) -> None:
        """Stop counting ``member`` in ``pool`` (before its time passes); nothing happens when it
        is not counted."""
        await self.delete(f"pool:{pool}:{member}")

    async def full(self) -> bool:
        """Whether the store itself holds as many keys as it may (its own bound, not a bucket's),
        so that an ``add`` answered ``"full"`` can be told apart; False for a store without one."""
        return False


@dataclass(slots=True)
class _Entry:
    value: bytes
    expires: float
    bucket: str | None


@dataclass(slots=True)
class _Pool:
    members: dict[str, float]  # member -> expiry
    expiries: list[tuple[float, str]]  # a heap; entries whose member moved on are stale


class MemoryStore(StateStore):
    """The in-process ``StateStore``: at most ``max_keys`` live keys, TTLs measured on ``clock``.

    Expired keys are dropped as time passes (checked on every call), so a bucket's
    count and the store's size are those of live keys. Values are kept encoded as
    JSON, which checks them on the way in and hands out copies on the way out.
    Pools (``claim``) are kept beside the keys and do not count toward ``max_keys``.
    """

    def __init__(self, *, max_keys: int = 100_000, clock: Callable[[], float] = time.monotonic) -> None:
        if max_keys < 1:
            raise ValueError(f"max_keys must be a positive number, not {max_keys!r}")
        self.max_keys = max_keys
        self._clock = clock
        self._entries: dict[str, _Entry] = {}
        self._buckets: dict[str, set[str]] = {}
        # (expiry, key) for every TTL ever set; entries whose TTL moved on leave stale
        # items here, skipped when they surface and thrown away when they pile up.
        self._expiries: list[tuple[float, str]] = []
        self._pools: dict[str, _Pool] = {}
        self._pools_after_sweep = 0

    def __len__(self) -> int:
        self._expire(self._clock())
        return len(self._entries)

    def bucket_size(self, bucket: str) -> int:
        """How many live keys ``bucket`` holds."""
        self._expire(self._clock())
        return len(self._buckets.get(bucket, ()))

    async def get(self, key: str) -> Any:
        entry = self._live(key)
        return None if entry is None else _decode(entry.value)

    async def add(
        self, key: str, value: Any, *, ttl: float, bucket: str | None = None, limit: int | None = None
    ) -> Added:
        data = _encode(value)
        now = self._clock()
        self._expire(now)
        if key in self._entries:
            return "exists"
        if len(self._entries) >= self.max_keys:
            return "full"
        if bucket is not None and limit is not None and len(self._buckets.get(bucket, ())) >= limit:
            return "full"
        self._set(key, _Entry(data, now + ttl, bucket))
        if bucket is not None:
            self._buckets.setdefault(bucket, set()).add(key)
        return "added"

    async def put(self, key: str, value: Any, *, ttl: float) -> None:
        data = _encode(value)
        now = self._clock()
        self._expire(now)
        entry = self._entries.get(key)
        if entry is None:
            if len(self._entries) >= self.max_keys:
                raise StoreFull(f"the server's state store is full ({self.max_keys} keys); try again later")
            self._set(key, _Entry(data, now + ttl, None))
            return
        entry.value = data
        entry.expires = now + ttl
        heapq.heappush(self._expiries, (entry.expires, key))
        self._compact()

    async def delete(self, key: str) -> None:
        self._drop(key)

    async def claim(self, pool: str, member: str, *, ttl: float, limit: int) -> Added:
        now = self._clock()
        held = self._pools.get(pool)
        if held is None:
            # Pools nobody claims in again would pile up (one per address, say): sweep the empty
            # ones whenever their number has doubled since the last sweep (amortised O(1) a pool).
            if len(self._pools) > 2 * self._pools_after_sweep + 64:
                for name, other in list(self._pools.items()):
                    _trim(other, now)
                    if not other.members:
                        del self._pools[name]
                self._pools_after_sweep = len(self._pools)
            held = self._pools[pool] = _Pool({}, [])
        else:
            _trim(held, now)
        added: Added = "exists" if member in held.members else "added"
        if added == "added" and len(held.members) >= limit:
            return "full"
        expires = now + ttl
        held.members[member] = expires
        heapq.heappush(held.expiries, (expires, member))
        if len(held.expiries) > 2 * len(held.members) + 64:
            held.expiries = [(when, name) for name, when in held.members.items()]
            heapq.heapify(held.expiries)
        return added

    async def release(self, pool: str, member: str) -> None:
        held = self._pools.get(pool)
        if held is not None:
            held.members.pop(member, None)
            if not held.members:
                del self._pools[pool]

    async def full(self) -> bool:
        return len(self) >= self.max_keys

    def pool_size(self, pool: str) -> int:
        """How many live members ``pool`` counts."""
        held = self._pools.get(pool)
        if held is None:
            return 0
        _trim(held, self._clock())
        return len(held.members)

    # ------------------------------------------------------------ internals

    def _live(self, key: str) -> _Entry | None:
        self._expire(self._clock())
        return self._entries.get(key)

    def _set(self, key: str, entry: _Entry) -> None:
        self._entries[key] = entry
        heapq.heappush(self._expiries, (entry.expires, key))
        self._compact()

    def _drop(self, key: str) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None and entry.bucket is not None:
            members = self._buckets.get(entry.bucket)
            if members is not None:
                members.discard(key)
                if not members:
                    del self._buckets[entry.bucket]

    def _expire(self, now: float) -> None:
        heap = self._expiries
        while heap and heap[0][0] <= now:
            _, key = heapq.heappop(heap)
            entry = self._entries.get(key)
            if entry is not None and entry.expires <= now:
                self._drop(key)

    def _compact(self) -> None:
        if len(self._expiries) > 2 * len(self._entries) + 64:
            self._expiries = [(entry.expires, key) for key, entry in self._entries.items()]
            heapq.heapify(self._expiries)


def _trim(pool: _Pool, now: float) -> None:
    """Drop the members of ``pool`` whose time has passed (amortised O(log n) each)."""
    heap = pool.expiries
    while heap and heap[0][0] <= now:
        when, member = heapq.heappop(heap)
        if pool.members.get(member) == when:
            del pool.members[member]
