"""The registry of a host's handshake-era sessions: which are live, who may open one more, and
the reaper that ends the idle ones and those that never finished their handshake.

Each client (its principal, else its address: ``client_limits.py``) may hold a share of the
live sessions; a refusal says when a place really frees: the next end the registry will make by
itself. One session itself is ``sessions.HttpSession``.
"""

from __future__ import annotations

__all__ = ["SessionRegistry"]

import asyncio
import contextvars
import logging
import math
import secrets
import time
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from ..framing import http as H
from ..protocol.states import SessionState
from .authenticator import Principal
from .client_limits import ClientKey, retry_seconds, too_many
from .fleet import Fleet
from .limits import busy
from .streams import ResumableStream

if TYPE_CHECKING:
    pass
from .sessions import HttpSession

logger = logging.getLogger("backchannel.http")
_NEVER = -math.inf
_NO_STREAMS: Mapping[str, ResumableStream] = MappingProxyType({})
_HANDSHAKING = (SessionState.NEW, SessionState.INITIALIZING)
#: How long a computed "when does a place free" is reused for refusals at the server's cap.
_NEXT_FREE_KEPT = 1.0


class SessionRegistry:
    """Live sessions by id; ends the ones idle longer than ``idle_timeout`` seconds, and those
    that have not finished their handshake within ``handshake_timeout``.

    Idle: no response of the session open and nothing received for that long. The
    session's pending requests do not keep it: with no response open, nobody is
    there to see their answers or to answer what they ask.

    ``refusal`` says whether a client may open one more session: at most ``max_sessions`` in
    all and ``max_per_client`` per client (None: no limit).
    """

    def __init__(
        self,
        idle_timeout: float | None,
        fleet: Fleet,
        make_session: Callable[[str, Principal | None], HttpSession],
        *,
        handshake_timeout: float | None = None,
        max_sessions: int | None = None,
        max_per_client: int | None = None,
        retry_after: int = 5,
    ) -> None:
        self.idle_timeout = idle_timeout
        self.fleet = fleet
        self.make_session = make_session
        self.handshake_timeout = handshake_timeout
        self.max_sessions = max_sessions
        self.max_per_client = max_per_client
        self.retry_after = retry_after
        self.sessions: dict[str, HttpSession] = {}
        #: The sessions each client opened here (``HttpSession.client``), oldest first.
        self.by_client: dict[ClientKey, dict[str, HttpSession]] = {}
        self._reaper: asyncio.Task[None] | None = None
        self._next_reap = math.inf  # when the reaper looks next (``time.monotonic()``)
        self._taking_up: dict[str, asyncio.Future[HttpSession | None]] = {}
        # Sessions not past their handshake, by id, with the time they must be by (oldest first:
        # one timeout for all), and the one timer that ends the late ones.
        self._handshakes: dict[str, float] = {}
        self._handshake_timer: asyncio.TimerHandle | None = None
        self._ending: set[asyncio.Task[None]] = set()
        self._next_free: tuple[float, float | None] = (-math.inf, None)  # (computed at, when)

    @staticmethod
    def new_id() -> str:
        # 256 random bits as URL-safe base64: visible ASCII only, as the spec requires.
        return secrets.token_urlsafe(32)

    def refusal(self, client: ClientKey) -> H.Rejection | None:
        """Why ``client`` may not open one more session now (429: it holds its share; 503: the
        server is at its cap), with a ``Retry-After`` of when a place frees; else None."""
        mine = self.by_client.get(client)
        if self.max_per_client is not None and mine is not None and len(mine) >= self.max_per_client:
            free_at = self._first_end(mine.values(), time.monotonic())
            wait = self._retry_after(free_at)
            when = f"the first of them ends in {wait} s" if free_at is not None else "none of them ends by itself"
            return too_many(
                f"this client ({client[0]} {client[1]}) holds {len(mine)} live sessions, its share "
                f"of the server's; end one (DELETE), or retry later ({when})",
                wait,
            )
        if self.max_sessions is not None and len(self.sessions) >= self.max_sessions:
            now = time.monotonic()
            computed_at, free_at = self._next_free
            if now - computed_at > _NEXT_FREE_KEPT or (free_at is not None and free_at <= now):
                free_at = self._first_end(self.sessions.values(), now)
                self._next_free = (now, free_at)
            return busy(
                f"the server is at its limit of {self.max_sessions} live sessions; end one (DELETE) or retry later",
                self._retry_after(free_at),
            )
        return None

    def _retry_after(self, free_at: float | None) -> int:
        return retry_seconds(free_at - time.monotonic()) if free_at is not None else self.retry_after

    def _first_end(self, sessions: Iterable[HttpSession], now: float) -> float | None:
        """When the first of ``sessions`` will be ended by the registry itself (its handshake
        late, or idle at a reaper's look), or None if none will: each has a response open, or
        sessions have no idle timeout."""
        first = math.inf
        handshakes = self._handshakes
        idle = self.idle_timeout
        for session in sessions:
            if session.responses > 0:
                continue
            late = handshakes.get(session.session_id)
            if late is not None and session.protocol.state in _HANDSHAKING:
                first = min(first, late)
            elif idle is not None:
                first = min(first, self._reaped_at(session.last_active + idle))
        return None if first == math.inf else max(first, now)

    def _reaped_at(self, idle_from: float) -> float:
        """When the reaper ends a session idle from ``idle_from``: its first look after that."""
        assert self.idle_timeout is not None
        period = self._reap_period()
        looks = self._next_reap
        if looks == math.inf:
            return idle_from + period
        return looks + max(0, math.ceil((idle_from - looks) / period)) * period

    def _reap_period(self) -> float:
        assert self.idle_timeout is not None
        return min(self.idle_timeout / 2, 30.0)

    def open(self, principal: Principal | None, client: ClientKey | None = None) -> HttpSession:
        """A new session (for ``initialize``), held here, counted against ``client``'s share;
        it ends if its handshake is not finished within ``handshake_timeout``."""
        session = self.make_session(self.new_id(), principal)
        self.add(session)
        if client is not None:
            mine = self.by_client.get(client)
            if mine is None:
                mine = self.by_client[client] = {}
            else:  # the client's sessions share one key (an idle session is counted in bytes)
                client = next(iter(mine.values())).client
            session.client = client
            mine[session.session_id] = session
        if self.handshake_timeout is not None:
            self._handshakes[session.session_id] = time.monotonic() + self.handshake_timeout
            if self._handshake_timer is None:
                self._watch_handshakes(self.handshake_timeout)
        return session

    def add(self, session: HttpSession) -> None:
        self.sessions[session.session_id] = session
        session.ended_elsewhere = self.end_soon
        if self.idle_timeout is not None and (self._reaper is None or self._reaper.done()):
            self._reaper = asyncio.get_running_loop().create_task(self._reap())

    def get(self, session_id: str, principal: Principal | None) -> HttpSession | None:
        """The session, if this worker serves it and it belongs to ``principal``; otherwise None."""
        session = self.sessions.get(session_id)
        if session is None or session.principal != principal:
            return None
        return session

    async def find(self, session_id: str, principal: Principal | None) -> HttpSession | None:
        """The session, if it exists and belongs to ``principal`` (None: 404 for the caller).

        In a fleet, a session another worker opened is taken up here from its record the first
        time one of its requests lands here. The record's TTL is renewed as the session is used.
        """
        session = self.sessions.get(session_id)
        if session is None and self.fleet.shared:
            session = await self._take_up(session_id)
        if session is None or session.principal != principal:
            return None
        renew_every = self.idle_timeout / 4 if self.idle_timeout is not None else math.inf
        if self.fleet.shared and time.monotonic() - session.saved_at > renew_every:
            await session.save()
        return session

    async def _take_up(self, session_id: str) -> HttpSession | None:
        # Two POSTs of one session landing here at once take it up once.
        pending = self._taking_up.get(session_id)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[HttpSession | None] = asyncio.get_running_loop().create_future()
        self._taking_up[session_id] = future
        try:
            record = await self.fleet.load(session_id)
            session = None
            if record is not None:
                session = self.make_session(session_id, record.principal)
                session.take_up(record)
                session.saved_at = time.monotonic()
                session.saved_kept = record.kept  # as stored: its first request saves only a change
                await self.fleet.join(session_id, session)
                self.add(session)
            future.set_result(session)
            return session
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: the waiters (if any) get it too
            raise
        finally:
            del self._taking_up[session_id]

    def end_soon(self, session: HttpSession) -> None:
        """End ``session`` in a task of its own (another worker of the fleet ended it)."""
        if self.sessions.get(session.session_id) is session:
            asyncio.get_running_loop().create_task(self.end(session.session_id))

    async def end(self, session_id: str, error_type: str | None = None) -> None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            self._let_go(session)
            await session.end(error_type)

    def _let_go(self, session: HttpSession) -> None:
        """``session`` is out of ``sessions``: its place is free, for its client too."""
        if self._handshakes:
            self._handshakes.pop(session.session_id, None)
        client = session.client
        if client is not None:
            mine = self.by_client.get(client)
            if mine is not None:
                mine.pop(session.session_id, None)
                if not mine:
                    del self.by_client[client]

    async def end_all(self) -> None:
        for session_id in list(self.sessions):
            await self.end(session_id)
        if self._reaper is not None:
            self._reaper.cancel()
        if self._handshake_timer is not None:
            self._handshake_timer.cancel()
            self._handshake_timer = None
        if self._ending:
            await asyncio.wait(set(self._ending))

    async def _reap(self) -> None:
        assert self.idle_timeout is not None
        try:
            while self.sessions:
                period = self._reap_period()
                self._next_reap = time.monotonic() + period
                await asyncio.sleep(period)
                await self.end_idle(time.monotonic())
        finally:
            self._next_reap = math.inf

    def _watch_handshakes(self, delay: float) -> None:
        # An empty context: the timer must not keep the context of the request that set it.
        loop = asyncio.get_running_loop()
        self._handshake_timer = loop.call_later(
            max(0.0, delay), self._end_late_handshakes, context=contextvars.Context()
        )

    def _end_late_handshakes(self) -> None:
        """End the sessions whose handshake is late; a session with a response open (its
        ``initialize`` still being answered, say) gets another ``handshake_timeout``."""
        self._handshake_timer = None
        timeout = self.handshake_timeout
        assert timeout is not None
        now = time.monotonic()
        handshakes = self._handshakes
        while handshakes:
            session_id, late = next(iter(handshakes.items()))
            if late > now + 0.001:
                self._watch_handshakes(late - now)
                return
            del handshakes[session_id]
            session = self.sessions.get(session_id)
            if session is None or session.protocol.state not in _HANDSHAKING:
                continue  # ended already, or past its handshake
            if session.responses > 0:
                handshakes[session_id] = now + timeout  # (the latest deadline: the order holds)
                continue
            # Out of the tables now, so that its place is free at once; ended in a task.
            del self.sessions[session_id]
            self._let_go(session)
            logger.info("ending session %s…: no notifications/initialized within %g s", session_id[:8], timeout)
            task = asyncio.get_running_loop().create_task(session.end("timeout"))
            self._ending.add(task)
            task.add_done_callback(self._ending.discard)

    async def end_idle(self, now: float) -> int:
        """End the sessions idle at ``now`` (a ``time.monotonic()`` reading); how many ended."""
        if self.idle_timeout is None:
            return 0
        deadline = now - self.idle_timeout
        idle = [s for s in self.sessions.values() if s.last_active < deadline and s.responses <= 0]
        for session in idle:
            waiting = session.connection.active_handlers
            logger.info("ending idle session %s… (%d requests still running)", session.session_id[:8], waiting)
            await self.end(session.session_id, "timeout")
        return len(idle)
