"""Handshake-era HTTP sessions: one protocol session per ``Mcp-Session-Id``.

Each session runs one ``Connection`` fed by POSTs; every outgoing message goes on the
response of the request it belongs to (answers, progress, log lines, server-to-client
requests), and what belongs to no request on the GET stream, if the client opened one.

A session whose client has gone (no response of it open: its POST streams and GET
stream were cut or ended) and from which nothing arrives for the idle timeout is
ended, even mid-request: its handlers are cancelled and what they wait for from the
client (an elicitation, say) fails, since nobody is left to answer it. A client
that is still connected keeps its session for as long as its requests run.

A session that has not finished its handshake (no ``notifications/initialized``) within
the handshake timeout, with no response of it open, is ended too. Each client (its
principal, else its address: ``client_limits.py``) may hold a share of the live sessions;
a refusal says when a place really frees: the next end the registry will make by itself.
"""

from __future__ import annotations

__all__ = ["HttpSession", "SessionRegistry"]

import asyncio
import contextvars
import logging
import math
import secrets
import time
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..framing import http as H
from ..protocol.events import HandshakeCompleted, Outgoing, RequestId
from ..protocol.states import SessionState
from ..telemetry.metrics import SessionClock, session_closed
from ..transports.base import PushedTransport, TransportClosed, wire_messages
from .asgi import Mailbox
from .authenticator import Principal
from .client_limits import ClientKey, retry_seconds, too_many
from .event_store import EventStore
from .fleet import FANNED_OUT, Fleet, SessionRecord
from .limits import busy
from .session_streams import SessionStreams
from .streams import CLOSE_RESPONSE, END_STREAM, MessageFeed, ResumableStream, StreamSignal

if TYPE_CHECKING:
    from .served import HostedServer

logger = logging.getLogger("backchannel.http")
_NEVER = -math.inf
_NO_STREAMS: Mapping[str, ResumableStream] = MappingProxyType({})
_HANDSHAKING = (SessionState.NEW, SessionState.INITIALIZING)
#: How long a computed "when does a place free" is reused for refusals at the server's cap.
_NEXT_FREE_KEPT = 1.0


class _SessionTransport(PushedTransport):
    """Writes each message to the response of the request it belongs to, else to the GET stream
    (held by this worker, or by another one of the fleet): a ``RoutedTransport`` and an
    ``AuthenticatedTransport``."""

    routes_by_request = True
    authenticates_callers = True
    principal: str | None = None

    def __init__(self, session_id: str, fleet: Fleet) -> None:
        super().__init__()
        self.session_id = session_id
        self.fleet = fleet
        self.feeds: dict[RequestId, MessageFeed] = {}
        self.standalone: MessageFeed | None = None

    def write(self, items: list[Outgoing]) -> None:
        self.write_routed([(item, None) for item in items])

    def write_routed(self, items: list[tuple[Outgoing, RequestId | None]]) -> None:
        if self.ended:
            raise TransportClosed("the HTTP session has ended")
        for item, related in items:
            (message,) = wire_messages([item])
            feed = self.feeds.get(related) if related is not None else None
            if feed is None:
                feed = self.standalone
            if feed is not None:
                feed.put(message)
            elif self.fleet.shared:
                # Another worker may hold the GET stream; what every worker sends its own sessions
                # anyway (a list changed) is left to that worker's replica.
                if message.get("method") not in FANNED_OUT:
                    self.fleet.send_out(self.session_id, message)
            else:
                logger.debug("no open stream for %s; dropped", message.get("method", "a message"))

    def close_stream(self, request_id: RequestId) -> bool:
        """End the HTTP response carrying ``request_id`` now; its events go on into the
        store and the client resumes with GET and ``Last-Event-ID`` (SEP-1699 polling)."""
        feed = self.feeds.get(request_id)
        if feed is None:
            return False
        feed.put(CLOSE_RESPONSE)
        return True

    def request_cancelled(self, request_id: RequestId) -> None:
        """A cancelled request gets no answer: its stream must end anyway."""
        feed = self.feeds.get(request_id)
        if feed is not None:
            feed.put(END_STREAM)

    async def close(self) -> None:
        if not self.ended:
            await super().close()
            if self.standalone is not None:
                self.standalone.put(CLOSE_RESPONSE)  # end the GET stream too


class HttpSession:
    """A live handshake-era session over HTTP (one ``Mcp-Session-Id``) and the streams of its
    requests; its protocol session is ``protocol``."""

    timed: SessionClock | None = None  # the session metrics' clock: set by open_session, with metrics on
    #: The client whose share it counts against (set by ``SessionRegistry.open``; a session
    #: taken up from the fleet's record counts against none).
    client: ClientKey | None = None

    def __init__(
        self, session_id: str, principal: Principal | None, server: HostedServer, store: EventStore, fleet: Fleet
    ) -> None:
        self.session_id = session_id
        self.principal = principal
        self.store = store
        self.server = server
        self.fleet = fleet
        self.transport = _SessionTransport(session_id, fleet)
        self.transport.principal = principal
        self.connection = server.connect(self.transport, finish_grace=0.0)
        self.protocol = self.connection.session
        #: Set by the registry that holds it: ends this replica when another worker ended the session.
        self.registry: SessionRegistry | None = None
        #: Set by ``Fleet.join``: stops hearing the session channel.
        self.stop_listening: Callable[[], None] | None = None
        self.saved_at = _NEVER
        self.saved_kept: dict[str, Any] | None = None
        # Made by the first stream: a server holds thousands of idle sessions, many never stream.
        self._streams: SessionStreams | None = None
        self.last_active = time.monotonic()
        #: HTTP responses of this session open now (request POSTs, GET streams): while there
        #: is one, the client is there, and the session is not idle whatever it waits for.
        self.responses = 0
        if fleet.shared:
            # The worker's name leads: the client's answers to our requests find their way back to it.
            self.protocol.id_prefix = f"{fleet.worker_id}:"

    @property
    def header_bytes(self) -> tuple[bytes, bytes]:
        """This session's part of every response's headers (encoded per response: 0.1 µs, where
        keeping it would cost an idle session 132 bytes)."""
        return (b"mcp-session-id", self.session_id.encode("latin-1"))

    @property
    def streams(self) -> Mapping[str, ResumableStream]:
        """This session's streams by id, finished ones included while they stay resumable."""
        return _NO_STREAMS if self._streams is None else self._streams.by_id

    def _stream_book(self) -> SessionStreams:
        if self._streams is None:
            self._streams = SessionStreams(self.store, self.fleet, self.close_feed)
        return self._streams

    @property
    def version(self) -> str | None:
        return self.protocol.protocol_version

    # ------------------------------------------------------- the fleet

    def record(self) -> SessionRecord:
        """What another worker needs to serve this session (after ``initialize`` succeeded)."""
        version = self.protocol.protocol_version
        assert version is not None
        kept = self.server.session_snapshot(self.connection)
        return SessionRecord(version, self.protocol.peer_capabilities, self.protocol.peer_info, self.principal, kept)

    def take_up(self, record: SessionRecord) -> None:
        """Serve a session whose handshake another worker served, as its record says."""
        self.protocol.resume_handshake(record.version, record.capabilities, record.info)
        # As if this replica had seen the handshake: the server sends list changes only to those.
        self.connection.handshake_completed = HandshakeCompleted(
            version=record.version, peer_info=record.info, peer_capabilities=record.capabilities
        )
        self.server.restore_session(self.connection, record.kept)

    async def save(self, *, announce: bool = False) -> None:
        if not self.fleet.shared:
            return  # one worker: no record to write, and no snapshot to keep for comparing
        self.saved_at = time.monotonic()
        record = self.record()
        self.saved_kept = record.kept
        await self.fleet.save(self.session_id, record, announce=announce)

    async def save_if_changed(self) -> None:
        """Write the record when what the server keeps for the session changed since (roots
        fetched or dropped, say), and tell the other replicas."""
        if (
            self.protocol.protocol_version is not None
            and self.server.session_snapshot(self.connection) != self.saved_kept
        ):
            await self.save(announce=True)

    def deliver_answer(self, message: dict[str, Any]) -> None:
        """The client's answer to a request of ours, forwarded by the worker its POST reached."""
        self.feed_messages([message])

    def deliver_note(self, message: dict[str, Any]) -> None:
        """A client notification another worker received (a cancel, progress, roots changed)."""
        self.feed_messages([message])

    def deliver_out(self, message: dict[str, Any]) -> None:
        """A message of another replica's that belongs to no request: to the GET stream, if here."""
        if self.transport.standalone is not None:
            self.transport.standalone.put(message)

    def apply_record(self, record: SessionRecord) -> None:
        self.server.restore_session(self.connection, record.kept)
        # Stored already: written back, it could overwrite a newer announcement not applied yet.
        self.saved_kept = self.server.session_snapshot(self.connection)

    def end_by_peer(self) -> None:
        if self.registry is not None:
            self.registry.end_soon(self)

    def touch(self) -> None:
        self.last_active = time.monotonic()

    def attach(self) -> None:
        """A response of this session is open; ``detach`` when it ends, however it ends."""
        self.responses += 1

    def detach(self) -> None:
        self.responses -= 1
        self.touch()  # the idle clock starts when the client's last response ends
        if self.responses <= 0:
            # The session may now stay idle for long: give back the room its records grew
            # for the requests just served (a dict keeps its table when emptied).
            if not self.transport.feeds:
                self.transport.feeds.clear()
            self.connection.shrink()

    def feed_messages(self, messages: list[Any]) -> None:
        """Serve what a POST carried."""
        self.touch()
        self.connection.feed(messages)

    def open_feed(self, request_id: RequestId) -> MessageFeed:
        feed = MessageFeed(request_id)
        self.transport.feeds[request_id] = feed
        return feed

    def close_feed(self, request_id: RequestId) -> None:
        self.transport.feeds.pop(request_id, None)

    def new_stream_id(self) -> str:
        return self._stream_book().new_id()

    def start_stream(
        self,
        feed: MessageFeed,
        first: dict[str, Any] | StreamSignal | None,
        *,
        attached: bool,
        stream_id: str | None = None,
    ) -> tuple[ResumableStream, Mailbox[tuple[int, bytes] | None] | None]:
        """Stream the rest of ``feed``'s request, resumably; the feed closes when its answer is out.

        With ``attached``, also a mailbox that receives every event from the first on (ending
        with None), for the response that carries the stream. ``stream_id``: one ``new_stream_id``
        gave (and the store opened); by default a new one.
        """
        book = self._stream_book()
        return book.start(stream_id or book.new_id(), feed, first, attached=attached)

    async def end(self, error_type: str | None = None) -> None:
        session_closed(self.timed, version=self.protocol.protocol_version, error_type=error_type)
        self.fleet.leave(self.session_id, self)
        await self.transport.close()
        await self.connection.close()
        if self._streams is not None:
            await self._streams.end()
        self.connection.finish("the HTTP session ended")


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
        session.registry = self
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
