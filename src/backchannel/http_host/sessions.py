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

__all__ = ["HttpSession"]

import logging
import math
import time
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..protocol.events import HandshakeCompleted, Outgoing, RequestId
from ..protocol.states import SessionState
from ..telemetry.metrics import SessionClock, session_closed
from ..transports.base import PushedTransport, TransportClosed, wire_messages
from .asgi import Mailbox
from .authenticator import Principal
from .client_limits import ClientKey
from .event_store import EventStore
from .fleet import FANNED_OUT, Fleet, SessionRecord
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
        #: Set by the registry that holds it (``SessionRegistry.end_soon``): ends this replica when
        #: another worker ended the session.
        self.ended_elsewhere: Callable[[HttpSession], None] | None = None
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
        if self.ended_elsewhere is not None:
            self.ended_elsewhere(self)

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
