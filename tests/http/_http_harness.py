"""Raw-HTTP plumbing for the Streamable HTTP endpoint tests.

Request/response behaviour goes through ``httpx.ASGITransport`` (which buffers a
response until the app finishes it). Anything that needs a live stream runs the
app under uvicorn on 127.0.0.1 in the test's own event loop, on a socket bound to
a free port, and reads it with ``client.stream`` (``live``); ``on_our_server`` runs
an app on ``run_http``'s own server instead (``http_host/h1/serving.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar

import httpx2 as httpx

from backchannel import Context, Server
from backchannel.framing import http as H
from backchannel.framing.sse import SSEDecoder, SSEEvent
from backchannel.http_host.app import HttpApp
from backchannel.testing import run as kit_run
from backchannel.testing import serve_on_loopback, within
from backchannel.types import meta as M

T = TypeVar("T")
LEGACY = "2025-11-25"
MODERN = "2026-07-28"
BASE = "http://127.0.0.1"
ACCEPT_BOTH = "application/json, text/event-stream"
REGION_SCHEMA = {
    "type": "object",
    "properties": {"region": {"type": "string", "x-mcp-header": "Region"}, "query": {"type": "string"}},
    "required": ["region", "query"],
}


run = kit_run


# --------------------------------------------------------------------------- the server


class Probe:
    """What handlers report back to the test: events set when something happened."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.finished = asyncio.Event()
        self.release = asyncio.Event()
        self.cancelled = False


def make_server(probe: Probe | None = None, *, marker: Path | None = None) -> Server:
    """A server with the tools every HTTP test needs."""
    probe = probe or Probe()
    server = Server("http-test", "1.0")

    @server.tool()
    def echo(text: str) -> str:
        return text

    @server.tool()
    async def slow(steps: int, ctx: Context, delay: float = 0.05) -> str:
        for step in range(1, steps + 1):
            await asyncio.sleep(delay)
            await ctx.report_progress(step, steps, f"step {step}")
        return f"slow done {steps}"

    @server.tool()
    async def chatty(ctx: Context) -> str:
        await ctx.log("info", "starting")
        await ctx.report_progress(1, 2)
        await ctx.log("warning", "halfway")
        await ctx.report_progress(2, 2)
        return "chatty done"

    @server.tool()
    async def gated(ctx: Context) -> str:
        """Reports progress once, then waits for the test to release it."""
        await ctx.report_progress(1, 3)
        probe.started.set()
        await probe.release.wait()
        await ctx.report_progress(2, 3)
        await ctx.report_progress(3, 3)
        return "gated done"

    @server.tool()
    async def hang(ctx: Context) -> str:
        await ctx.report_progress(1)
        probe.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            probe.cancelled = True
            raise
        finally:
            if marker is not None:
                marker.write_text("finally ran")  # noqa: ASYNC240 - a few bytes, in a test
            probe.finished.set()
        return "unreachable"

    @server.tool()
    async def poll_me(ctx: Context) -> str:
        """Ends its SSE response at once (SEP-1699); the answer must be fetched with GET."""
        ctx.close_sse_stream()
        await ctx.report_progress(1, 2)
        await asyncio.sleep(0.05)
        await ctx.report_progress(2, 2)
        return "polled"

    @server.tool()
    async def ask_roots(ctx: Context) -> str:
        roots = await ctx.connection.request("roots/list", {}, related=ctx.request_id, timeout=5)
        return ",".join(root["uri"] for root in roots["roots"])

    server.add_tool(lambda region, query: f"{region}:{query}", name="regional", input_schema=REGION_SCHEMA)
    return server


# --------------------------------------------------------------------------- messages


def request(method: str, params: dict[str, Any] | None = None, request_id: int | str = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def call(name: str, arguments: dict[str, Any] | None = None, request_id: int | str = 1, **meta: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
    if meta:
        params["_meta"] = meta
    return request("tools/call", params, request_id)


def initialize_body(version: str = LEGACY, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    return request(
        "initialize",
        {"protocolVersion": version, "capabilities": capabilities or {}, "clientInfo": {"name": "raw", "version": "0"}},
        0,
    )


def legacy_headers(session_id: str | None = None, version: str | None = LEGACY, **extra: str) -> dict[str, str]:
    headers = {"accept": ACCEPT_BOTH, "content-type": "application/json"}
    if version is not None:
        headers["mcp-protocol-version"] = version
    if session_id is not None:
        headers["mcp-session-id"] = session_id
    headers.update(extra)
    return headers


def modern(message: dict[str, Any], *, capabilities: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    """``message`` with the stateless-era ``_meta`` envelope."""
    params = dict(message.get("params") or {})
    params["_meta"] = {
        M.PROTOCOL_VERSION: MODERN,
        M.CLIENT_CAPABILITIES: capabilities if capabilities is not None else {},
        M.CLIENT_INFO: {"name": "raw", "version": "0"},
        **params.get("_meta", {}),
        **meta,
    }
    return {**message, "params": params}


def modern_headers(message: dict[str, Any], **extra: str) -> dict[str, str]:
    """The SEP-2243 headers a conforming client sends with ``message``."""
    tool = message.get("params", {}).get("name") if message.get("method") == "tools/call" else None
    params = H.x_mcp_headers(REGION_SCHEMA) if tool == "regional" else None
    headers = {"accept": ACCEPT_BOTH, "content-type": "application/json"}
    headers.update({k.lower(): v for k, v in H.request_headers(message, param_headers=params).items()})
    headers.update(extra)
    return headers


# --------------------------------------------------------------------------- clients


@contextlib.asynccontextmanager
async def asgi_client(app: HttpApp) -> AsyncIterator[httpx.AsyncClient]:
    """A client talking to ``app`` in process; the app's sessions end afterwards."""
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE, timeout=5) as client:
            yield client
    finally:
        await app.aclose()


async def open_session(
    client: httpx.AsyncClient, path: str = "/mcp", headers: dict[str, str] | None = None, **init: Any
) -> str:
    """``initialize`` + ``notifications/initialized``; the minted session id."""
    response = await client.post(path, json=initialize_body(**init), headers={**legacy_headers(), **(headers or {})})
    assert response.status_code == 200, response.text
    session_id = response.headers["mcp-session-id"]
    done = await client.post(
        path,
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        headers={**legacy_headers(session_id), **(headers or {})},
    )
    assert done.status_code == 202, done.text
    return session_id


def events_of(body: bytes) -> list[SSEEvent]:
    decoder = SSEDecoder()
    return decoder.feed(body)


def messages_of(body: bytes) -> list[dict[str, Any]]:
    """The JSON-RPC messages of a complete SSE body (priming events skipped)."""
    return [json.loads(event.data) for event in events_of(body) if event.data]


def assert_jsonrpc_error(response: httpx.Response, status: int, code: int) -> dict[str, Any]:
    """``response`` is ``status`` with a JSON-RPC error body of ``code``; the error object."""
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["jsonrpc"] == "2.0"
    assert "id" in body and "result" not in body
    assert body["error"]["code"] == code, body
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return body["error"]  # type: ignore[no-any-return]


class SSEReader:
    """Reads one live SSE response event by event."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.decoder = SSEDecoder()
        self._chunks = response.aiter_bytes()
        self._ready: list[SSEEvent] = []

    async def next_event(self) -> SSEEvent | None:
        """The next dispatched event (priming events included); None at the end of the stream."""
        while not self._ready:
            try:
                chunk = await anext(self._chunks)
            except StopAsyncIteration:
                return None
            self._ready.extend(self.decoder.feed(chunk))
        return self._ready.pop(0)

    async def next_message(self) -> dict[str, Any] | None:
        while True:
            event = await self.next_event()
            if event is None:
                return None
            if event.data:
                return json.loads(event.data)  # type: ignore[no-any-return]

    async def rest(self) -> list[dict[str, Any]]:
        out = []
        while (message := await self.next_message()) is not None:
            out.append(message)
        return out


# --------------------------------------------------------------------------- a live server


class Live:
    """The app served by uvicorn on 127.0.0.1 in this event loop."""

    def __init__(self, app: Any, port: int) -> None:
        self.app = app
        self.port = port
        self.url = f"http://127.0.0.1:{port}"

    def client(self, **options: Any) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.url, timeout=httpx.Timeout(5.0), **options)


@contextlib.asynccontextmanager
async def live(app: Any) -> AsyncIterator[Live]:
    """``app`` under uvicorn on a free port of 127.0.0.1, in this loop (the kit's ``serve_on_loopback``)."""
    async with serve_on_loopback(app) as url:
        yield Live(app, int(url.rsplit(":", 1)[1]))


async def wait_until(condition: Callable[[], bool], timeout: float = 3.0) -> None:
    """The kit's ``within``, with this suite's bound."""
    await within(condition, timeout=timeout)


@contextlib.asynccontextmanager
async def on_our_server(app: Any, **settings: Any) -> AsyncIterator[tuple[int, Any]]:
    """``app`` on ``run_http``'s ``HttpServer`` (with these settings; a stop's grace of 1 s) on a
    free loopback port, in this loop: yields (port, server), and stops it after, which must end
    with status 0."""
    import socket

    from backchannel.http_host.h1.serving import HttpServer

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = HttpServer(app, **{"grace": 1.0, **settings})
    task = asyncio.get_running_loop().create_task(server.serve(sock=sock, signals=False))
    await wait_until(lambda: server.started or task.done(), timeout=5)
    if task.done():
        task.result()
    try:
        yield port, server
    finally:
        server.stop()
        assert await asyncio.wait_for(task, 10) == 0
        sock.close()
