"""The pages a URL flow sends the person to, and the loopback listener that can serve them.

``UrlElicitations`` is the ASGI app: ``/elicit/<token>`` asks for the confirmation code
(GET shows the form, POST checks it), then binds the browser with a cookie and runs the
flow's handler; ``/elicit/callback`` takes the third party's return. What each check
guards against is in the package docstring.
"""

from __future__ import annotations

__all__ = ["Identify", "PagesOwner", "UrlElicitations"]

import asyncio
import hmac
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import parse_qsl, urlsplit

from ..asgi import Receive, Scope, Send, header_map, read_body, send_bytes
from .flows import FlowRegistry, UrlFlow, digest
from .markup import PAGE_HEADERS, cookie_name, cookies, send_page

if TYPE_CHECKING:
    from ...state.calls import Calls
    from ..h1.loopback import LoopbackListener

logger = logging.getLogger("backchannel.url_elicitation")

#: ``await identify(headers)``: the principal the browser is logged in as, or None.
Identify = Callable[[Mapping[str, str]], Awaitable[str | None]]

_FORM_LIMIT = 4096


class PagesOwner(Protocol):
    """A server as ``UrlElicitations.of`` sees it: where it keeps its manager, and what the
    manager's pages take from it (``Server`` meets it; this package imports nothing of it)."""

    url_elicitations: UrlElicitations | None

    @property
    def name(self) -> str: ...
    @property
    def info(self) -> dict[str, Any]: ...
    @property
    def clock(self) -> Callable[[], float] | None: ...


class UrlElicitations(FlowRegistry):
    """The URL flows of one server and the pages that run them (an ASGI app).

    ``base_url`` is where browsers reach this app (``http://127.0.0.1:8000``); pages are
    under ``prefix``. Attach it with ``server.url_elicitations = UrlElicitations(...)``:
    ``server.http_app()`` then serves the pages beside the MCP endpoint; or mount this
    object anywhere an ASGI app goes. Nothing needs configuring: ``run_http(host, port)``
    defaults ``base_url`` to that address, and with no ``base_url`` at all (stdio, or an
    HTTP app whose public address is unknown) the first URL flow starts a loopback-only
    side listener (``serve_pages``) that stops when the server's run ends. ``ttl`` bounds
    each flow, ``poll_wait`` how long a stateless-era retry waits for a flow before
    answering "not yet", ``code_attempts`` the wrong confirmation codes one link tolerates
    (then that link is used up, never the flow: someone holding only the link cannot end
    the owner's flow), ``fresh_links`` how many fresh links (``reissue``) a flow may get,
    ``max_flows`` the flows kept at once (the oldest unfinished one is cancelled beyond
    it). ``identify`` adds the login check described in the package docstring. In a fleet of
    workers every worker serves the pages under the same ``base_url`` (``fleet.py``); attach
    the manager before the app starts.
    """

    def __init__(
        self,
        base_url: str | None = None,
        *,
        prefix: str = "/elicit",
        ttl: float = 600.0,
        poll_wait: float = 20.0,
        code_attempts: int = 5,
        fresh_links: int = 3,
        max_flows: int = 1000,
        identify: Identify | None = None,
        title: str = "MCP server",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(
            base_url,
            prefix=prefix,
            ttl=ttl,
            poll_wait=poll_wait,
            code_attempts=code_attempts,
            fresh_links=fresh_links,
            max_flows=max_flows,
            clock=clock,
        )
        self.identify = identify
        self.title = title
        self._listener: LoopbackListener | None = None
        self._listener_lock = asyncio.Lock()
        #: This worker's fleet calls, once it joined a fleet (``join_fleet``).
        self.calls: Calls | None = None

    @classmethod
    def of(cls, server: PagesOwner) -> UrlElicitations:
        """The server's manager, made (without pages, on the server's clock) if it has none yet."""
        if server.url_elicitations is None:
            title = server.info.get("title") or server.name
            clock = time.monotonic if server.clock is None else server.clock
            server.url_elicitations = cls(title=title, clock=clock)
        return server.url_elicitations

    def join_fleet(self, calls: Calls) -> None:
        """Serve as one worker of a fleet (``Sharing.start`` does it): name flows after this
        worker, and hand each page request about another worker's flow to that worker."""
        self.calls = calls
        self.worker = calls.state.worker_id

    async def serve_forwarded(self, request: Any) -> dict[str, Any]:
        """Serve a page request another worker forwarded (``fleet.PAGE``); the response as data."""
        from .fleet import serve_forwarded

        return await serve_forwarded(self._serve_here, request)

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
                from ..h1.loopback import LoopbackListener

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
        # (a fleet's forwarding loads with the first page: an HTTP server's start does without it)
        from .fleet import forward_page, owner_elsewhere

        root, full = scope.get("root_path", ""), scope.get("path", "")
        path = full[len(root) :] if root and full.startswith(root) else full
        owner = owner_elsewhere(
            self.calls, self.worker, scope, path[len(self.prefix) + 1 :] if self.handles(path) else None
        )
        if owner is not None and self.calls is not None:  # another worker's flow: only that worker can serve it
            await forward_page(self.calls, owner, path, scope, receive, send)
            return
        await self._serve_here(scope, receive, send)

    async def _serve_here(self, scope: Scope, receive: Receive, send: Send) -> None:
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
            await send_page(send, 405, "Not allowed", "<p>This page only answers GET and POST.</p>")
        else:
            await send_page(send, 404, "Not found", "<p>There is no such page.</p>")

    def _browser_of(self, flow: UrlFlow, headers: Mapping[str, str]) -> bool:
        """Whether this browser holds the cookie set when the flow was claimed."""
        if flow._browser_hash is None:
            return False
        secret = cookies(headers).get(cookie_name(flow))
        return secret is not None and hmac.compare_digest(digest(secret), flow._browser_hash)

    async def _refused_identity(self, flow: UrlFlow, headers: Mapping[str, str], send: Send) -> bool:
        if self.identify is None:
            return False
        who = await self.identify(headers)
        if who is not None and who == flow.owner:
            return False
        await send_page(
            send,
            403,
            "Not your link",
            "<p>This link was made for another account. If someone sent it to you, close this page: "
            "it cannot be used from your browser.</p>",
        )
        return True

    async def _usable(self, token: str, headers: Mapping[str, str], send: Send) -> UrlFlow | None:
        """The flow ``token`` may act on now, or None once the reason it may not was answered."""
        flow, current = self._link_of(token)
        if flow is None:
            await send_page(
                send,
                404,
                "Link not valid",
                "<p>This link is not valid: it expired, was already used, or never existed.</p>",
            )
            return None
        if not current:
            await self._used_up(send)
            return None
        if flow.status == "claimed" and not self._browser_of(flow, headers):
            await send_page(
                send,
                409,
                "Link already used",
                "<p>This link was already used in another browser. A link works once, for the "
                "person who asked for it; if that was not you, close this page.</p>",
            )
            return None
        if await self._refused_identity(flow, headers, send):
            return None
        return flow

    async def _used_up(self, send: Send) -> None:
        # Said the same way to whoever holds a retired link: it tells them nothing about the flow.
        await send_page(
            send,
            410,
            "Link used up",
            "<p>This link no longer works: a wrong confirmation code was typed too many times, or a "
            "fresh link replaced it. If you started this, ask your MCP client for a fresh link (it comes "
            "with a new code). If someone else sent you this link, close this page.</p>",
        )

    async def _landing(self, token: str, headers: Mapping[str, str], send: Send) -> None:
        flow = await self._usable(token, headers, send)
        if flow is None:
            return
        if flow.status == "claimed":  # this browser confirmed already (a reload): go on
            await self._continue(flow, send, None)
            return
        await send_page(send, 200, "Confirm it is you", self._form(flow, None))

    def _form(self, flow: UrlFlow, problem: str | None) -> str:
        import html

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
            await send_page(send, 403, "Refused", "<p>This form can only be sent from its own page.</p>")
            return
        body = await read_body(receive, _FORM_LIMIT)
        flow = await self._usable(token, headers, send)
        if flow is None:
            return
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
                # The link is used up, not the flow: whoever holds only the link must not be
                # able to end the owner's flow. The owner gets a fresh link over MCP (reissue).
                self._spend(flow)
                await self._used_up(send)
                return
            problem = f"That code does not match ({left} {'try' if left == 1 else 'tries'} left)."
            await send_page(send, 403, "Confirm it is you", self._form(flow, problem))
            return
        # The token is used up: this browser, and only this one, may go on (cookie binding).
        secret = secrets.token_urlsafe(32)
        flow._browser_hash = digest(secret)
        flow.status = "claimed"  # from now on other browsers get "already used"; this one may reload
        await self._continue(flow, send, self._cookie(flow, secret))

    async def _continue(self, flow: UrlFlow, send: Send, cookie: str | None) -> None:
        extra = {"set-cookie": cookie} if cookie else {}
        if flow.handler is None:
            self.complete(flow)
            await send_page(send, 200, "Done", "<p>Done. You can close this page.</p>", extra)
            return
        if flow.state is not None:
            self._by_state.pop(flow.state, None)
        flow.state = self.named(secrets.token_urlsafe(24))
        self._by_state[flow.state] = flow.id
        try:
            target = await flow.handler.begin(flow)
        except Exception:
            logger.exception("the URL flow %s could not begin", flow.id)
            self.fail(flow, "cancel")
            await send_page(send, 500, "Something went wrong", "<p>The flow could not start.</p>", extra)
            return
        if urlsplit(target).scheme not in ("http", "https"):
            self.fail(flow, "cancel")
            await send_page(send, 500, "Something went wrong", "<p>The flow could not start.</p>", extra)
            return
        await send_bytes(send, 303, b"", {**PAGE_HEADERS, "location": target, **extra})

    async def _callback(self, query: Mapping[str, str], headers: Mapping[str, str], send: Send) -> None:
        flow_id = self._by_state.get(query.get("state", ""))
        flow = self._flows.get(flow_id) if flow_id is not None else None
        if flow is None or flow.handler is None or flow.status != "claimed":
            await send_page(
                send, 400, "Not valid", "<p>This sign-in is not valid any more (it expired or was already used).</p>"
            )
            return
        if not self._browser_of(flow, headers):
            # A forwarded authorization URL finished in someone else's browser: refused.
            await send_page(
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
            await send_page(send, 200, "Not connected", "<p>Nothing was connected. You can close this page.</p>")
            return
        try:
            await flow.handler.finish(flow, query)
        except Exception:
            logger.exception("the URL flow %s could not finish", flow.id)
            self.fail(flow, "cancel")
            await send_page(send, 502, "Something went wrong", "<p>The flow could not be completed.</p>")
            return
        self.complete(flow)
        await send_page(send, 200, "Done", '<p id="done">Done. You can close this page and go back.</p>')

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
        return f"{cookie_name(flow)}={secret}; Path={self.prefix}; Max-Age={max_age}; HttpOnly; SameSite=Lax{secure}"
