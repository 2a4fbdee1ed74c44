"""Plumbing for the URL-elicitation tests: a recorded in-memory client, a scripted
"browser" (httpx over ASGI, its own cookie jar per person) and a server with tools
that run URL flows."""

from __future__ import annotations

__all__ = [
    "BASE",
    "ERAS",
    "Browser",
    "InstantGrant",
    "Person",
    "ProviderGrant",
    "Recorder",
    "code_in",
    "connected",
    "live",
    "make_server",
    "run",
    "text_of",
]

import asyncio
import contextlib
import functools
import re
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx2 as httpx

from backchannel import Client, Context, Server
from backchannel.client.url_flow import UrlElicitation, UrlElicitationHandler
from backchannel.server.url_elicitation import UrlElicitations, UrlFlow
from backchannel.testing import Tap, serve_on_loopback
from backchannel.testing import connected as kit_connected
from backchannel.testing import run as kit_run
from backchannel.transports.base import Transport

ERAS = ("handshake", "stateless")
BASE = "http://flows.test"
CODE = re.compile(r"Confirmation code: (\d{4}-\d{4})")


run = functools.partial(kit_run, timeout=15.0)


def code_in(message: str) -> str:
    found = CODE.search(message)
    assert found, f"no confirmation code in {message!r}"
    return found.group(1)


class Recorder(Tap):
    """The client's end, recorded both ways (``received``, and ``sent`` as written)."""

    @property
    def sent(self) -> list[dict[str, Any]]:
        return self.written

    def errors(self) -> list[dict[str, Any]]:
        return [m["error"] for m in self.received if "error" in m]

    def all_text(self) -> str:
        """Everything both ways as one text, to show a word never crossed the wire."""
        return repr(self.received) + repr(self.sent)

    def results(self) -> list[dict[str, Any]]:
        """Results of our ``tools/call`` requests, in order."""
        calls = {m["id"] for m in self.requests_written("tools/call")}
        return [m["result"] for m in self.received if "result" in m and m.get("id") in calls]


@contextlib.asynccontextmanager
async def connected(
    server: Server,
    era: str = "handshake",
    *,
    url_handler: UrlElicitationHandler | None = None,
    principal: str | None = None,
    **options: Any,
) -> AsyncIterator[tuple[Client, Recorder]]:
    """A ``Client`` in ``era`` over the kit's memory link, the client's end recorded;
    ``principal`` is who the server sees calling (as an HTTP authenticator would name them)."""

    def as_over_http(server_end: Transport) -> Transport:
        server_end.principal = principal  # read by ctx.principal
        server_end.authenticates_callers = True  # as over HTTP: no principal is an anonymous caller
        return server_end

    recorder = Recorder()
    async with kit_connected(
        server,
        era,  # type: ignore[arg-type]
        wrap_server=as_over_http,
        wrap_client=recorder.around,
        url_elicitation=url_handler,
        **options,
    ) as client:
        yield client, recorder


class Person:
    """A handler that consents (or not) and hands each request to the test."""

    def __init__(self, action: str = "accept") -> None:
        self.action = action
        self.seen: asyncio.Queue[UrlElicitation] = asyncio.Queue()
        self.all: list[UrlElicitation] = []

    async def __call__(self, request: UrlElicitation) -> str:
        self.all.append(request)
        self.seen.put_nowait(request)
        return self.action


class Browser:
    """One person's browser: its own cookies, talking to the flow pages over ASGI."""

    def __init__(self, flows: UrlElicitations, cookies: Mapping[str, str] | None = None) -> None:
        self.http = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=flows), base_url=BASE, cookies=dict(cookies or {})
        )

    async def __aenter__(self) -> Browser:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.http.aclose()

    async def open(self, url: str) -> httpx.Response:
        return await self.http.get(url)

    async def confirm(self, url: str, code: str, **headers: str) -> httpx.Response:
        return await self.http.post(url, data={"code": code}, headers=headers)

    async def follow(self, response: httpx.Response) -> httpx.Response:
        """Follow a redirect back into the flow pages (an instant third party)."""
        assert response.status_code == 303, response.text
        return await self.http.get(response.headers["location"])

    async def complete(self, request: UrlElicitation) -> httpx.Response:
        """The right person: open the page, type the code the client shows, go on."""
        landing = await self.open(request.url)
        assert landing.status_code == 200, landing.text
        response = await self.confirm(request.url, code_in(request.message))
        while response.status_code == 303 and response.headers["location"].startswith(BASE):
            response = await self.follow(response)
        return response


class InstantGrant:
    """A ``UrlFlowHandler`` whose third party answers at once: ``begin`` points straight
    at the callback, ``finish`` records who connected."""

    def __init__(self, flows: UrlElicitations) -> None:
        self.flows = flows
        self.connected: set[str | None] = set()
        self.finished: list[dict[str, str]] = []

    async def begin(self, flow: UrlFlow) -> str:
        flow.data["secret"] = "never-sent"
        return f"{self.flows.callback_url}?state={flow.state}&code=granted"

    async def finish(self, flow: UrlFlow, params: Mapping[str, str]) -> None:
        assert flow.data["secret"] == "never-sent"
        self.finished.append(dict(params))
        self.connected.add(flow.owner)


class ProviderGrant(InstantGrant):
    """Like ``InstantGrant`` but the browser is sent to a third party first (``provider.test``)."""

    async def begin(self, flow: UrlFlow) -> str:
        flow.data["secret"] = "never-sent"
        return f"http://provider.test/authorize?state={flow.state}&redirect_uri={self.flows.callback_url}"


def make_server(**flow_options: Any) -> tuple[Server, UrlElicitations, InstantGrant]:
    """A server with URL-flow tools: ``confirm`` (the page alone), ``connect`` (page +
    grant, request path) and ``gated`` (page + grant, -32042 path)."""
    server = Server("url-test", "1.0")
    flows = UrlElicitations(BASE, **flow_options)
    server.url_elicitations = flows
    grant = InstantGrant(flows)

    @server.tool()
    async def confirm(ctx: Context) -> str:
        return (await ctx.elicit_url("Confirm the transfer in your browser.")).action

    @server.tool()
    async def connect(ctx: Context) -> str:
        if ctx.principal in grant.connected:
            return "already connected"
        outcome = await ctx.elicit_url("Connect your test account.", flow=grant)
        return f"{outcome.action}: {'connected' if ctx.principal in grant.connected else 'not connected'}"

    @server.tool()
    async def gated(ctx: Context) -> str:
        if ctx.principal in grant.connected:
            return "ready"
        outcome = await ctx.elicit_url("Connect your test account first.", flow=grant, via="error")
        return f"{outcome.action}: {'ready' if ctx.principal in grant.connected else 'not ready'}"

    return server, flows, grant


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def live(app: Any) -> contextlib.AbstractAsyncContextManager[str]:
    """``app`` under uvicorn on a free port of 127.0.0.1 (no lifespan); yields its base URL."""
    return serve_on_loopback(app, lifespan="off")
