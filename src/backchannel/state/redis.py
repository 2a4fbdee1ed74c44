"""``RedisState``: the shared state of a fleet of worker processes, in one Redis.

Layout (``bc:`` is the default prefix; callers put Redis Cluster hash tags in their own
names, ``{session-id}`` say, where keys must share a slot):

- a key: ``bc:<key>``, a string ``<bucket set>\\n<JSON>`` with a TTL (``PX``). ``add`` with a
  bucket is one script: ``SET NX PX`` and the bucket's sorted set ``bc:bucket:{<bucket>}``
  scored by expiry, trimmed, counted and added to atomically. Under Redis Cluster the
  bucket's keys must carry the bucket's hash tag (the bucket name when it holds one);
- a pool: the sorted set ``bc:pool:{<pool>}`` of its members scored by expiry, trimmed,
  counted and added to by one script (``claim``); it has no keys of its own;
- a log: the stream ``bc:<log>``, entry ids ``<position>-1``, a TTL renewed by each append;
- a channel: ``bc:<channel>`` (pub/sub keeps no keys);
- a worker's lease: ``bc:worker:{<worker id>}``, renewed every ``heartbeat`` s, ``lease`` s long;
  the keys ``watch``ed are read with each renewal, in the same round trip (a pipeline).

Every key has a TTL, so Redis returns to its baseline key count once sessions end or
expire. Needs Redis 6.2 or newer (``GETDEL``) and ``pip install 'backchannel[redis]'``.
"""

from __future__ import annotations

__all__ = ["RedisState"]

import asyncio
import contextlib
import logging
import math
import os
import socket
import time
from collections.abc import Callable
from typing import Any

import msgspec

try:
    import redis  # noqa: F401 - only to say what is missing
except ImportError as missing:  # pragma: no cover - depends on the installation
    raise ImportError("RedisState needs redis-py: pip install 'backchannel[redis]'") from missing

from .redis_channels import Subscriber
from .redis_link import Link, hash_tagged, stop_task
from .redis_logs import LogWriter, read_log
from .shared import SharedState, StateUnavailable, Watched, new_worker_id
from .store import Added

logger = logging.getLogger("backchannel.state")

_encode = msgspec.json.encode
_decode = msgspec.json.decode

# KEYS[1] the key, KEYS[2] its bucket's sorted set; ARGV[1] the JSON, ARGV[2] the TTL in
# ms, ARGV[3] the bucket's limit (-1: none). Scores are Redis's clock, the clock of PX.
_ADD = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 'exists' end
local ttl = tonumber(ARGV[2])
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now_ms)
local limit = tonumber(ARGV[3])
if limit >= 0 and redis.call('ZCARD', KEYS[2]) >= limit then return 'full' end
redis.call('ZADD', KEYS[2], now_ms + ttl, KEYS[1])
if redis.call('PTTL', KEYS[2]) < ttl then redis.call('PEXPIRE', KEYS[2], ttl) end
redis.call('SET', KEYS[1], KEYS[2] .. '\\n' .. ARGV[1], 'PX', ttl)
return 'added'
"""

# KEYS[1] the key; ARGV[1] the JSON, ARGV[2] the TTL in ms. Keeps the key's bucket and
# returns it ('' for none) with Redis's time in ms, for the bucket's new score.
_PUT = """
local old = redis.call('GET', KEYS[1])
local bucket = ''
if old then bucket = string.match(old, '^(.*)\\n') or '' end
redis.call('SET', KEYS[1], bucket .. '\\n' .. ARGV[1], 'PX', ARGV[2])
local now = redis.call('TIME')
return {bucket, tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)}
"""

# KEYS[1] a bucket's sorted set; ARGV[1] the member, ARGV[2] its new expiry (ms), ARGV[3] the TTL.
_TOUCH = """
redis.call('ZADD', KEYS[1], 'XX', ARGV[2], ARGV[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
"""


# KEYS[1] a pool's sorted set; ARGV[1] the member, ARGV[2] its TTL in ms, ARGV[3] the pool's limit.
_CLAIM = """
local ttl = tonumber(ARGV[2])
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now_ms)
local outcome = 'added'
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  outcome = 'exists'
elseif redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return 'full'
end
redis.call('ZADD', KEYS[1], now_ms + ttl, ARGV[1])
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return outcome
"""


def _ms(seconds: float) -> int:
    return max(1, math.ceil(seconds * 1000))


def _value(stored: bytes) -> Any:
    return _decode(stored.rpartition(b"\n")[2])


def _watched_value(stored: bytes | None) -> Any:
    """A watched key's value; None for one absent, or not ours (the heartbeat must go on)."""
    try:
        return None if stored is None else _value(stored)
    except msgspec.DecodeError:
        return None


class RedisState(SharedState):
    """The ``SharedState`` of many processes: one Redis at ``url``, names under ``prefix``.

    ``heartbeat``: seconds between renewals of this worker's lease; ``lease``: how long a
    lease lasts (a worker killed without closing is not ``alive`` after at most that);
    ``timeout``: the bound on connecting and on each socket read or write. While Redis
    is unreachable every call raises ``StateUnavailable`` after at most about two
    ``timeout`` s; the heartbeat and the subscriber keep trying and recover by themselves.
    ``cluster``: ``url`` is one node of a Redis Cluster (``redis_link.Link`` says how it is used).
    """

    def __init__(
        self,
        url: str = "redis://127.0.0.1:6379/0",
        *,
        prefix: str = "bc:",
        heartbeat: float = 0.5,
        lease: float = 1.5,
        timeout: float = 1.0,
        cluster: bool = False,
    ) -> None:
        if not 0 < heartbeat < lease:
            raise ValueError(f"the heartbeat ({heartbeat} s) must be positive and shorter than the lease ({lease} s)")
        if "{" in prefix or "}" in prefix:
            raise ValueError(f"the prefix {prefix!r} must not hold a hash tag: the callers' names carry theirs")
        self.worker_id = new_worker_id()
        self.spans_workers = True
        self.prefix = prefix
        self.heartbeat = heartbeat
        self.lease = lease
        self._link = Link(url, timeout=timeout, cluster=cluster)
        self._watched: dict[str, Watched] = {}
        self._link.on_lost = self._lost
        client = self._link.client
        self._add_script = client.register_script(_ADD)
        self._put_script = client.register_script(_PUT)
        self._touch_script = client.register_script(_TOUCH)
        self._claim_script = client.register_script(_CLAIM)
        self._subscriber = Subscriber(self._link)
        self._logs = LogWriter(self._link)
        self._lease_key = f"{prefix}worker:{{{self.worker_id}}}"
        self._holder = f"{socket.gethostname()} pid {os.getpid()}"  # for a person reading the keys
        self._heartbeat_task: asyncio.Task[None] | None = None
        self._started = False
        self._closed = False

    def __repr__(self) -> str:
        return f"RedisState({self._link.where!r}, worker_id={self.worker_id!r})"

    # ------------------------------------------------------------ keys

    async def get(self, key: str) -> Any:
        stored = await self._link.call("GET", self.prefix + key)
        return None if stored is None else _value(stored)

    async def add(
        self, key: str, value: Any, *, ttl: float, bucket: str | None = None, limit: int | None = None
    ) -> Added:
        data = _encode(value)
        name = self.prefix + key
        if bucket is None:
            done = await self._link.call("SET", name, b"\n" + data, "PX", _ms(ttl), "NX")
            return "added" if done else "exists"
        members = f"{self.prefix}bucket:{hash_tagged(bucket)}"
        outcome = await self._link.bounded(
            self._add_script(keys=[name, members], args=[data, _ms(ttl), -1 if limit is None else limit])
        )
        result: Added = outcome.decode()
        return result

    async def put(self, key: str, value: Any, *, ttl: float) -> None:
        data = _encode(value)
        name = self.prefix + key
        members, now_ms = await self._link.bounded(self._put_script(keys=[name], args=[data, _ms(ttl)]))
        if members:
            await self._link.bounded(self._touch_script(keys=[members], args=[name, now_ms + _ms(ttl), _ms(ttl)]))

    async def delete(self, key: str) -> None:
        name = self.prefix + key
        stored = await self._link.call("GETDEL", name)
        members = stored.rpartition(b"\n")[0] if stored is not None else b""
        if members:
            await self._link.call("ZREM", members, name)

    async def claim(self, pool: str, member: str, *, ttl: float, limit: int) -> Added:
        members = f"{self.prefix}pool:{hash_tagged(pool)}"
        outcome = await self._link.bounded(self._claim_script(keys=[members], args=[member, _ms(ttl), limit]))
        result: Added = outcome.decode()
        return result

    async def release(self, pool: str, member: str) -> None:
        await self._link.call("ZREM", f"{self.prefix}pool:{hash_tagged(pool)}", member)

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        if self._closed:
            raise RuntimeError(f"worker {self.worker_id} was closed; make a new RedisState")
        if self._started:
            return
        await self._renew_lease()
        self._started = True
        self._heartbeat_task = asyncio.get_running_loop().create_task(
            self._beat(), name=f"backchannel-heartbeat-{self.worker_id}"
        )
        self._subscriber.start()

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        task, self._heartbeat_task = self._heartbeat_task, None
        if task is not None:
            await stop_task(task)
        await self._subscriber.stop()
        await self._logs.aclose(self._link.timeout)
        if self._started:
            with contextlib.suppress(StateUnavailable):
                await self._link.call("DEL", self._lease_key)
        await self._link.aclose()

    async def _renew_lease(self) -> None:
        renewal = ("SET", self._lease_key, self._holder, "PX", _ms(self.lease))
        if not self._watched:
            await self._link.call(*renewal)
            return
        watched = list(self._watched.values())
        pipeline = self._link.client.pipeline(transaction=False)
        pipeline.execute_command(*renewal)
        for each in watched:
            pipeline.execute_command("GET", self.prefix + each.key)
        asked_at = time.monotonic()
        replies = await self._link.bounded(pipeline.execute())
        for each, stored in zip(watched, replies[1:], strict=True):
            each.saw(_watched_value(stored), asked_at)

    def _lost(self) -> None:
        for each in self._watched.values():
            each.lost()

    async def _beat(self) -> None:
        down = False
        while True:
            await asyncio.sleep(self.heartbeat)
            try:
                await self._renew_lease()
            except StateUnavailable as error:
                if not down:
                    logger.warning("shared state: worker %s cannot renew its lease: %s", self.worker_id, error.message)
                    down = True
                continue
            if down:
                logger.info("shared state: worker %s holds its lease again", self.worker_id)
                down = False

    # ------------------------------------------------------------ messages

    async def publish(self, channel: str, message: bytes) -> int:
        return await self._link.publish(self.prefix + channel, message)

    def listen(self, channel: str, deliver: Callable[[bytes], None]) -> Callable[[], None]:
        if self._closed:
            return lambda: None
        return self._subscriber.listen((self.prefix + channel).encode(), deliver)

    async def listening(self, channel: str, *, timeout: float = 2.0) -> None:
        if not self._started:
            raise RuntimeError("listening() needs a started RedisState: await state.start() first")
        await self._subscriber.listening((self.prefix + channel).encode(), timeout)

    # ------------------------------------------------------------ logs

    def log_append(self, log: str, position: int, data: bytes, *, ttl: float) -> None:
        self._logs.append(self.prefix + log, position, data, ttl)

    async def log_read(self, log: str, after: int, *, wait: float = 0.0) -> list[tuple[int, bytes]]:
        await self._logs.flush()
        return await read_log(self._link, self.prefix + log, after, wait)

    async def log_delete(self, log: str) -> None:
        # Queued behind the appends: deletes made at once (a session forgetting its old
        # streams) share one round trip; the flush says whether it was done.
        self._logs.delete(self.prefix + log)
        await self._logs.flush()

    async def flush(self) -> None:
        await self._logs.flush()

    # ------------------------------------------------------------ liveness

    def watch(self, key: str) -> Watched:
        watched = self._watched.get(key)
        if watched is None:
            watched = self._watched[key] = Watched(key, self.lease)
        return watched

    async def alive(self, worker_id: str) -> bool:
        return bool(await self._link.call("EXISTS", f"{self.prefix}worker:{{{worker_id}}}"))
