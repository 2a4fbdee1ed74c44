"""A fleet in one process whose tool runs a URL flow with a handler (so the callback step
exists), a balancer that can keep every request off the flow's owner, a browser over HTTP that
keeps its cookies, and the person at the client.

- ``url_fleet(new_state, n)``: ``n`` workers (each its own ``Server``, state and app) behind
  ``Steered``, on a loopback port that every worker's pages take as their base URL.
- ``connect``, the tool: ``ctx.elicit_url(..., flow=Grant)`` and ``"<action>@<worker>"``, the
  worker that ran this round of it.
- ``Grant``, the handler: ``begin`` keeps a PKCE-like verifier in ``flow.data`` and sends the
  browser to a stand-in provider with its challenge; ``finish`` accepts only the code made from
  that verifier, so it succeeds only where the verifier is: in the flow's owner.
"""

from __future__ import annotations

__all__ = [
    "PROVIDER",
    "Browser",
    "Grant",
    "HeldPerson",
    "Speaker",
    "Steered",
    "Tap",
    "UrlFleet",
    "code_in",
    "token_of",
    "url_fleet",
]

import asyncio
import base64
import contextlib
import hashlib
import re
import secrets
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

import httpx2
from _fleet import RoundRobin, Worker

from backchannel import Context, Server
from backchannel.client.url_flow import UrlConsent, UrlElicitation, UrlFlowControls
from backchannel.server.url_elicitation import UrlElicitations, UrlFlow
from backchannel.state.shared import SharedState
from backchannel.testing import serve_on_loopback, within

#: Where ``Grant`` sends the browser: a stand-in provider the test plays itself.
PROVIDER = "http://provider.test/authorize"
CODE = re.compile(r"Confirmation code: (\d{4}-\d{4})")


def code_in(message: str) -> str:
    found = CODE.search(message)
    assert found, f"no confirmation code in {message!r}"
    return found.group(1)


def challenge(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")


class Grant:
    """The flow's handler, one per worker; ``log`` says what ran here, for which flow."""

    def __init__(self, flows: Callable[[], UrlElicitations], provider: str = PROVIDER) -> None:
        self.flows = flows
        self.provider = provider
        self.log: list[tuple[str, str]] = []

    async def begin(self, flow: UrlFlow) -> str:
        verifier = secrets.token_urlsafe(24)
        flow.data["verifier"] = verifier  # never leaves this worker
        self.log.append(("begin", flow.id))
        callback = quote(self.flows().callback_url, safe="")
        return (
            f"{self.provider}?state={quote(flow.state or '')}&challenge={challenge(verifier)}&redirect_uri={callback}"
        )

    async def finish(self, flow: UrlFlow, params: Mapping[str, str]) -> None:
        if params.get("code") != "granted-" + challenge(flow.data["verifier"]):
            raise ValueError("the code was not made for this flow's verifier")
        self.log.append(("finish", flow.id))


def url_server(worker: Worker, state: SharedState, grants: dict[str, Grant], poll_wait: float) -> Server:
    server = Server("url-fleet", state=state)
    server.url_elicitations = UrlElicitations(poll_wait=poll_wait)
    grant = grants[worker.name] = Grant(lambda: UrlElicitations.of(server))

    @server.tool()
    async def connect(ctx: Context) -> str:
        worker.ran.append("connect")
        outcome = await ctx.elicit_url("Connect your account.", flow=grant)
        return f"{outcome.action}@{worker.name}"

    return server


class Steered(RoundRobin):
    """Round robin that skips the workers in ``avoid``; ``paths`` logs ``(worker, method, path)``."""

    def __init__(self, apps: list[Any]) -> None:
        super().__init__(apps)
        self.avoid: set[int] = set()
        self.paths: list[tuple[int, str, str]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            while self.turn % len(self.apps) in self.avoid:
                self.turn += 1
            query = scope.get("query_string", b"").decode()
            self.paths.append(
                (self.turn % len(self.apps), scope["method"], scope["path"] + ("?" + query if query else ""))
            )
        await super().__call__(scope, receive, send)


@dataclass
class UrlFleet:
    base: str
    balancer: Steered
    workers: list[Worker]
    servers: list[Server]
    apps: list[Any]
    grants: dict[str, Grant]

    @property
    def url(self) -> str:
        return self.base + "/mcp"

    def index_of(self, worker_id: str) -> int:
        """Which worker (its index) has this id in the shared state."""
        return [app.state.worker_id for app in self.apps].index(worker_id)

    def owner(self, link: str) -> int:
        """The worker a link's token names as its flow's owner."""
        return self.index_of(token_of(link).split(".", 1)[0])

    def served(self, since: int, prefix: str = "/elicit/") -> list[tuple[int, str, str]]:
        return [entry for entry in self.balancer.paths[since:] if entry[2].startswith(prefix)]

    def posts(self, marker: bytes) -> list[int]:
        """The workers that received the POSTs whose body holds ``marker``."""
        return [index for index, method, body in self.balancer.served if method == "POST" and marker in body]


def token_of(link: str) -> str:
    return urlsplit(link).path.rsplit("/", 1)[-1]


@contextlib.asynccontextmanager
async def url_fleet(
    new_state: Callable[[], SharedState], n: int = 4, poll_wait: float = 20.0
) -> AsyncIterator[UrlFleet]:
    workers = [Worker(f"w{i}") for i in range(n)]
    grants: dict[str, Grant] = {}
    servers = [url_server(w, new_state(), grants, poll_wait) for w in workers]
    apps = [server.http_app() for server in servers]
    balancer = Steered(apps)
    async with serve_on_loopback(balancer) as base:
        for server in servers:  # one public address for the whole fleet, as behind a load balancer
            UrlElicitations.of(server).base_url = base
        yield UrlFleet(base, balancer, workers, servers, apps, grants)


class Browser:
    """One person's browser: its own cookie jar, talking to the fleet over HTTP."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.http = httpx2.AsyncClient(timeout=30)

    async def __aenter__(self) -> Browser:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.http.aclose()

    async def open(self, url: str) -> httpx2.Response:
        return await self.http.get(url)

    async def confirm(self, url: str, code: str, origin: str | None = None) -> httpx2.Response:
        """POST the code as the page's form does (``Origin``: the page's own, unless told)."""
        return await self.http.post(url, data={"code": code}, headers={"origin": origin or self.base})

    async def provider_grants(self, location: str) -> httpx2.Response:
        """The stand-in provider: the person allows, and the browser comes back to the callback."""
        query = dict(parse_qsl(urlsplit(location).query))
        assert location.startswith(PROVIDER), location
        return await self.http.get(
            query["redirect_uri"], params={"state": query["state"], "code": "granted-" + query["challenge"]}
        )


class HeldPerson:
    """Consents to each link, but only once the test says so (``release``), so no MCP request
    runs while the browser does."""

    def __init__(self) -> None:
        self.seen: asyncio.Queue[UrlElicitation] = asyncio.Queue()
        self.release = asyncio.Event()

    async def __call__(self, request: UrlElicitation) -> str:
        self.seen.put_nowait(request)
        await self.release.wait()
        return "accept"


class Speaker:
    """Consents to each link at once, with controls through which the test says its words."""

    def __init__(self) -> None:
        self.seen: asyncio.Queue[tuple[UrlElicitation, UrlFlowControls]] = asyncio.Queue()

    async def __call__(self, request: UrlElicitation) -> UrlConsent:
        controls = UrlFlowControls()
        self.seen.put_nowait((request, controls))
        return UrlConsent("accept", controls=controls)

    async def next(self, call: asyncio.Task[Any]) -> tuple[UrlElicitation, UrlFlowControls]:
        """The next link, once the client follows its controls; fails if the call ends instead."""
        waiting = asyncio.ensure_future(self.seen.get())
        await asyncio.wait({waiting, call}, return_when=asyncio.FIRST_COMPLETED)
        if not waiting.done():
            waiting.cancel()
            raise AssertionError(f"the call ended instead of asking again: {call.result()!r}")
        request, controls = waiting.result()
        await within(lambda: controls.open or call.done(), "the client following the link's controls")
        return request, controls


class _TapStream(httpx2.AsyncByteStream):
    def __init__(self, inner: Any, wire: bytearray) -> None:
        self.inner, self.wire = inner, wire

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.inner:
            self.wire.extend(chunk)
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


class Tap(httpx2.AsyncBaseTransport):
    """What the MCP client received, as bytes (``wire``)."""

    def __init__(self) -> None:
        self.inner = httpx2.AsyncHTTPTransport()
        self.wire = bytearray()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.inner.handle_async_request(request)
        return httpx2.Response(
            response.status_code,
            headers=response.headers,
            stream=_TapStream(response.stream, self.wire),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()
