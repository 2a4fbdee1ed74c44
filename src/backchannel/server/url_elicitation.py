"""URL-mode elicitation: send the person to a web page, learn when they are done, and
make sure the person who finishes is the one who was asked.

``await ctx.elicit_url(message, flow=handler)`` works in both eras:

- Handshake era (2025-11-25): an ``elicitation/create`` with ``mode: "url"`` and an
  ``elicitationId``; the client's ``accept`` is only consent, so the call then waits
  (bounded) for the browser flow, and when the flow completes the server sends
  ``notifications/elicitation/complete`` to the connection that asked. With
  ``via="error"`` the tool call is answered with ``-32042`` (``URLElicitationRequiredError``,
  ``data.elicitations``) instead; the client runs the flow and retries the call, and
  the tool decides from its own state (a stored token, say) that it can go on.
- Stateless era (2026-07-28): no ``elicitationId``, no notification, no ``-32042``.
  The first round returns an ``InputRequiredResult`` with the URL request; the flow's id
  rides in the sealed ``requestState``. On each retry the server looks the flow up:
  done, the handler goes on; not yet, it waits up to ``poll_wait`` and otherwise answers
  with a ``requestState``-only ``InputRequiredResult`` that the client retries.

Who may finish a flow (the phishing rule, EL-63..65)
-----------------------------------------------------
A URL that someone forwards must be useless to whoever it is forwarded to:

1. **The URL is a one-time, unguessable, expiring token.** ``{base}/elicit/{token}``:
   256 random bits, kept only as a hash, valid for ``ttl`` seconds, bound to the flow
   (and so to the MCP principal, the connection and the request that asked). It names
   no user and grants nothing by itself: it is not pre-authenticated (EL-46, EL-47).
2. **A confirmation code proves the browser belongs to the person at the client.**
   The code (8 digits) is shown by the client with the message and never appears in
   the URL; the page asks for it before anything happens, refusing wrong codes (after
   ``code_attempts`` misses the flow is dead). Someone who got only the URL cannot go
   on. The page warns never to type a code that someone else supplied.
3. **The browser that proved the code is bound by a cookie set before the redirect.**
   The first correct code uses the token up: the page sets an HttpOnly, SameSite=Lax
   cookie holding a per-flow secret (its hash is kept with the flow), then redirects
   to the third party with a one-time ``state``. The return (``/elicit/callback``) is
   accepted only with that ``state`` *and* that cookie, so an authorization URL or a
   callback forwarded to another browser is refused, and the token cannot be claimed
   again from anywhere else.
4. **Optionally, the browser's own login is compared with the MCP principal.** Where
   the server has a web login (the MCP authorization server's session cookie, say),
   pass ``identify``: the page then refuses any browser whose principal differs from
   the flow's owner before it even asks for the code. This is the spec's recommended
   check and the strongest; 1-3 hold where no such login exists (stdio, local tools).

POSTs must come from the page itself (``Origin``/``Sec-Fetch-Site``), so another site
cannot make a victim's browser submit a code it learnt. Pages are sent with
``Referrer-Policy: no-referrer`` so the token never leaks to the third party, and with
``Cache-Control: no-store``. Flows are bound to ``ctx.principal`` when the transport
authenticates (never to a session id alone); a stateless-era retry from another
principal is refused. What the third party hands back (tokens) stays with the
server's ``UrlFlowHandler``; nothing but the URL, the message and the id ever crosses
the MCP channel.

The pages need no setup: with no ``base_url`` the first flow serves them on a side
listener bound to ``127.0.0.1`` (a free port, uvicorn in the same loop, imported only
then), stopped when ``Server.serve``/``run_stdio`` ends (or the HTTP app shuts down).

Flows live in this process's memory: run one worker, or route a flow's browser and
retries to the worker that made it.
"""

from __future__ import annotations

__all__ = [
    "UrlElicitations",
    "UrlFlow",
    "UrlFlowHandler",
    "elicit_url",
    "url_elicitation_required",
]

import asyncio
import contextlib
import hashlib
import hmac
import html
import logging
import secrets
import time
import uuid
import weakref
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol
from urllib.parse import parse_qsl, urlsplit

from ..protocol.capabilities import require
from ..transports.http.asgi import Receive, Scope, Send, header_map, read_body, send_bytes
from ..types.errors import (
    ConnectionClosed,
    InvalidParams,
    LocalProtocolError,
    MissingCapability,
    RequestTimeout,
    UrlElicitationRequired,
)
from .elicitation import Elicited
from .mrtr import InputRequired

if TYPE_CHECKING:
    from ..protocol.events import RequestId
    from ..runtime.connection import Connection
    from ..transports.http.loopback import LoopbackListener
    from .context import Context
    from .server import Server

logger = logging.getLogger("backchannel.url_elicitation")

Action = Literal["accept", "decline", "cancel"]
FlowStatus = Literal["pending", "claimed", "complete", "failed"]
#: ``await identify(headers)``: the principal the browser is logged in as, or None.
Identify = Callable[[Mapping[str, str]], Awaitable[str | None]]

_COMPLETE = "notifications/elicitation/complete"
_FORM_LIMIT = 4096


class UrlFlowHandler(Protocol):
    """What a flow does once the browser is confirmed, e.g. an OAuth authorization-code flow.

    ``begin`` returns the URL to send the browser to (put ``flow.state`` in it as the
    OAuth ``state`` and ``manager.callback_url`` as the redirect URI); keep secrets such
    as the PKCE verifier in ``flow.data``. ``finish`` gets the query of the return to
    ``callback_url`` (already checked to come from the same browser) and stores what
    it obtains, bound to ``flow.owner``; raising fails the flow.
    """

    async def begin(self, flow: UrlFlow) -> str: ...

    async def finish(self, flow: UrlFlow, params: Mapping[str, str]) -> None: ...


def _digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode()).digest()


def _new_code() -> str:
    digits = f"{secrets.randbelow(10**8):08d}"
    return f"{digits[:4]}-{digits[4:]}"


@dataclass(eq=False)
class UrlFlow:
    """One out-of-band interaction. ``id`` is the ``elicitationId``; ``data`` is the
    handler's private scratch space (never sent anywhere)."""

    id: str
    message: str
    owner: str | None
    expires: float
    handler: UrlFlowHandler | None = None
    external_url: str | None = None
    code: str | None = None
    status: FlowStatus = "pending"
    outcome: Action | None = None
    state: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    url: str = ""
    _token_hash: bytes | None = None
    _browser_hash: bytes | None = None
    _attempts: int = 0
    _event: asyncio.Event = field(default_factory=asyncio.Event)
    _notify: tuple[weakref.ref[Connection], RequestId | None] | None = None

    @property
    def done(self) -> bool:
        return self.status in ("complete", "failed")

    @property
    def prompt(self) -> str:
        """The message the client shows: the server's text plus the confirmation code."""
        if self.code is None:
            return self.message
        return (
            f"{self.message}\n\nConfirmation code: {self.code}. The page will ask for it; "
            "never type a code that someone else gave you."
        )

    def elicitation(self, *, with_id: bool) -> dict[str, Any]:
        """The ``elicitation/create`` params (``elicitationId`` only in the handshake era)."""
        params: dict[str, Any] = {"mode": "url", "message": self.prompt, "url": self.url}
        if with_id:
            params["elicitationId"] = self.id
        return params


class UrlElicitations:
    """The URL flows of one server and the pages that run them (an ASGI app).

    ``base_url`` is where browsers reach this app (``http://127.0.0.1:8000``); pages are
    under ``prefix``. Attach it with ``server.url_elicitations = UrlElicitations(...)``:
    ``server.http_app()`` then serves the pages beside the MCP endpoint; or mount this
    object anywhere an ASGI app goes. Nothing needs configuring: ``run_http(host, port)``
    defaults ``base_url`` to that address, and with no ``base_url`` at all (stdio, or an
    HTTP app whose public address is unknown) the first URL flow starts a loopback-only
    side listener (``serve_pages``) that stops when the server's run ends. ``ttl`` bounds
    each flow, ``poll_wait`` how long a stateless-era retry waits for a flow before
    answering "not yet", ``code_attempts`` the wrong confirmation codes tolerated,
    ``max_flows`` the flows kept at once (the oldest unfinished one is cancelled beyond it).
    ``identify`` adds the login check described in the module docstring.
    """

    def __init__(
        self,
        base_url: str | None = None,
        *,
        prefix: str = "/elicit",
        ttl: float = 600.0,
        poll_wait: float = 20.0,
        code_attempts: int = 5,
        max_flows: int = 1000,
        identify: Identify | None = None,
        title: str = "MCP server",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.base_url = base_url.rstrip("/") if base_url else None
        self.prefix = "/" + prefix.strip("/")
        self.ttl = ttl
        self.poll_wait = poll_wait
        self.code_attempts = code_attempts
        self.max_flows = max_flows
        self.identify = identify
        self.title = title
        self._clock = clock
        self._flows: dict[str, UrlFlow] = {}
        self._by_token: dict[bytes, str] = {}
        self._by_state: dict[str, str] = {}
        self._listener: LoopbackListener | None = None
        self._listener_lock = asyncio.Lock()

    @classmethod
    def of(cls, server: Server) -> UrlElicitations:
        """The server's manager, made (without pages) if it has none yet."""
        if server.url_elicitations is None:
            server.url_elicitations = cls(title=server.info.get("title") or server.name)
        return server.url_elicitations

    # ------------------------------------------------- the loopback side listener

    @property
    def listening(self) -> bool:
        """Whether the pages are served by this manager's own loopback side listener."""
        return self._listener is not None

    async def serve_pages(self) -> str:
        """The base URL of the pages. With no ``base_url`` configured (a stdio server, or an
        HTTP app whose public address is unknown), start a side listener serving this app on
        ``127.0.0.1`` (a free port) in the running loop, once; ``stop_pages()`` ends it."""
        if self.base_url:
            return self.base_url
        async with self._listener_lock:
            if not self.base_url:
                from ..transports.http.loopback import LoopbackListener

                listener = LoopbackListener(self)
                self.base_url = await listener.start()
                self._listener = listener
        return self.base_url

    async def stop_pages(self) -> None:
        """Stop the side listener, if ``serve_pages`` started one, and cancel the flows whose
        pages it served (their links lead nowhere now). A configured ``base_url`` stays."""
        listener, self._listener = self._listener, None
        if listener is None:
            return
        self.base_url = None
        for flow in list(self._flows.values()):
            if flow.external_url is None and not flow.done:
                self.fail(flow, "cancel")
        await listener.stop()

    # ------------------------------------------------------------- flows

    @property
    def callback_url(self) -> str:
        """Where a ``UrlFlowHandler`` sends the browser back (its OAuth redirect URI)."""
        return f"{self._base()}{self.prefix}/callback"

    def _base(self) -> str:
        if not self.base_url:
            raise RuntimeError(
                "URL elicitation pages need a public address: give UrlElicitations(base_url=...), "
                "or await serve_pages() first (ctx.elicit_url does) to serve them on loopback"
            )
        return self.base_url

    def start(
        self,
        message: str,
        *,
        owner: str | None = None,
        handler: UrlFlowHandler | None = None,
        url: str | None = None,
        connection: Connection | None = None,
        related: RequestId | None = None,
    ) -> UrlFlow:
        """A new flow. With ``url``, the person goes straight there and the app calls
        ``complete(flow.id)`` itself (``{elicitation_id}`` in ``url`` is filled in);
        otherwise they go to this app's page, which checks the confirmation code and
        then runs ``handler`` (or, with none, completes at once).
        ``connection`` is the handshake-era connection to notify on completion."""
        self._prune()
        flow = UrlFlow(str(uuid.uuid4()), message, owner, self._clock() + self.ttl, handler)
        if url is not None:
            flow.external_url = url.replace("{elicitation_id}", flow.id)
            flow.url = flow.external_url
        else:
            token = secrets.token_urlsafe(32)
            flow._token_hash = _digest(token)
            flow.code = _new_code()
            flow.url = f"{self._base()}{self.prefix}/{token}"
            self._by_token[flow._token_hash] = flow.id
        if connection is not None:
            flow._notify = (weakref.ref(connection), related)
        self._flows[flow.id] = flow
        return flow

    def get(self, flow_id: str) -> UrlFlow | None:
        """The flow, finished or not, until it expires."""
        self._prune()
        return self._flows.get(flow_id)

    def complete(self, flow: UrlFlow | str) -> bool:
        """Mark the flow done (the out-of-band step succeeded); False if it was over already."""
        found = self._resolve(flow)
        if found is None or found.done:
            return False
        found.status, found.outcome = "complete", "accept"
        self._settle(found)
        self._send_complete(found)
        return True

    def fail(self, flow: UrlFlow | str, action: Action = "cancel") -> bool:
        """End the flow unsuccessfully (``decline`` or ``cancel``); False if it was over already."""
        found = self._resolve(flow)
        if found is None or found.done:
            return False
        found.status, found.outcome = "failed", "decline" if action == "decline" else "cancel"
        self._settle(found)
        return True

    async def wait(self, flow: UrlFlow, timeout: float | None = None) -> bool:
        """Wait until the flow is over, at most ``timeout`` seconds and never past its
        expiry (which cancels it); True when it is over."""
        limit = max(0.0, flow.expires - self._clock())
        if timeout is not None:
            limit = min(limit, timeout)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(limit):
                await flow._event.wait()
        if not flow.done and flow.expires <= self._clock():
            self.fail(flow, "cancel")
        return flow.done

    def _resolve(self, flow: UrlFlow | str) -> UrlFlow | None:
        return self._flows.get(flow) if isinstance(flow, str) else flow

    def _settle(self, flow: UrlFlow) -> None:
        if flow._token_hash is not None:
            self._by_token.pop(flow._token_hash, None)
        if flow.state is not None:
            self._by_state.pop(flow.state, None)
        flow._event.set()

    def _send_complete(self, flow: UrlFlow) -> None:
        # EL-20/21: only to the client that started it, carrying its elicitationId.
        if flow._notify is None:
            return
        ref, related = flow._notify
        connection = ref()
        if connection is None or connection.closed.is_set():
            return
        try:
            connection.notify(_COMPLETE, {"elicitationId": flow.id}, related=related)
        except (LocalProtocolError, ConnectionClosed) as exc:
            logger.debug("could not send %s for %s: %s", _COMPLETE, flow.id, exc)

    def _prune(self) -> None:
        now = self._clock()
        for flow in [f for f in self._flows.values() if f.expires <= now]:
            self.fail(flow, "cancel")
            self._flows.pop(flow.id, None)
        for flow in list(self._flows.values()):  # oldest first: dicts keep insertion order
            if len(self._flows) < self.max_flows:
                break
            self.fail(flow, "cancel")
            self._flows.pop(flow.id, None)

    # --------------------------------------------------------------- ASGI

    def handles(self, path: str) -> bool:
        """Whether ``path`` (relative to the app's root) is one of this app's pages."""
        return path.startswith(self.prefix + "/")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                kind = message["type"].rsplit(".", 1)[-1]
                await send({"type": f"lifespan.{kind}.complete"})
                if kind == "shutdown":
                    return
        if scope["type"] != "http":
            return
        root, full = scope.get("root_path", ""), scope.get("path", "")
        path = full[len(root) :] if root and full.startswith(root) else full
        rest = path[len(self.prefix) + 1 :] if self.handles(path) else None
        method = scope["method"]
        headers = header_map(scope)
        self._prune()
        if rest == "callback" and method == "GET":
            query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
            await self._callback(query, headers, send)
        elif rest and "/" not in rest and method == "GET":
            await self._landing(rest, headers, send)
        elif rest and "/" not in rest and method == "POST":
            await self._confirm(rest, headers, receive, send)
        elif rest and method not in ("GET", "POST"):
            await self._page(send, 405, "Not allowed", "<p>This page only answers GET and POST.</p>")
        else:
            await self._page(send, 404, "Not found", "<p>There is no such page.</p>")

    def _flow_for(self, token: str) -> UrlFlow | None:
        flow_id = self._by_token.get(_digest(token))
        return self._flows.get(flow_id) if flow_id is not None else None

    def _browser_of(self, flow: UrlFlow, headers: Mapping[str, str]) -> bool:
        """Whether this browser holds the cookie set when the flow was claimed."""
        if flow._browser_hash is None:
            return False
        secret = _cookies(headers).get(_cookie_name(flow))
        return secret is not None and hmac.compare_digest(_digest(secret), flow._browser_hash)

    async def _refused_identity(self, flow: UrlFlow, headers: Mapping[str, str], send: Send) -> bool:
        if self.identify is None:
            return False
        who = await self.identify(headers)
        if who is not None and who == flow.owner:
            return False
        await self._page(
            send,
            403,
            "Not your link",
            "<p>This link was made for another account. If someone sent it to you, close this page: "
            "it cannot be used from your browser.</p>",
        )
        return True

    async def _unusable(self, flow: UrlFlow | None, headers: Mapping[str, str], send: Send) -> bool:
        """Answer for a token that cannot be used now; False when it can."""
        if flow is None:
            await self._page(
                send,
                404,
                "Link not valid",
                "<p>This link is not valid: it expired, was already used, or never existed.</p>",
            )
            return True
        if flow.status == "claimed" and not self._browser_of(flow, headers):
            await self._page(
                send,
                409,
                "Link already used",
                "<p>This link was already used in another browser. A link works once, for the "
                "person who asked for it; if that was not you, close this page.</p>",
            )
            return True
        return await self._refused_identity(flow, headers, send)

    async def _landing(self, token: str, headers: Mapping[str, str], send: Send) -> None:
        flow = self._flow_for(token)
        if await self._unusable(flow, headers, send):
            return
        assert flow is not None
        if flow.status == "claimed":  # this browser confirmed already (a reload): go on
            await self._continue(flow, send, None)
            return
        await self._page(send, 200, "Confirm it is you", self._form(flow, None))

    def _form(self, flow: UrlFlow, problem: str | None) -> str:
        note = f'<p class="problem" id="problem">{html.escape(problem)}</p>' if problem else ""
        return (
            f"<p><strong>{html.escape(self.title)}</strong> asks:</p>"
            f'<blockquote id="message">{html.escape(flow.message)}</blockquote>'
            f"{note}"
            "<p>Type the confirmation code that <em>your own</em> MCP client shows for this request. "
            "If you did not start this yourself, or someone else gave you the code, close this page.</p>"
            '<form method="post"><label for="code">Confirmation code</label> '
            '<input id="code" name="code" autocomplete="off" inputmode="numeric" autofocus required> '
            '<button id="continue" type="submit">Continue</button></form>'
        )

    async def _confirm(self, token: str, headers: Mapping[str, str], receive: Receive, send: Send) -> None:
        if not self._same_origin(headers):
            await self._page(send, 403, "Refused", "<p>This form can only be sent from its own page.</p>")
            return
        body = await read_body(receive, _FORM_LIMIT)
        flow = self._flow_for(token)
        if await self._unusable(flow, headers, send):
            return
        assert flow is not None
        if flow.status == "claimed":
            await self._continue(flow, send, None)
            return
        form = dict(parse_qsl((body or b"").decode("utf-8", "replace")))
        given = "".join(ch for ch in form.get("code", "") if ch.isdigit())
        expected = "".join(ch for ch in flow.code or "" if ch.isdigit())
        if not hmac.compare_digest(given.encode(), expected.encode()):
            flow._attempts += 1
            left = self.code_attempts - flow._attempts
            if left <= 0:
                self.fail(flow, "cancel")
                await self._page(
                    send,
                    403,
                    "Link closed",
                    "<p>Too many wrong codes: this link no longer works. Start again from your MCP client.</p>",
                )
                return
            problem = f"That code does not match ({left} {'try' if left == 1 else 'tries'} left)."
            await self._page(send, 403, "Confirm it is you", self._form(flow, problem))
            return
        # The token is used up: this browser, and only this one, may go on (cookie binding).
        secret = secrets.token_urlsafe(32)
        flow._browser_hash = _digest(secret)
        flow.status = "claimed"  # from now on other browsers get "already used"; this one may reload
        await self._continue(flow, send, self._cookie(flow, secret))

    async def _continue(self, flow: UrlFlow, send: Send, cookie: str | None) -> None:
        extra = {"set-cookie": cookie} if cookie else {}
        if flow.handler is None:
            self.complete(flow)
            await self._page(send, 200, "Done", "<p>Done. You can close this page.</p>", extra)
            return
        if flow.state is not None:
            self._by_state.pop(flow.state, None)
        flow.state = secrets.token_urlsafe(24)
        self._by_state[flow.state] = flow.id
        try:
            target = await flow.handler.begin(flow)
        except Exception:
            logger.exception("the URL flow %s could not begin", flow.id)
            self.fail(flow, "cancel")
            await self._page(send, 500, "Something went wrong", "<p>The flow could not start.</p>", extra)
            return
        if urlsplit(target).scheme not in ("http", "https"):
            self.fail(flow, "cancel")
            await self._page(send, 500, "Something went wrong", "<p>The flow could not start.</p>", extra)
            return
        await send_bytes(send, 303, b"", {**_PAGE_HEADERS, "location": target, **extra})

    async def _callback(self, query: Mapping[str, str], headers: Mapping[str, str], send: Send) -> None:
        flow_id = self._by_state.get(query.get("state", ""))
        flow = self._flows.get(flow_id) if flow_id is not None else None
        if flow is None or flow.handler is None or flow.status != "claimed":
            await self._page(
                send, 400, "Not valid", "<p>This sign-in is not valid any more (it expired or was already used).</p>"
            )
            return
        if not self._browser_of(flow, headers):
            # A forwarded authorization URL finished in someone else's browser: refused.
            await self._page(
                send,
                403,
                "Refused",
                "<p>This sign-in was started in another browser, so it was not accepted. "
                "If someone sent you a link to get here, your account was not connected to anything.</p>",
            )
            return
        if await self._refused_identity(flow, headers, send):
            return
        self._by_state.pop(flow.state or "", None)
        flow.state = None
        if "error" in query:
            self.fail(flow, "decline" if query["error"] == "access_denied" else "cancel")
            await self._page(send, 200, "Not connected", "<p>Nothing was connected. You can close this page.</p>")
            return
        try:
            await flow.handler.finish(flow, query)
        except Exception:
            logger.exception("the URL flow %s could not finish", flow.id)
            self.fail(flow, "cancel")
            await self._page(send, 502, "Something went wrong", "<p>The flow could not be completed.</p>")
            return
        self.complete(flow)
        await self._page(send, 200, "Done", '<p id="done">Done. You can close this page and go back.</p>')

    def _same_origin(self, headers: Mapping[str, str]) -> bool:
        """Whether a POST came from our own page (CSRF). Browsers send ``Sec-Fetch-Site``;
        ``Origin`` is ``null`` from a no-referrer page, so then ``Sec-Fetch-Site`` must vouch."""
        site = headers.get("sec-fetch-site")
        if site is not None and site not in ("same-origin", "none"):
            return False
        origin = headers.get("origin")
        if origin == "null":
            return site is not None
        if origin is not None and self.base_url is not None:
            base = urlsplit(self.base_url)
            return origin.rstrip("/") == f"{base.scheme}://{base.netloc}"
        return True

    def _cookie(self, flow: UrlFlow, secret: str) -> str:
        secure = "; Secure" if (self.base_url or "").startswith("https:") else ""
        max_age = max(1, int(flow.expires - self._clock()))
        return f"{_cookie_name(flow)}={secret}; Path={self.prefix}; Max-Age={max_age}; HttpOnly; SameSite=Lax{secure}"

    async def _page(
        self, send: Send, status: int, title: str, body: str, extra: Mapping[str, str] | None = None
    ) -> None:
        page = (
            '<!doctype html><html><head><meta charset="utf-8">'
            f"<title>{html.escape(title)}</title>"
            "<style>body{font:16px system-ui,sans-serif;max-width:40em;margin:3em auto;padding:0 1em}"
            "blockquote{border-left:4px solid #888;margin:1em 0;padding:.2em 1em;white-space:pre-wrap}"
            ".problem{color:#a00}</style></head>"
            f'<body><h1 id="title">{html.escape(title)}</h1>{body}</body></html>'
        )
        headers = {**_PAGE_HEADERS, "content-type": "text/html; charset=utf-8", **(extra or {})}
        await send_bytes(send, status, page.encode(), headers)


_PAGE_HEADERS = {
    "cache-control": "no-store",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
}


def _cookie_name(flow: UrlFlow) -> str:
    return "bcflow_" + flow.id.replace("-", "")


def _cookies(headers: Mapping[str, str]) -> dict[str, str]:
    jar: dict[str, str] = {}
    for part in headers.get("cookie", "").split(";"):
        name, sep, value = part.strip().partition("=")
        if sep:
            jar.setdefault(name, value)
    return jar


# ------------------------------------------------------------------ the handler side


def url_elicitation_required(
    elicitations: Iterable[UrlFlow | Mapping[str, Any]],
    message: str = "This request needs you to complete a step in your browser first.",
) -> UrlElicitationRequired:
    """The ``-32042`` error (handshake era) listing the URL elicitations to finish before a retry.

    Each is a ``UrlFlow`` or ready ``elicitation/create`` params; all must be URL mode
    with an ``elicitationId`` (EL-27, EL-28)."""
    listed: list[dict[str, Any]] = []
    for item in elicitations:
        params = item.elicitation(with_id=True) if isinstance(item, UrlFlow) else dict(item)
        if params.get("mode") != "url" or not params.get("elicitationId") or not params.get("url"):
            raise ValueError("-32042 lists only URL-mode elicitations with an elicitationId and a url")
        listed.append(params)
    if not listed:
        raise ValueError("-32042 must list at least one elicitation")
    return UrlElicitationRequired(message, data={"elicitations": listed})


async def elicit_url(
    ctx: Context,
    message: str,
    url: str | None = None,
    *,
    flow: UrlFlowHandler | None = None,
    timeout: float | None = None,
    via: str = "request",
) -> Elicited[None]:
    """``ctx.elicit_url``: run a URL flow; ``accept`` once it completed, else ``decline``/``cancel``.

    ``flow`` runs after the confirmation page (OAuth, say); ``url`` sends the person
    to a page of your own instead, which must call ``complete(elicitation_id)``.
    ``timeout`` bounds the wait for the browser in the handshake era (default: the
    server's ``elicitation_timeout``). ``via="error"`` answers a handshake-era call
    with ``-32042`` (the client retries it once the flow is done); in the stateless
    era both ways are the same MRTR rounds. Raises ``MissingCapability`` (-32021)
    when the client did not declare ``elicitation.url``: nothing is sent then.
    """
    if via not in ("request", "error"):
        raise ValueError(f"via must be 'request' or 'error', not {via!r}")
    if flow is not None and url is not None:
        raise ValueError("give either url (your own page) or flow (the confirmation page and a handler), not both")
    require(ctx.client_capabilities, "elicitation.url")
    manager = UrlElicitations.of(ctx.server)
    if url is None:
        await manager.serve_pages()  # no address configured: a loopback side listener, started once
    if ctx.era == "modern":
        return await _stateless_round(ctx, manager, message, url, flow)
    owner = ctx.principal
    if via == "error":
        started = manager.start(message, owner=owner, handler=flow, url=url, connection=ctx.connection)
        raise url_elicitation_required([started])
    started = manager.start(
        message, owner=owner, handler=flow, url=url, connection=ctx.connection, related=ctx.request_id
    )
    wait = ctx.server.elicitation_timeout if timeout is None else timeout
    try:
        answer = await ctx.request_input(
            "elicitation/create", started.elicitation(with_id=True), "elicitation.url", timeout=wait
        )
        action = answer.get("action")
        if action in ("decline", "cancel"):
            manager.fail(started, action)
            return Elicited(action)
        if action != "accept":
            raise InvalidParams(f"elicitation answer has an unknown action {action!r}")
        await manager.wait(started, wait)  # accept is only consent: now the browser part
    except RequestTimeout:
        manager.fail(started, "cancel")
        return Elicited("cancel")
    except BaseException:
        manager.fail(started, "cancel")
        raise
    if not started.done:
        manager.fail(started, "cancel")
    return Elicited(started.outcome or "cancel")


async def _stateless_round(
    ctx: Context, manager: UrlElicitations, message: str, url: str | None, handler: UrlFlowHandler | None
) -> Elicited[None]:
    round_ = ctx.round
    if round_ is None:
        raise MissingCapability(
            "elicitation.url", f"{ctx.request.method} cannot ask the client anything in the stateless era"
        )
    key = round_.next_key("elicitation/create")
    flow_id = round_.memo.get(key)
    flow = manager.get(flow_id) if isinstance(flow_id, str) else None
    if flow is None:
        if flow_id is not None:
            return Elicited("cancel")  # the flow expired (or lives on another worker)
        flow = manager.start(message, owner=ctx.principal, handler=handler, url=url)
        round_.memo[key] = flow.id
        raise InputRequired(key, {"method": "elicitation/create", "params": flow.elicitation(with_id=False)})
    if flow.owner != ctx.principal:
        raise InvalidParams("this requestState belongs to another user's flow")
    answer = round_.answer(key)
    if answer is None:
        raise InputRequired(key, {"method": "elicitation/create", "params": flow.elicitation(with_id=False)})
    action = answer.get("action")
    if action in ("decline", "cancel"):
        manager.fail(flow, action)
        return Elicited(action)
    if action != "accept":
        raise InvalidParams(f"elicitation answer has an unknown action {action!r}")
    if not flow.done:
        await manager.wait(flow, manager.poll_wait)  # the spec lets a retry block until the flow is done
    if flow.done:
        return Elicited(flow.outcome or "cancel")
    raise InputRequired(key, None)  # not yet: a requestState-only result, retried by the client
