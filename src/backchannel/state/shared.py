"""What a fleet of workers shares: keys, messages, logs and liveness, behind one interface.

A server that runs as several processes (behind a load balancer) needs more than a
key-value store: a message for work in flight must reach the worker running it, a
resumable SSE stream must be readable from any worker, and a worker must be able to
tell that another one is gone. ``SharedState`` adds those three to ``StateStore``:

- **messages**: ``publish(channel, message)`` / ``listen(channel, deliver)``; at most
  once, in order per (publisher, channel), to every worker listening at that moment;
- **logs**: append-only, one writer per log, positions chosen by the writer; readers
  anywhere read what comes after a position, or wait for it;
- **liveness**: each worker holds a lease that its heartbeat renews; ``alive(worker_id)``.
  A store that spans processes may also read a few keys with each renewal, in the same round
  trip (``watch``): what a worker must know of the store at every request, without a read each.

Two implementations: ``MemoryState`` (``memory.py``), the default, for one process (and,
with a shared ``MemoryHub``, several workers in one process for fast tests), and
``RedisState`` (``redis.py``) for many processes. Whatever cannot be reached raises
``StateUnavailable`` (-32603), which a handler lets through: the client sees a clear
error and retries later.
"""

from __future__ import annotations

__all__ = ["Listener", "SharedState", "StateUnavailable", "Watched", "new_worker_id"]

import abc
import logging
import math
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

from ..types.errors import StateUnavailable  # (defined in the errors tree; re-exported here)
from .store import StateStore

logger = logging.getLogger("backchannel.state")


def new_worker_id() -> str:
    """8 URL-safe characters (48 random bits): short in logs and keys, unique in a fleet."""
    import secrets  # (hashlib's OpenSSL comes with it: loaded by a first fleet, not by every start)

    return secrets.token_urlsafe(6)


class Listener:
    """One registration of ``listen``: its ``deliver`` and whether ``stop`` was called.
    Implementations call ``receive`` for each message, on the event loop."""

    __slots__ = ("active", "deliver")

    def __init__(self, deliver: Callable[[bytes], None]) -> None:
        self.deliver = deliver
        self.active = True

    def receive(self, message: bytes) -> None:
        if not self.active:  # stopped after the message was on its way
            return
        try:
            self.deliver(message)
        except Exception:
            logger.exception("a listener failed on a message; the other listeners still get it")


class Watched:
    """One key of a ``SharedState`` as this worker last read it (``SharedState.watch``).

    ``recent()`` is its value while that still counts as the store's value now: read at most
    ``within`` seconds ago, and not before this worker last lost its connection to the store
    (a store that restarts may come back without it). Otherwise it is None: read the key."""

    __slots__ = ("_lost_at", "_read_at", "_value", "key", "within")

    def __init__(self, key: str, within: float) -> None:
        self.key = key
        self.within = within
        self._value: Any = None
        self._read_at = -math.inf
        self._lost_at = -math.inf

    def saw(self, value: Any, asked_at: float) -> None:
        """Note that the store held ``value`` (None: nothing) under the key, read by a call sent
        at ``asked_at`` (``time.monotonic()``). A call sent before a loss of the connection, or
        before the last read noted, says nothing new and is ignored."""
        if asked_at > self._lost_at and asked_at >= self._read_at:
            self._value = value
            self._read_at = asked_at

    def lost(self) -> None:
        """This worker lost its connection to the store: what it read before no longer counts."""
        self._lost_at = time.monotonic()

    def recent(self) -> Any:
        """The value read within ``within`` seconds and since the connection was last lost; None
        when there is none (or the key holds nothing): the caller reads the key itself."""
        if self._read_at <= self._lost_at or time.monotonic() - self._read_at > self.within:
            return None
        return self._value


class SharedState(StateStore):
    """The state a fleet of workers shares; see the module's docstring for the three parts.

    Lifecycle: construct, ``await start()`` (or ``async with state:``), use, ``await aclose()``.
    Key-value calls (``get``/``add``/``put``/``delete``) and ``publish`` work before ``start``;
    ``start`` begins the heartbeat (so ``alive(worker_id)`` turns True) and the subscriber.
    Every key has a TTL: when the sessions end or expire, the store returns to its baseline.
    """

    #: This process's name in the fleet: random, unique, short (8 URL-safe characters).
    worker_id: str
    #: Whether other workers may share this state (so messages may have to travel between
    #: them): False for a ``MemoryState`` of its own, True for one on a shared hub and for Redis.
    spans_workers: bool

    async def __aenter__(self) -> SharedState:
        await self.start()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self.aclose()

    # ------------------------------------------------------------ lifecycle

    @abc.abstractmethod
    async def start(self) -> None:
        """Connect, take this worker's lease and start renewing it, and start delivering
        messages to listeners. Idempotent. Raises ``StateUnavailable`` when the store
        cannot be reached (nothing is left running then; call it again later)."""

    @abc.abstractmethod
    async def aclose(self) -> None:
        """Write what ``log_append`` queued (briefly, if the store is reachable), stop
        the heartbeat and the subscriber, and give up this worker's lease at once, so
        ``alive(worker_id)`` turns False everywhere. Idempotent."""

    # ------------------------------------------------------------ messages

    @abc.abstractmethod
    async def publish(self, channel: str, message: bytes) -> int:
        """Send ``message`` to every worker listening on ``channel`` now; how many workers
        that is (0: nobody listens, so the message is gone). At most once, in order per
        (publisher, channel); a worker that starts listening later never sees it."""

    @abc.abstractmethod
    def listen(self, channel: str, deliver: Callable[[bytes], None]) -> Callable[[], None]:
        """Call ``deliver(message)`` on the event loop for each message published on
        ``channel`` from now on; returns ``stop``, which ends it (idempotent). Several
        listeners on one channel each get every message; an exception in ``deliver`` is
        logged and does not stop the others. Registration is immediate, but a store
        shared between processes takes a round trip to subscribe: ``await
        listening(channel)`` before telling anyone to publish."""

    @abc.abstractmethod
    async def listening(self, channel: str, *, timeout: float = 2.0) -> None:
        """Return once messages published on ``channel`` reach this worker's listeners.
        Raises ``StateUnavailable`` after ``timeout`` seconds (store unreachable), and
        ``ValueError`` when nothing in this worker listens on ``channel``."""

    # ------------------------------------------------------------ logs

    @abc.abstractmethod
    def log_append(self, log: str, position: int, data: bytes, *, ttl: float) -> None:
        """Append ``data`` at ``position`` to ``log`` and keep the log ``ttl`` seconds
        after this append. Never blocks: it is called on the delivery path of every SSE
        event. A store shared between processes queues the write (``flush`` waits for
        it). One writer per log; positions must increase (1, 2, 3...): an append at or
        below the log's last position is dropped (and logged)."""

    @abc.abstractmethod
    async def log_read(self, log: str, after: int, *, wait: float = 0.0) -> list[tuple[int, bytes]]:
        """The entries of ``log`` after position ``after``, in order, as ``(position, data)``.
        With ``wait`` > 0 and none there yet, wait up to ``wait`` seconds for the next
        append (from any worker) and return what arrived, possibly nothing. Sees this
        worker's own queued appends."""

    @abc.abstractmethod
    async def log_delete(self, log: str) -> None:
        """Forget ``log`` (after this worker's queued appends to it are written)."""

    @abc.abstractmethod
    async def flush(self) -> None:
        """Wait until every append queued so far is written. Raises ``StateUnavailable``
        when some of them could not be (the store was unreachable; they are dropped)."""

    # ------------------------------------------------------------ liveness

    def watch(self, key: str) -> Watched | None:
        """The key ``key`` as this worker's heartbeat reads it, with each renewal of its lease and
        in the same round trip (so at no cost per request), kept while the process runs; None
        when this store reads no keys with its heartbeat: read the key when it is needed. Values
        are fresh for at most the lease, and never across a lost connection (``Watched``)."""
        return None

    @abc.abstractmethod
    async def alive(self, worker_id: str) -> bool:
        """Whether ``worker_id`` holds its lease: it has started and has not closed, and,
        across processes, renewed its lease recently (a worker killed without closing
        turns False within the lease, 1.5 s by default)."""
