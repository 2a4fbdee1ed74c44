"""The deprecated HTTP+SSE transport of protocol 2024-11-05, served beside the Streamable HTTP endpoint.

Deprecated, and off by default. ``HttpApp(legacy_sse=True)`` turns it on, and so do
``server.http_app(legacy_sse=True)``, ``server.run_http(..., legacy_sse=True)`` and
``backchannel run --http --legacy-sse``. It serves old clients the way the
backwards-compatibility guide says (2025-11-25 ``basic/transports.mdx``):

- ``GET /sse`` opens an event stream. Its first event, ``endpoint``, names the URL to
  POST messages to (``/messages/?session_id=<id>``, under the path the app is mounted at).
- Every message the server sends, answers included, is a ``message`` event on that stream.
  Quiet streams get a comment every ``KEEPALIVE`` seconds, so proxies keep them open.
- A POST carries one client message. It is answered ``202 Accepted`` with no body, and
  what it asks is answered on the stream.

One stream is one session and one protocol connection. It has no ``Mcp-Session-Id`` and no
resumption: when the client closes the stream, the session ends and its handlers are
cancelled. The guards of the endpoint apply here too (``HttpApp`` checks Host, Origin and the
caller before handing a request over): a session belongs to the principal that opened it, and
a POST from anyone else gets 404; a request needing scopes the token lacks gets 403; the body
limit and timeout hold, and the cap on live sessions counts these with the Streamable HTTP ones.

This transport does not work across the workers of a fleet (``--workers``): the stream and
its POSTs must reach the same process, which a round-robin balancer does not promise.
"""

from __future__ import annotations

__all__ = ["KEEPALIVE", "MESSAGES_PATH", "SSE_PATH", "LegacySse", "SseHost"]

import logging
import secrets
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import parse_qs, quote

from ..framing import http as H
from ..framing.sse import encode_comment, encode_event
from ..runtime.connection import Connection
from ..telemetry.metrics import session_closed, session_opened
from ..transports.base import PushedTransport, TransportClosed, wire_messages
from ..types.errors import InvalidRequest
from . import asgi, traced
from .asgi import Mailbox, NoItem, Receive, Scope, Send, next_item, send_bytes, send_start, watching
from .authenticator import Principal
from .client_limits import client_of
from .gate import posted_message
from .limits import TIMED_OUT, busy, too_slow
from .responses import send_rejection
from .streams import SSE_HEADERS, encode_message

if TYPE_CHECKING:
    from ..protocol.events import Outgoing
    from .client_limits import StreamRules
    from .gate import ResourceAuth
    from .limits import BodyDeadlines
    from .served import HostedServer
    from .session_registry import SessionRegistry

logger = logging.getLogger("backchannel.http")

SSE_PATH = "/sse"
MESSAGES_PATH = "/messages"
#: Seconds of silence after which a stream gets a comment line.
KEEPALIVE = 15.0
_MESSAGE_EVENT = b"event: message\n"


class _StreamTransport(PushedTransport):
    """Everything the server sends goes to the one event stream of the session; an
    ``AuthenticatedTransport``."""

    authenticates_callers = True
    principal: str | None

    def __init__(self, principal: Principal | None) -> None:
        super().__init__()
        self.principal = principal
        #: What the stream writes, in order; None ends the stream.
        self.box: Mailbox[dict[str, Any] | None] = Mailbox()

    def write(self, items: list[Outgoing]) -> None:
        if self.ended:
            raise TransportClosed("the HTTP+SSE session has ended")
        for message in wire_messages(items):
            self.box.put(message)

    async def close(self) -> None:
        if not self.ended:
            await super().close()
            self.box.put(None)


class _Session:
    def __init__(self, session_id: str, transport: _StreamTransport, connection: Connection) -> None:
        self.session_id = session_id
        self.transport = transport
        self.connection = connection

    async def end(self) -> None:
        await self.transport.close()
        await self.connection.close()
        self.connection.finish("the client closed its HTTP+SSE stream")


class SseHost(Protocol):
    """What the HTTP+SSE endpoints take of the app that mounts them (``HttpApp``): its path,
    server, authenticator and limits, and its live sessions, which count against the same cap."""

    path: str
    server: HostedServer
    auth: ResourceAuth | None
    max_body_bytes: int
    max_sessions: int | None
    retry_after: int
    sessions: SessionRegistry
    streams: StreamRules
    body_deadlines: BodyDeadlines


class LegacySse:
    """``GET /sse`` and ``POST /messages/`` of the HTTP+SSE transport, for one ``HttpApp``."""

    def __init__(self, app: SseHost) -> None:
        self.app = app
        #: Live sessions by id: one per open ``GET /sse`` stream.
        self.sessions: dict[str, _Session] = {}

    def handles(self, path: str) -> bool:
        """Whether ``path`` (relative to where the app is mounted, without a trailing slash) is ours."""
        return path in (SSE_PATH, MESSAGES_PATH) and path != self.app.path

    async def __call__(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        path: str,
        headers: dict[str, str],
        principal: Principal | None,
    ) -> None:
        """Serve ``path`` (``handles`` said it is ours) for ``principal``, once the app has checked
        the request as it checks one to its endpoint (Host and Origin, the authenticator)."""
        method, allowed = scope["method"], "GET" if path == SSE_PATH else "POST"
        if method != allowed:
            await send_rejection(
                send, H.Rejection(405, InvalidRequest(f"{method} is not allowed on {path}"), {"allow": allowed})
            )
        elif path == SSE_PATH:
            await self._stream(scope, principal, receive, send, headers)
        else:
            await self._post(scope, headers, principal, receive, send)

    async def _stream(
        self, scope: Scope, principal: Principal | None, receive: Receive, send: Send, headers: dict[str, str]
    ) -> None:
        app = self.app
        if app.max_sessions is not None and len(app.sessions.sessions) + len(self.sessions) >= app.max_sessions:
            limit = f"the server is at its limit of {app.max_sessions} live sessions; retry later"
            await send_rejection(send, busy(limit, app.retry_after))
            return
        # The stream is an event stream of its client's, as a GET stream of the endpoint is
        # (``client_limits.py``), without a lifetime: it is the session, and cannot be resumed.
        client = client_of(principal, scope)
        refused = app.streams.refusal(client)
        if refused is not None:
            await send_rejection(send, refused)
            return
        counted = app.streams.open(client, lasting=True)
        try:
            await self._serve_stream(scope, principal, receive, send)
        finally:
            app.streams.close(counted)

    async def _serve_stream(self, scope: Scope, principal: Principal | None, receive: Receive, send: Send) -> None:
        app = self.app
        session_id = secrets.token_hex(16)
        transport = _StreamTransport(principal)
        session = _Session(session_id, transport, app.server.connect(transport, finish_grace=0.0))
        traced.describe(session.connection, session_id)  # with telemetry on: what the spans say of it
        self.sessions[session_id] = session
        timed = session_opened("server", session.connection.telemetry_attributes)  # None: metrics off
        root = str(scope.get("root_path", "")).rstrip("/")
        endpoint = f"{quote(root + MESSAGES_PATH)}/?session_id={session_id}"
        try:
            await send_start(send, 200, SSE_HEADERS)
            await send(
                {"type": "http.response.body", "body": encode_event(endpoint, event="endpoint"), "more_body": True}
            )
            await _pump(send, receive, transport.box)
        except OSError:
            pass  # the client is gone: the session ends with it
        finally:
            if self.sessions.get(session_id) is session:
                del self.sessions[session_id]
            session_closed(timed, version=session.connection.session.protocol_version)
            await session.end()

    async def _post(
        self, scope: Scope, headers: dict[str, str], principal: Principal | None, receive: Receive, send: Send
    ) -> None:
        app = self.app
        query = parse_qs(bytes(scope.get("query_string", b"")).decode("latin-1"))
        named = query.get("session_id") or query.get("sessionId")
        if not named:
            unnamed = InvalidRequest("the session_id query parameter is required (GET /sse names the URL to use)")
            await send_rejection(send, H.Rejection(400, unnamed))
            return
        session = self.sessions.get(named[0])
        if session is None or session.transport.principal != principal:  # another's session reads as none
            gone = InvalidRequest("session not found; open a new one with GET /sse")
            await send_rejection(send, H.Rejection(404, gone))
            return
        body = await app.body_deadlines.read(receive, app.max_body_bytes)
        if body is TIMED_OUT:
            await send_rejection(send, too_slow("request body", app.body_deadlines.timeout or 0.0))
            return
        posted = posted_message(
            headers, body, max_bytes=app.max_body_bytes, auth=app.auth, required_scopes=app.server.required_scopes
        )
        if isinstance(posted, H.Rejection):  # too large, no message, or scopes= the token lacks (403)
            await send_rejection(send, posted)
            return
        session.connection.feed([posted[0]])
        await send_bytes(send, 202, b"", {})

    async def aclose(self) -> None:
        """End every session (their streams end too)."""
        for session in list(self.sessions.values()):
            await session.end()
        self.sessions.clear()


async def _pump(send: Send, receive: Receive, box: Mailbox[dict[str, Any] | None]) -> None:
    """Write the session's messages as ``message`` events until it ends or the client leaves."""
    async with watching(receive, box) as gone:
        while True:
            item = await next_item(box, gone, KEEPALIVE)
            if item is asgi.TIMED_OUT:
                await send({"type": "http.response.body", "body": encode_comment("keep-alive"), "more_body": True})
                continue
            buffer = bytearray()
            while True:  # what waits goes out in one write
                if type(item) is NoItem:
                    return  # the client left
                if item is None:
                    await send({"type": "http.response.body", "body": bytes(buffer), "more_body": False})
                    return
                assert type(item) is dict
                data = encode_message(item)
                if data:
                    buffer += _MESSAGE_EVENT + b"data: " + data + b"\n\n"
                if box.empty():
                    break
                item = box.get_nowait()
            await send({"type": "http.response.body", "body": bytes(buffer), "more_body": True})
