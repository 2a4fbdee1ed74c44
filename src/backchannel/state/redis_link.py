"""The connection to Redis that ``RedisState`` and its parts share, and the one place where
Redis's failures become ``StateUnavailable``.

Every network wait is bounded: connecting takes at most ``timeout`` seconds, and so does
each call as a whole (``bounded``); a command is retried once, at once, only when its
connection turned out to be dead (a pooled connection from before a Redis restart). A call
therefore fails within about two ``timeout`` s whatever Redis does, and never hangs.

With ``cluster`` the client is redis-py's ``RedisCluster``, which learns the nodes from the one
at ``url`` and sends each command to the master of its key's slot; a command of several keys (a
script) must keep them in one slot, which the callers' hash tags do. Pub/sub is not sharded:
a message published on any node reaches the subscribers of every node, so the subscriber keeps
one connection, to the node at ``url`` (``new_connection``).
"""

from __future__ import annotations

__all__ = ["DOWN", "Link", "hash_tagged", "stop_task"]

import asyncio
import contextlib
import logging
import urllib.parse
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar, cast

import redis.asyncio
import redis.exceptions
from redis.asyncio.connection import Connection
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from .shared import StateUnavailable

T = TypeVar("T")

#: What a call to an unreachable, restarting or overloaded Redis raises (``BusyLoadingError``,
#: Redis loading its data after a restart, is a ``ConnectionError``).
DOWN: tuple[type[BaseException], ...] = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    TimeoutError,
    OSError,
)


def hash_tagged(name: str) -> str:
    """``name`` as a Redis Cluster hash tag: itself when it already holds one (``{...}``
    with something inside), else ``{name}``, so every key built on it lands in one slot."""
    opening = name.find("{")
    if opening >= 0:
        closing = name.find("}", opening + 1)
        if closing > opening + 1:
            return name
    return "{" + name + "}"


async def stop_task(task: asyncio.Task[None]) -> None:
    """Cancel ``task`` and wait until it has ended. redis-py wraps each socket write in
    ``asyncio.wait_for``, which on Python 3.11 can swallow a cancellation that arrives as
    the write completes (CPython gh-86296, fixed in 3.12): the task then goes on as if
    nothing happened. So cancel again until it is done."""
    while not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=0.1)
    if not task.cancelled() and task.exception() is not None:
        logging.getLogger("backchannel.state").error("a shared-state task had failed", exc_info=task.exception())


class Link:
    """One Redis client (a pool of connections) for ``url``, with bounded waits, plus the
    words for its failures. ``new_connection()`` gives a connection outside the pool, for
    the subscriber, which keeps one open for as long as the process runs."""

    def __init__(self, url: str, *, timeout: float, cluster: bool = False) -> None:
        # No socket_timeout: redis-py bounds each read and each write with it, a task per write
        # on Python 3.11 (``asyncio.wait_for``), a third of a command's cost. ``bounded`` puts
        # one deadline on the whole call instead; a call cut short leaves its connection closed.
        options: dict[str, Any] = {
            "socket_connect_timeout": timeout,
            # A pooled connection may have died with a Redis restart: one immediate retry on
            # a fresh connection; a timeout is not retried (it already cost `timeout`).
            "retry": Retry(NoBackoff(), 1, supported_errors=(redis.exceptions.ConnectionError,)),
            "protocol": 2,  # the subscriber reads RESP2 pushes (arrays) itself
        }
        self.cluster = cluster
        self.client: redis.asyncio.Redis
        if cluster:
            # Typed as the plain client: what RedisState calls (commands, scripts, a pipeline of
            # commands) takes the same arguments on both; redis-py types scripts for Redis only.
            self.client = cast("redis.asyncio.Redis", redis.asyncio.RedisCluster.from_url(url, **options))
            seed = urllib.parse.urlsplit(url)
            self._seed: dict[str, Any] = {"host": seed.hostname or "localhost", "port": seed.port or 6379}
            self.where = f"Redis Cluster at {self._seed['host']}:{self._seed['port']}"
        else:
            self.client = redis.asyncio.Redis.from_url(url, **options)
            settings = self.client.connection_pool.connection_kwargs
            if "path" in settings:
                self.where = f"Redis at {settings['path']}"
            else:
                self.where = f"Redis at {settings.get('host', 'localhost')}:{settings.get('port', 6379)}"
        self.timeout = timeout
        #: Called each time a call (or the subscriber) finds its connection to Redis gone: Redis
        #: may come back empty, so what was read of it before no longer counts (``Watched``).
        self.on_lost: Callable[[], None] | None = None

    def lost(self) -> None:
        """Say that a connection to Redis was lost (``on_lost``)."""
        if self.on_lost is not None:
            self.on_lost()

    def new_connection(self) -> Connection:
        """A connection of its own (outside the pool), to Redis or, on a cluster, to the seed node."""
        if self.cluster:
            return Connection(**self._seed, socket_connect_timeout=self.timeout, protocol=2)
        connection: Connection = self.client.connection_pool.make_connection()  # type: ignore[no-untyped-call]
        return connection

    async def publish(self, channel: str, message: bytes) -> int:
        """``PUBLISH``; its count is of the subscribers of the node that serves it, so on a cluster
        it goes to the seed node, where every worker's subscriber is."""
        if not self.cluster:
            return int(await self.call("PUBLISH", channel, message))
        cluster = cast("redis.asyncio.RedisCluster", self.client)

        async def seeded() -> int:
            node = cluster.get_node(host=self._seed["host"], port=self._seed["port"])
            if node is None:  # the client learns the nodes at its first command
                await cluster.initialize()
                node = cluster.get_node(host=self._seed["host"], port=self._seed["port"])
            return int(await cluster.execute_command("PUBLISH", channel, message, target_nodes=node))

        return await self.bounded(seeded())

    async def call(self, *command: Any) -> Any:
        """Run one Redis command; ``StateUnavailable`` when Redis cannot be reached."""
        return await self.bounded(self.client.execute_command(*command))  # type: ignore[no-untyped-call]

    async def bounded(self, work: Awaitable[T]) -> T:
        """Await ``work`` (calls to Redis) for at most ``timeout`` seconds; ``StateUnavailable``
        when Redis cannot be reached or does not answer in time."""
        with self.calling():
            async with asyncio.timeout(self.timeout):
                return await work

    def unavailable(self, error: BaseException | None = None) -> StateUnavailable:
        """The error a caller gets while Redis cannot be reached (``error`` is logged by
        whoever catches it, not shown to the client)."""
        detail = f" ({type(error).__name__})" if error is not None else ""
        return StateUnavailable(f"the server's shared state ({self.where}) is unreachable{detail}; try again shortly")

    @contextlib.contextmanager
    def calling(self) -> Iterator[None]:
        """Around every call to Redis: its failures to reach it become ``StateUnavailable``."""
        try:
            yield
        except DOWN as error:
            self.lost()
            raise self.unavailable(error) from error

    async def aclose(self) -> None:
        with contextlib.suppress(*DOWN):
            await self.client.aclose()
