"""Messages between workers over Redis pub/sub: one subscriber connection per process.

``listen`` only records what is wanted and wakes the subscriber task, which brings the
connection's subscriptions in line (``SUBSCRIBE``/``UNSUBSCRIBE``) while a reader task
delivers what arrives, in order, on the event loop. When Redis goes away the connection
is rebuilt with backoff and every wanted channel is subscribed again; ``listening``
reports when a channel's subscription is confirmed on the current connection. A silent
connection is pinged, and one that stops answering is replaced.
"""

from __future__ import annotations

__all__ = ["Subscriber"]

import asyncio
import contextlib
import logging
from collections.abc import Callable

from redis.asyncio.connection import Connection

from .redis_link import DOWN, Link, stop_task
from .shared import Listener

logger = logging.getLogger("backchannel.state")

_FIRST_BACKOFF = 0.05  # seconds before reconnecting after a failure; doubles up to:
_LAST_BACKOFF = 1.0


class Subscriber:
    """The listeners of one ``RedisState``, keyed by full channel name (prefix included)."""

    def __init__(self, link: Link, *, ping_every: float = 1.0) -> None:
        self._link = link
        self._ping_every = ping_every
        self._listeners: dict[bytes, list[Listener]] = {}
        self._sent: set[bytes] = set()  # SUBSCRIBE sent on the current connection
        self._ready: set[bytes] = set()  # ... and confirmed by Redis
        self._waiters: dict[bytes, list[asyncio.Future[None]]] = {}
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    # ------------------------------------------------------------ for RedisState

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="backchannel-redis-subscriber")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            await stop_task(task)
        for listeners in self._listeners.values():
            for listener in listeners:
                listener.active = False
        self._listeners.clear()

    def listen(self, channel: bytes, deliver: Callable[[bytes], None]) -> Callable[[], None]:
        listener = Listener(deliver)
        self._listeners.setdefault(channel, []).append(listener)
        self._changed.set()

        def stop() -> None:
            if not listener.active:
                return
            listener.active = False
            mine = self._listeners.get(channel)
            if mine is not None and listener in mine:
                mine.remove(listener)
                if not mine:
                    del self._listeners[channel]
                    self._changed.set()

        return stop

    async def listening(self, channel: bytes, timeout: float) -> None:
        if channel not in self._listeners:
            raise ValueError(f"nothing in this worker listens on {channel.decode(errors='replace')!r}")
        if channel in self._ready:
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.setdefault(channel, []).append(waiter)
        try:
            await asyncio.wait_for(waiter, timeout)
        except TimeoutError:
            raise self._link.unavailable() from None
        finally:
            waiters = self._waiters.get(channel, [])
            if waiter in waiters:
                waiters.remove(waiter)

    # ------------------------------------------------------------ the task

    async def _run(self) -> None:
        backoff = _FIRST_BACKOFF
        down = False
        while True:
            connection = self._link.new_connection()
            try:
                await connection.connect()  # type: ignore[no-untyped-call]
                if down:
                    logger.info("shared state: %s is reachable again; subscribing anew", self._link.where)
                    down = False
                backoff = _FIRST_BACKOFF
                await self._serve(connection)
            except DOWN as error:
                if not down:
                    logger.warning("shared state: lost the subscriber connection to %s (%r)", self._link.where, error)
                    down = True
            except Exception:  # a reply we did not expect: start over rather than stop delivering
                logger.exception("shared state: the subscriber failed; reconnecting")
            finally:
                self._sent.clear()
                self._ready.clear()
                await connection.disconnect(nowait=True)
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, _LAST_BACKOFF)

    async def _serve(self, connection: Connection) -> None:
        reader = asyncio.get_running_loop().create_task(self._read(connection))
        try:
            while True:
                self._changed.clear()
                await self._reconcile(connection)
                await self._changed.wait()
                if reader.done():
                    reader.result()  # raises what ended it
                    raise ConnectionError("the subscriber connection ended")
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, *DOWN):
                await reader

    async def _reconcile(self, connection: Connection) -> None:
        wanted = self._listeners.keys()
        subscribe = [channel for channel in wanted if channel not in self._sent]
        unsubscribe = [channel for channel in self._sent if channel not in wanted]
        # Marked before the await: the reader may see Redis confirm while send_command yields.
        if subscribe:
            self._sent.update(subscribe)
            await connection.send_command("SUBSCRIBE", *subscribe, check_health=False)
        if unsubscribe:
            self._sent.difference_update(unsubscribe)
            self._ready.difference_update(unsubscribe)
            await connection.send_command("UNSUBSCRIBE", *unsubscribe, check_health=False)

    async def _read(self, connection: Connection) -> None:
        try:
            unanswered = 0
            while True:
                response = await connection.read_response(timeout=self._ping_every, disconnect_on_error=False)
                if response is None:  # quiet for ping_every: ask, and give up after two unanswered pings
                    if unanswered >= 2:
                        raise TimeoutError(f"{self._link.where} stopped answering the subscriber's PING")
                    await connection.send_command("PING", check_health=False)
                    unanswered += 1
                    continue
                unanswered = 0
                kind = response[0]
                if kind == b"message":
                    for listener in tuple(self._listeners.get(response[1], ())):
                        listener.receive(response[2])
                elif kind == b"subscribe":
                    self._confirmed(response[1])
        except DOWN:
            self._link.lost()  # the first to hear of a Redis restart: it may come back empty
            raise
        finally:
            self._changed.set()  # wake _serve, which sees the reader gone and reconnects

    def _confirmed(self, channel: bytes) -> None:
        if channel not in self._sent:  # unsubscribed again meanwhile
            return
        self._ready.add(channel)
        for waiter in self._waiters.pop(channel, ()):
            if not waiter.done():
                waiter.set_result(None)
