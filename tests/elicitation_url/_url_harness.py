"""Plumbing for the URL-elicitation tests: a recorded in-memory client, a scripted
"browser" (httpx over ASGI, its own cookie jar per person) and a server with tools
that run URL flows."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import re
import socket
from collections.abc import AsyncIterator, Mapping
from typing import Any, TypeVar

import httpx
import uvicorn

from backchannel import Client, Context, Server
from backchannel.client.url_flow import UrlElicitation, UrlElicitationHandler
from backchannel.protocol.events import Outgoing
from backchannel.server.url_elicitation import UrlElicitations, UrlFlow
from backchannel.testing import run as kit_run
from backchannel.transports.base import Transport
from backchannel.transports.memory import MemoryTransport, memory_pair

T = TypeVar("T")
ERAS = ("legacy", "modern")
BASE = "http://flows.test"
CODE = re.compile(r"Confirmation code: (\d{4}-\d{4})")


run = functools.partial(kit_run, timeout=15.0)


def code_in(message: str) -> str:
    found = CODE.search(message)
    assert found, f"no confirmation code in {message!r}"
    return found.group(1)


class Recorder(Transport):
    """The client's side of a memory pair; keeps every message in both directions."""

    def __init__(self, inner: MemoryTransport) -> None:
        self.inner = inner
        self.received: list[dict[str, Any]] = []
        self.sent: list[dict[str, Any]] = []

    async def receive(self) -> list[Any] | None:
        batch = await self.inner.receive()
        if batch:
            self.received.extend(item for item in batch if isinstance(item, dict))
        return batch

    def write(self, items: list[Outgoing]) -> None:
        self.sent.extend(item for item in items if isinstance(item, dict))
        self.inner.write(items)

    async def drain(self) -> None:
        await self.inner.drain()

    async def close(self) -> None:
        await self.inner.close()

    def notifications(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.received if m.get("method") == method and "id" not in m]

    def requests(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.received if m.get("method") == method and "id" in m]

    def sent_requests(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.sent if m.get("method") == method and "id" in m]

    def errors(self) -> list[dict[str, Any]]:
        return [m["error"] for m in self.received if "error" in m]

    def results(self) -> list[dict[str, Any]]:
        """Results of our ``tools/call`` requests, in order."""
        calls = {m["id"] for m in self.sent_requests("tools/call")}
        return [m["result"] for m in self.received if "result" in m and m.get("id") in calls]


@contextlib.asynccontextmanager
async def connected(
    server: Server,
    era: str = "legacy",
    *,
    url_handler: UrlElicitationHandler | None = None,
    principal: str | None = None,
    **options: Any,
) -> AsyncIterator[tuple[Client, Recorder]]:
    """A ``Client`` in ``era`` over a recorded memory pair; ``principal`` is who the
    server sees calling (as an HTTP authenticator would name them)."""
    client_side, server_side = memory_pair()
    server_side.principal = principal  # read by ctx.principal
    server_side.authenticates_callers = True  # as over HTTP: no principal is an anonymous caller
    recorder = Recorder(client_side)
    serving = asyncio.create_task(server.serve(server_side))
    client = Client(recorder, era=era, name="tester", url_elicitation=url_handler, **options)  # type: ignore[arg-type]
    try:
        async with client:
            yield client, recorder
    finally:
        await server_side.close()
        await serving


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


@contextlib.asynccontextmanager
async def live(app: Any) -> AsyncIterator[str]:
    """Serve ``app`` with uvicorn on 127.0.0.1 (a free port) in this loop; yields its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="off", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign]
    task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
    async with asyncio.timeout(5):
        while not server.started:
            if task.done():
                task.result()
            await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError, TimeoutError):
            await asyncio.wait_for(task, 5)
        sock.close()
