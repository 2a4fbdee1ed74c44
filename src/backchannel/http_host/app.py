"""The Streamable HTTP endpoint as one ASGI app, serving both protocol eras.

Routing follows the dual-era reading of the spec (CHANGES-2026-07-28 §13):

- ``initialize`` opens a handshake-era session and mints ``Mcp-Session-Id``;
  later POSTs, the GET stream and DELETE name that session.
- A request whose ``_meta`` carries ``io.modelcontextprotocol/protocolVersion``
  is served on its own (stateless era): one POST, one request, its own
  protocol session; closing the response cancels it.

What a handshake-era session sends back (a request POST's answer, the GET stream, a
resumption) is written by ``session_responses.py``; the deprecated HTTP+SSE one by ``legacy_sse.py``.

Every refusal is a JSON-RPC error body with the fitting HTTP status, the limits'
(``limits.py``) included: a body that does not arrive in time is 408, a request past
the cap on requests served at once or on live sessions is 503 with ``Retry-After``; a
client past its own share of sessions or of event streams (``client_limits.py``) is 429
with ``Retry-After``.
"""

from __future__ import annotations

__all__ = ["HttpApp"]

import asyncio
import logging
from collections.abc import Collection
from typing import TYPE_CHECKING, Any, TypedDict

from ..framing import http as H
from ..runtime.caller_address import serving_from
from ..state.memory import MemoryState
from ..state.shared import SharedState
from ..types import meta as M
from ..types.errors import InvalidRequest
from ..types.versions import HANDSHAKE_VERSIONS, STATELESS_VERSIONS
from . import traced
from .asgi import Receive, Scope, Send, header_map, read_body, send_bytes
from .authenticator import Authenticator, Principal
from .card import CardRoutes
from .client_limits import (
    HANDSHAKE_TIMEOUT,
    MAX_SESSIONS_PER_CLIENT,
    MAX_STREAMS,
    MAX_STREAMS_PER_CLIENT,
    STREAM_LIFETIME,
    ClientKey,
    StreamRules,
    client_of,
)
from .event_store import EventStore, InMemoryEventStore
from .fleet import Fleet, events_prefix, refusing_when_unreachable
from .gate import ResourceAuth, admit, anonymous, posted_message, serve_metadata
from .legacy_sse import LegacySse
from .limits import (
    BODY_TIMEOUT,
    MAX_REQUESTS,
    MAX_SESSIONS,
    RETRY_AFTER,
    TIMED_OUT,
    BodyDeadlines,
    TimedOut,
    busy,
    too_slow,
)
from .responses import send_rejection
from .session_posts import open_session, post_to_session
from .session_registry import SessionRegistry
from .session_responses import names_get_stream, resume_stream, serve_get_stream
from .sessions import HttpSession
from .shared_events import StateEventStore
from .stateless import MirroredHeaders, serve_stateless

if TYPE_CHECKING:
    from ..types.server_card import ServerCard
    from .served import HostedServer

logger = logging.getLogger("backchannel.http")


class _Responding(TypedDict):
    """What every response of a handshake-era session is served with (``session_posts.py``)."""

    sse_after: float
    retry_ms: int
    rules: StreamRules


_GET_TAKEN = H.Rejection(409, InvalidRequest("a GET stream is already open for this session"))
_NO_SESSION_ID = H.Rejection(400, InvalidRequest("Mcp-Session-Id header required (send initialize first)"))
_NO_SESSION = H.Rejection(404, InvalidRequest("session not found; start a new one with initialize"))


class HttpApp:
    """``server.http_app()``: mount it anywhere, or run it with uvicorn.

    ``allowed_hosts``/``allowed_origins`` guard against DNS rebinding (the
    defaults accept only loopback names). ``authenticator`` turns headers into a
    principal (None refuses with 401); sessions are bound to it; ``auth=ResourceAuth(...)``
    makes the endpoint an OAuth protected resource (``backchannel.auth``). ``sse_after``
    is how long a POST waits for its answer before switching to an SSE stream.

    Limits (``limits.py``, ``docs/reliability.md``): a request body must arrive within
    ``body_timeout`` seconds (else 408); at most ``max_requests`` requests are served at
    once, open streams included, and at most ``max_sessions`` handshake-era sessions
    live at once (else 503 with ``Retry-After``). None turns a limit off.
    A session whose client has no response open (its streams were cut) ends after
    ``session_idle_timeout`` with nothing arriving, whatever its requests still wait for,
    and one that has not finished its handshake after ``handshake_timeout``.

    Per client (``client_limits.py``: its principal, else its address): at most
    ``max_sessions_per_client`` live sessions and ``max_streams_per_client`` open GET
    streams (else 429 with ``Retry-After``); at most ``max_streams`` GET streams in all
    (else 503). Every SSE response ends after ``stream_lifetime`` seconds with a ``retry``
    field (``retry_ms``), and the client reconnects. ``retry_after`` is the ``Retry-After``
    of a refusal when no better time is known.
    ``legacy_sse`` also serves ``GET /sse`` and ``POST /messages/`` (deprecated; ``legacy_sse.py``).
    ``card`` (a ``types.server_card.ServerCard``) serves the server's Server Card at
    ``<path>/server-card`` and an AI Catalog naming it at ``/.well-known/ai-catalog.json`` (``card.py``).
    """

    def __init__(
        self,
        server: HostedServer,
        *,
        path: str = "/mcp",
        allowed_hosts: Collection[str] = H.LOCALHOST_HOSTS,
        allowed_origins: Collection[str] = H.LOCALHOST_ORIGINS,
        authenticator: Authenticator | None = None,
        auth: ResourceAuth | None = None,
        max_body_bytes: int = 4 * 1024 * 1024,
        session_idle_timeout: float | None = 30 * 60,
        event_store: EventStore | None = None,
        retry_ms: int = 1000,
        sse_after: float = 0.5,
        body_timeout: float | None = BODY_TIMEOUT,
        max_requests: int | None = MAX_REQUESTS,
        max_sessions: int | None = MAX_SESSIONS,
        retry_after: int = RETRY_AFTER,
        state: SharedState | None = None,
        legacy_sse: bool = False,
        handshake_timeout: float | None = HANDSHAKE_TIMEOUT,
        max_sessions_per_client: int | None = MAX_SESSIONS_PER_CLIENT,
        max_streams: int | None = MAX_STREAMS,
        max_streams_per_client: int | None = MAX_STREAMS_PER_CLIENT,
        stream_lifetime: float | None = STREAM_LIFETIME,
        card: ServerCard | None = None,
    ) -> None:
        self.server = server
        self.path = path.rstrip("/") or "/"
        self._allowed = (allowed_hosts, allowed_origins)
        self._guards()
        self.auth = auth
        self.authenticator = authenticator if auth is None else auth
        self.max_body_bytes = max_body_bytes
        self.event_store = event_store or InMemoryEventStore()
        self.retry_ms = retry_ms
        self.sse_after = sse_after
        if state is None:
            kept = getattr(server, "state", None)  # a server built with a shared state shares it here
            state = kept if isinstance(kept, SharedState) else MemoryState()
        self.state = state
        record_ttl = session_idle_timeout if session_idle_timeout is not None else 24 * 3600.0
        self.fleet = Fleet(state, shared=state.spans_workers, record_ttl=record_ttl)
        self.sessions = SessionRegistry(
            session_idle_timeout,
            self.fleet,
            self._new_session,
            handshake_timeout=handshake_timeout,
            max_sessions=max_sessions,
            max_per_client=max_sessions_per_client,
            retry_after=retry_after,
        )
        self.streams = StreamRules(
            lifetime=stream_lifetime,
            max_streams=max_streams,
            max_per_client=max_streams_per_client,
            retry_ms=retry_ms,
            retry_after=retry_after,
        )
        self._responding: _Responding = {"sse_after": sse_after, "retry_ms": retry_ms, "rules": self.streams}
        self._joined = False
        self._mirrored = MirroredHeaders(server)
        self._joining: asyncio.Future[None] | None = None
        self.body_deadlines = BodyDeadlines(body_timeout)
        self.max_requests = max_requests
        self.max_sessions = max_sessions
        self.retry_after = retry_after
        #: Requests being served now (streams included), for ``max_requests``.
        self.serving = 0
        self.legacy_sse = LegacySse(self) if legacy_sse else None
        #: The Server Card's routes (``card=``), or None.
        oauth = auth is not None
        self.cards = None if card is None else CardRoutes(card, server, path=self.path, oauth=oauth, sse=legacy_sse)

    @property
    def allowed_hosts(self) -> Collection[str]:
        return self._allowed[0]

    @allowed_hosts.setter
    def allowed_hosts(self, hosts: Collection[str]) -> None:
        self._allowed = (hosts, self._allowed[1])
        self._guards()

    @property
    def allowed_origins(self) -> Collection[str]:
        return self._allowed[1]

    @allowed_origins.setter
    def allowed_origins(self, origins: Collection[str]) -> None:
        self._allowed = (self._allowed[0], origins)
        self._guards()

    def _guards(self) -> None:
        """The Host/Origin checks (DNS rebinding), each decision kept per (Host, Origin) pair: the
        endpoint's, and the URL-elicitation pages' (any ``Origin``: see ``_route``)."""
        hosts, origins = self._allowed
        self._host_check = H.HostOriginCheck(hosts, origins)
        self._pages_host_check = H.HostOriginCheck(hosts, ("*",))

    def _new_session(self, session_id: str, principal: Principal | None) -> HttpSession:
        store = self.event_store
        if self.fleet.shared:  # every worker must be able to replay the session's streams
            store = StateEventStore(self.state, events_prefix(session_id), self.fleet.record_ttl)
        session = HttpSession(session_id, principal, self.server, store, self.fleet)
        traced.describe(session.connection, session_id)  # with telemetry on: what the spans say of it
        return session

    async def join_fleet(self) -> None:
        """Start the shared state and listen for this worker's messages (the lifespan's startup
        does it; so does the first request of an app mounted without a lifespan)."""
        if self._joined:
            return
        if self._joining is None:
            self._joining = asyncio.ensure_future(self._join())
        try:
            await asyncio.shield(self._joining)
        except BaseException:
            self._joining = None  # the next request tries again (Redis may be back by then)
            raise
        self._joined = True

    async def _join(self) -> None:
        await self.fleet.start()
        await self.server.start_sharing()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        if not self._joined:
            await self.join_fleet()
        if self.max_requests is not None and self.serving >= self.max_requests:
            limit = f"the server is at its limit of {self.max_requests} requests served at once; try again shortly"
            await send_rejection(send, busy(limit, self.retry_after))
            return
        telemetry = traced.begin(scope)  # None unless telemetry is on: the request's W3C trace context
        self.serving += 1
        try:
            if self.fleet.shared:  # a request that needs the shared state while it is down: 503, not 500
                await refusing_when_unreachable(self._route, scope, receive, send, self.retry_after)
            else:
                await self._route(scope, receive, send)
        finally:
            self.serving -= 1
            traced.end(telemetry)

    async def _route(self, scope: Scope, receive: Receive, send: Send) -> None:
        # ASGI: ``path`` includes ``root_path`` (what a Mount in Starlette stripped off); compare the rest.
        root, full = scope.get("root_path", ""), scope.get("path", "")
        path = (full[len(root) :] if root and full.startswith(root) else full).rstrip("/") or "/"
        headers = header_map(scope)
        serving_from(scope)  # what anonymous callers keep is budgeted per address (tasks, ctx.once)
        if self.auth is not None and await serve_metadata(self.auth, scope, send):  # RFC 9728, at the host's root
            return
        if self.cards is not None and self.cards.handles(path, root):  # the Server Card and its AI Catalog
            await self.cards.serve(scope, path, headers, send, self.allowed_hosts)
            return
        flows = self.server.url_elicitations
        if flows is not None and flows.handles(path):  # the URL-elicitation pages served beside the endpoint
            # Served only under the hosts the endpoint is (DNS rebinding). Not ``Origin``: a browser
            # sends none on the navigation that opens a page, and the page's own form POST comes
            # from the page's origin, which the pages check themselves against their base URL.
            rejection = self._pages_host_check(headers)
            if rejection is not None:
                await send_rejection(send, rejection)
                return
            await flows(scope, receive, send)
            return
        legacy = self.legacy_sse if self.legacy_sse is not None and self.legacy_sse.handles(path) else None
        # Ours: the endpoint (at "/" under a Mount("/x/mcp")) and, when on, the old transport's two paths.
        if legacy is None and path != self.path and not (path == "/" and root.rstrip("/").endswith(self.path)):
            await send_rejection(
                send, H.Rejection(404, InvalidRequest(f"no MCP endpoint at {full}; use {root}{self.path}"))
            )
            return
        rejection = self._host_check(headers)
        if rejection is not None:
            await send_rejection(send, rejection)
            return
        principal: Principal | H.Rejection | None = None
        if self.authenticator is None:
            anonymous()
        else:
            principal = await admit(self.authenticator, scope, headers, self.state)  # 401 or 403 (gate.py)
        if isinstance(principal, H.Rejection):
            await send_rejection(send, principal)
            return
        if legacy is not None:  # GET /sse or POST /messages/, checked as the endpoint is
            await legacy(scope, receive, send, path, headers, principal)
            return
        method = scope["method"]
        if method == "POST":
            await self._post(headers, principal, receive, send, scope)
        elif method == "GET":
            await self._get(headers, principal, receive, send, scope)
        elif method == "DELETE":
            await self._delete(headers, principal, send)
        else:
            await send_rejection(
                send, H.Rejection(405, InvalidRequest(f"{method} is not allowed"), {"allow": "GET, POST, DELETE"})
            )

    # ------------------------------------------------------------------ POST

    async def _post(
        self, headers: dict[str, str], principal: Principal | None, receive: Receive, send: Send, scope: Scope
    ) -> None:
        rejection = H.check_accept("POST", headers)
        if rejection is not None:
            await send_rejection(send, rejection)
            return
        deadlines = self.body_deadlines
        if deadlines.timeout is None:  # (run_http: the connection keeps the body's clock)
            body: bytes | TimedOut | None = await read_body(receive, self.max_body_bytes)
        else:
            body = await deadlines.read(receive, self.max_body_bytes)
        if body is TIMED_OUT:
            assert self.body_deadlines.timeout is not None
            await send_rejection(send, too_slow("request body", self.body_deadlines.timeout))
            return
        posted = posted_message(
            headers, body, max_bytes=self.max_body_bytes, auth=self.auth, required_scopes=self.server.required_scopes
        )
        if isinstance(posted, H.Rejection):  # too large, no message, or scopes= the token lacks (403)
            await send_rejection(send, posted)
            return
        message, kind = posted
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        session_id = headers.get("mcp-session-id")
        # The body's envelope is the routing key (CHANGES §13); a stateless-era version header on a
        # request whose envelope is missing still means that era, so its answer is -32602, not "no session".
        stateless = (isinstance(meta, dict) and M.PROTOCOL_VERSION in meta) or (
            H.protocol_version_header(headers) in STATELESS_VERSIONS and message.get("method") != "initialize"
        )
        if kind == "request" and stateless:
            # The body is the routing key (CHANGES §13): a session header, if any, is ignored.
            await self._post_stateless(message, headers, receive, send, principal)
            return
        if kind != "request" and session_id is None and H.protocol_version_header(headers) in STATELESS_VERSIONS:
            await send_bytes(send, 202, b"", {})  # stateless-era notifications need no session
            return
        if kind == "request" and message["method"] == "initialize":
            await self._initialize(message, principal, receive, send, client_of(principal, scope))
            return
        if session_id is None:
            await send_rejection(send, _NO_SESSION_ID)
            return
        session = await self.sessions.find(session_id, principal)
        if session is None:
            await send_rejection(send, _NO_SESSION)
            return
        rejection = H.check_protocol_version_header(headers, expected=session.version, supported=HANDSHAKE_VERSIONS)
        if rejection is not None:
            await send_rejection(send, rejection)
            return
        await post_to_session(session, message, kind, self.fleet, receive, send, **self._responding)

    async def _post_stateless(
        self,
        message: dict[str, Any],
        headers: dict[str, str],
        receive: Receive,
        send: Send,
        principal: Principal | None = None,
    ) -> None:
        param_headers = self._mirrored.of(message) if message["method"] == "tools/call" else None
        rejection = H.check_stateless_headers(headers, message, param_headers=param_headers)
        if rejection is not None:
            await send_rejection(send, rejection)
            return
        await serve_stateless(self.server, message, receive, send, sse_after=self.sse_after, principal=principal)

    async def _initialize(
        self, message: dict[str, Any], principal: Principal | None, receive: Receive, send: Send, client: ClientKey
    ) -> None:
        refused = self.sessions.refusal(client)  # its share (429), or the server's cap (503)
        if refused is not None:
            await send_rejection(send, refused)
            return
        session = self.sessions.open(principal, client)
        responding = self._responding
        await open_session(
            session, message, self.fleet, receive, send, retry_ms=responding["retry_ms"], rules=responding["rules"]
        )
        if session.protocol.protocol_version is None or session.protocol.state.value == "new":
            await self.sessions.end(session.session_id)  # initialize failed: nothing to keep

    # ------------------------------------------------------------------- GET

    async def _get(
        self, headers: dict[str, str], principal: Principal | None, receive: Receive, send: Send, scope: Scope
    ) -> None:
        rejection = H.check_accept("GET", headers)
        if rejection is not None:
            await send_rejection(send, rejection)
            return
        session = await self._existing_session(headers, principal, send)
        if session is None:
            return
        # The client's share of streams (429) and the server's cap (503), then a place taken at
        # once (no await between): a stream of the session, or the resumption of one.
        rules = self.streams
        client = client_of(principal, scope)
        refused = rules.refusal(client)
        if refused is not None:
            await send_rejection(send, refused)
            return
        lifetime = rules.open(client)
        try:
            last_event_id = headers.get("last-event-id")
            if last_event_id and not names_get_stream(last_event_id):  # (a GET stream opens anew)
                await resume_stream(
                    session,
                    last_event_id,
                    receive,
                    send,
                    alive=self.fleet.reachable,
                    lifetime=lifetime,
                )
                return
            release = await self.fleet.claim_get_stream(session.session_id)  # one per session, fleet-wide
            if session.transport.standalone is not None or release is None:
                if release is not None:
                    await release()
                await send_rejection(send, _GET_TAKEN)
                return
            try:
                await serve_get_stream(session, receive, send, retry_ms=self.retry_ms, lifetime=lifetime)
            finally:
                await release()
        finally:
            rules.close(lifetime)

    # ---------------------------------------------------------------- DELETE

    async def _delete(self, headers: dict[str, str], principal: Principal | None, send: Send) -> None:
        session = await self._existing_session(headers, principal, send)
        if session is None:
            return
        await self.fleet.forget(session.session_id)
        await self.sessions.end(session.session_id)
        await send_bytes(send, 200, b"", {})

    async def _existing_session(
        self, headers: dict[str, str], principal: Principal | None, send: Send
    ) -> HttpSession | None:
        session_id = headers.get("mcp-session-id")
        if session_id is None:
            await send_rejection(send, H.Rejection(400, InvalidRequest("Mcp-Session-Id header required")))
            return None
        session = await self.sessions.find(session_id, principal)
        if session is None:
            await send_rejection(send, _NO_SESSION)
            return None
        rejection = H.check_protocol_version_header(headers, expected=session.version, supported=HANDSHAKE_VERSIONS)
        if rejection is not None:  # GET and DELETE carry the header too (2025-11-25 §Protocol Version Header)
            await send_rejection(send, rejection)
            return None
        return session

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await self.join_fleet()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.aclose()
                await traced.flush()  # a server that re-raises SIGTERM (uvicorn does) skips atexit
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def aclose(self) -> None:
        """End every session (for tests and embedding apps' shutdown hooks), and stop the
        URL-elicitation side listener if one was started."""
        await self.sessions.end_all()
        if self.legacy_sse is not None:
            await self.legacy_sse.aclose()
        await self.fleet.aclose()
        if self.server.url_elicitations is not None:
            await self.server.url_elicitations.stop_pages()
        await self.server.aclose()
