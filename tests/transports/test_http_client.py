"""The Streamable HTTP client transport, against a scripted ASGI endpoint and the real app.

Transport-level behaviours (SSE framing, SEP-1699 resumption, error statuses,
sessions, SEP-2243 headers) are checked on the wire of a small hand-written ASGI
app reached through ``httpx.ASGITransport``. End-to-end tests run ``Client.http``
against ``server.http_app()`` in both eras; ``httpx.ASGITransport`` buffers each
response until the app returns, so the tests that need a live connection (closing
a response to cancel) run the app under uvicorn on a loopback port.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn

import httpx2 as httpx
import pytest

from backchannel import Client
from backchannel.client.tool_headers import keep_tools_with_valid_headers
from backchannel.protocol.events import CancelIntent, NotificationReceived, ProgressReceived
from backchannel.runtime.connection import Connection
from backchannel.server import Server
from backchannel.server.context import Context
from backchannel.testing import free_port
from backchannel.testing import run as kit_run
from backchannel.transports.base import TransportBroken
from backchannel.transports.http.client import HttpClientTransport
from backchannel.types.content import TextContent

BOUND = 15.0
URL = "http://127.0.0.1/mcp"
MODERN = "2026-07-28"
LEGACY = "2025-11-25"


run = functools.partial(kit_run, timeout=BOUND)


# ----------------------------------------------------------- a scripted endpoint


@dataclass
class Seen:
    """One HTTP request as the endpoint received it (header names lowercase)."""

    method: str
    headers: dict[str, str]
    body: Any  # the decoded JSON body; {} when there was none
    at: float


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)

    @classmethod
    def json(cls, message: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
        return cls(status, {"content-type": "application/json", **(headers or {})}, [json.dumps(message).encode()])

    @classmethod
    def sse(cls, *chunks: bytes, **headers: str) -> Reply:
        return cls(200, {"content-type": "text/event-stream", **headers}, list(chunks))


class Endpoint:
    """An ASGI app that records each request and answers with ``respond(seen)``."""

    def __init__(self, respond: Callable[[Seen], Awaitable[Reply]]) -> None:
        self.respond = respond
        self.seen: list[Seen] = []
        self.arrived = asyncio.Condition()
        self.finished: dict[int, float] = {}  # index in ``seen`` -> when its response was complete

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        seen = Seen(scope["method"], headers, json.loads(body) if body else {}, time.monotonic())
        self.seen.append(seen)
        index = len(self.seen) - 1
        async with self.arrived:
            self.arrived.notify_all()
        reply = await self.respond(seen)
        raw = [(k.encode(), v.encode()) for k, v in reply.headers.items()]
        await send({"type": "http.response.start", "status": reply.status, "headers": raw})
        for chunk in reply.chunks:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        self.finished[index] = time.monotonic()

    async def wait_for(self, predicate: Callable[[Seen], bool]) -> Seen:
        async with self.arrived:
            await self.arrived.wait_for(lambda: any(predicate(s) for s in self.seen))
        return next(s for s in self.seen if predicate(s))

    def posts(self, method: str | None = None) -> list[Seen]:
        return [s for s in self.seen if s.method == "POST" and (method is None or s.body.get("method") == method)]


@contextlib.asynccontextmanager
async def transport_for(app: Any, **options: Any) -> AsyncIterator[HttpClientTransport]:
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://127.0.0.1")
    transport = HttpClientTransport(URL, httpx_client=http, **options)
    await transport.start()
    try:
        yield transport
    finally:
        await transport.close()
        await http.aclose()


async def answer(transport: HttpClientTransport, request_id: Any) -> list[dict[str, Any]]:
    """Every message received up to and including the answer to ``request_id``."""
    got: list[dict[str, Any]] = []
    while True:
        batch = await transport.receive()
        assert batch is not None, f"the transport ended before answering {request_id!r}"
        got.extend(batch)
        if any(m.get("id") == request_id and "method" not in m for m in batch):
            return got


def request(request_id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def modern(request_id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    return request(request_id, method, {**(params or {}), "_meta": meta})


def result(request_id: Any, value: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def event(message: Any, event_id: str | None = None) -> bytes:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}data: {json.dumps(message, ensure_ascii=False)}\n\n".encode()


def only_answer(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return messages[-1]


# ----------------------------------------------------------------- SSE framing


async def hang(started: asyncio.Event, cancelled: asyncio.Event) -> NoReturn:
    """Work that never ends: sets ``started``, then waits until its task is cancelled and sets
    ``cancelled`` on the way out, so the test knows the cancellation reached this far."""
    started.set()
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        cancelled.set()
        raise
    raise AssertionError("unreachable")


def test_sse_events_split_across_chunks_arrive_whole_and_in_order() -> None:
    """A request's SSE stream: progress then the answer, cut mid-line and mid-UTF-8 sequence."""
    progress = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}}
    stream = b": comment\n" + event(progress) + event(result(1, {"text": "h\u00e9llo \u4e16\u754c"}))
    cut = stream.index("\u4e16".encode()) + 1  # inside a three-byte character
    chunks = [stream[:5], stream[5:20], stream[20:cut], stream[cut:]]

    async def respond(seen: Seen) -> Reply:
        return Reply.sse(*chunks)

    async def main() -> None:
        async with transport_for(Endpoint(respond), open_get_stream=False) as transport:
            transport.write([request(1, "tools/call", {"name": "x"})])
            got = await answer(transport, 1)
        assert got == [progress, result(1, {"text": "h\u00e9llo \u4e16\u754c"})]

    run(main)


# ------------------------------------------------- SEP-1699 resumption (handshake era)


def test_broken_stream_resumes_with_last_event_id_after_retry() -> None:
    """The conformance ``sse-retry`` shape: priming event with ``retry``, close, GET + Last-Event-ID."""
    retry_ms = 300
    progress = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}}

    async def respond(seen: Seen) -> Reply:
        if seen.method == "POST":
            return Reply.sse(f"id: s_0\nretry: {retry_ms}\ndata:\n\n".encode(), event(progress, "s_1"))
        if seen.method == "GET":
            return Reply.sse(event(result(5, {"ok": True}), "s_2"))
        return Reply(405)

    async def main() -> None:
        endpoint = Endpoint(respond)
        async with transport_for(endpoint, open_get_stream=False) as transport:
            transport.session_id, transport.protocol_version = "sid-1", LEGACY
            transport.write([request(5, "tools/call", {"name": "slow"})])
            got = await answer(transport, 5)
        assert got == [progress, result(5, {"ok": True})]
        _post, get, _delete = endpoint.seen
        assert get.method == "GET"
        assert get.headers["last-event-id"] == "s_1"
        assert get.headers["accept"] == "text/event-stream"
        assert get.headers["mcp-session-id"] == "sid-1"
        assert get.headers["mcp-protocol-version"] == LEGACY
        assert get.at - endpoint.finished[0] >= retry_ms / 1000 - 0.005

    run(main)


def test_resumption_gives_up_after_max_reconnects_without_progress() -> None:
    async def respond(seen: Seen) -> Reply:
        if seen.method == "POST":
            return Reply.sse(b"id: p\nretry: 10\ndata:\n\n")
        return Reply.sse(b": nothing new\n\n")

    async def main() -> None:
        endpoint = Endpoint(respond)
        async with transport_for(endpoint, open_get_stream=False, max_reconnects=3) as transport:
            transport.write([request(1, "tools/call", {"name": "x"})])
            [error] = await answer(transport, 1)
        assert error["error"]["code"] == -32603
        assert "gave up after 3 reconnections" in error["error"]["message"]
        assert [s.method for s in endpoint.seen] == ["POST", "GET", "GET", "GET"]

    run(main)


def test_stateless_stream_that_ends_early_fails_without_resuming() -> None:
    """2026-07-28 has no resumption: a stream that ends before its answer fails the request."""

    async def respond(seen: Seen) -> Reply:
        return Reply.sse(b"id: p\nretry: 10\ndata:\n\n")

    async def main() -> None:
        endpoint = Endpoint(respond)
        async with transport_for(endpoint) as transport:
            transport.write([modern(1, "tools/call", {"name": "x"})])
            [error] = await answer(transport, 1)
        assert "closed the stream before answering" in error["error"]["message"]
        assert [s.method for s in endpoint.seen] == ["POST"]

    run(main)


# --------------------------------------------------------------- error statuses


@pytest.mark.parametrize(
    ("status", "body", "content_type", "code", "message"),
    [
        (400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "no session"}}, "json", -32000, None),
        (404, {"jsonrpc": "2.0", "id": None, "error": {"code": -32601, "message": "nope"}}, "json", -32601, None),
        (502, "<html><body>Bad gateway</body></html>", "text/html", -32603, "HTTP 502 from server: <html>"),
        (400, "", "text/plain", -32603, "HTTP 400 from server: (empty body)"),
        (200, "not json", "application/json", -32603, "HTTP 200 from server with a body that is not JSON"),
        # Nested past MAX_NESTING_DEPTH: a clear error for the request, never a RecursionError.
        (
            200,
            "[" * 1000 + "]" * 1000,
            "application/json",
            -32603,
            "HTTP 200 from server with a body that is not JSON (Parse error: JSON nested deeper",
        ),
    ],
)
def test_error_statuses_become_the_answer_to_the_request(
    status: int, body: Any, content_type: str, code: int, message: str | None
) -> None:
    """A JSON-RPC error body is the answer (a null id becomes the request's); anything else
    is a synthesized -32603, so the caller fails instead of waiting (and the dual-era
    probe falls back to ``initialize`` on an empty or unrecognised body)."""

    async def respond(seen: Seen) -> Reply:
        if content_type == "json":
            return Reply.json(body, status)
        return Reply(status, {"content-type": content_type}, [body.encode()] if body else [])

    async def main() -> None:
        async with transport_for(Endpoint(respond)) as transport:
            transport.write([modern("probe", "server/discover")])
            [error] = await answer(transport, "probe")
        assert error["id"] == "probe"
        assert error["error"]["code"] == code
        if message is not None:
            assert error["error"]["message"].startswith(message)

    run(main)


def test_404_on_a_session_request_says_the_session_expired() -> None:
    async def respond(seen: Seen) -> Reply:
        return Reply.json({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "gone"}}, 404)

    async def main() -> None:
        async with transport_for(Endpoint(respond)) as transport:
            transport.session_id, transport.protocol_version = "old", LEGACY
            transport.write([request(3, "tools/list")])
            [error] = await answer(transport, 3)
        assert error["id"] == 3
        assert "ended the session" in error["error"]["message"]
        assert error["error"]["message"].endswith("gone")

    run(main)


def test_connection_refused_ends_the_transport_with_the_url() -> None:
    """Nothing listens: no request can succeed, so the transport ends (the connection then
    fails every pending call with ``ConnectionClosed``) and refuses further writes."""
    url = f"http://127.0.0.1:{free_port()}/mcp"  # the port is free: nothing listens there

    async def main() -> None:
        transport = HttpClientTransport(url)
        await transport.start()
        try:
            transport.write([request(1, "initialize", {})])
            for _ in range(2):  # every later receive sees the end too
                with pytest.raises(TransportBroken) as ended:
                    await transport.receive()
                assert f"the server at {url} cannot be reached: ConnectError" in ended.value.message
                assert "Connection refused" in ended.value.message
            with pytest.raises(TransportBroken):
                transport.write([request(2, "ping")])
        finally:
            await transport.close()

    run(main)


def test_a_refused_notification_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    async def respond(seen: Seen) -> Reply:
        return Reply(500, {"content-type": "text/plain"}, [b"boom"])

    async def main() -> None:
        endpoint = Endpoint(respond)
        async with transport_for(endpoint) as transport:
            transport.write([{"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}])
            transport.write([request(1, "ping")])  # sent after the notification: once answered, it is logged
            await answer(transport, 1)

    with caplog.at_level(logging.WARNING, logger="backchannel.http"):
        run(main)
    assert any("notifications/roots/list_changed" in r.message and "HTTP 500" in r.message for r in caplog.records)


# ------------------------------------------------------------ sessions, ordering


def test_session_id_is_captured_sent_and_deleted_on_close() -> None:
    got_get = asyncio.Event()

    async def respond(seen: Seen) -> Reply:
        if seen.method == "GET":
            got_get.set()
            return Reply(405, {"allow": "POST, DELETE"})
        if seen.method == "DELETE":
            return Reply(200)
        method = seen.body.get("method")
        if method == "initialize":
            return Reply.json(result(1, {"protocolVersion": "2025-06-18"}), headers={"mcp-session-id": "abc"})
        if "id" not in seen.body:
            return Reply(202)
        return Reply.json(result(seen.body["id"], {"tools": []}))

    async def main() -> None:
        endpoint = Endpoint(respond)
        async with transport_for(endpoint) as transport:
            transport.write([request(1, "initialize", {"protocolVersion": "2025-06-18"})])
            await answer(transport, 1)
            transport.use_protocol_version("2025-06-18")  # as Client does with the initialize result
            transport.write([{"jsonrpc": "2.0", "method": "notifications/initialized"}, request(2, "tools/list")])
            await answer(transport, 2)
            await got_get.wait()  # 405: the transport gives up the GET stream silently
        initialize, initialized, tools = endpoint.posts()
        [get] = [s for s in endpoint.seen if s.method == "GET"]
        delete = endpoint.seen[-1]
        assert "mcp-session-id" not in initialize.headers
        assert "mcp-protocol-version" not in initialize.headers
        assert initialize.headers["accept"] == "application/json, text/event-stream"
        assert initialize.headers["content-type"] == "application/json"
        for later in (initialized, tools, get):
            assert later.headers["mcp-session-id"] == "abc"
            assert later.headers["mcp-protocol-version"] == "2025-06-18"
        assert "mcp-method" not in tools.headers  # SEP-2243 headers are for stateless-era requests
        assert get.headers["accept"] == "text/event-stream"
        assert delete.method == "DELETE" and delete.headers["mcp-session-id"] == "abc"

    run(main)


def test_posts_leave_in_order_and_requests_do_not_wait_for_earlier_answers() -> None:
    second_arrived = asyncio.Event()

    async def respond(seen: Seen) -> Reply:
        if seen.body.get("id") == 1:
            await second_arrived.wait()  # answered only once request 2 has been sent
        if seen.body.get("id") == 2:
            second_arrived.set()
        if "id" not in seen.body:
            return Reply(202)
        return Reply.json(result(seen.body["id"], {}))

    async def main() -> None:
        endpoint = Endpoint(respond)
        notes = [{"jsonrpc": "2.0", "method": f"notifications/n{i}"} for i in range(5)]
        async with transport_for(endpoint) as transport:
            transport.write([request(1, "ping"), *notes, request(2, "ping")])
            got = await answer(transport, 1)
            if not any(m.get("id") == 2 for m in got):
                await answer(transport, 2)
        order = [s.body["method"] for s in endpoint.seen]
        assert order == ["ping", *(n["method"] for n in notes), "ping"]

    run(main)


# ------------------------------------------------------------------ cancellation


def test_stateless_cancel_closes_the_response_and_posts_nothing() -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def respond(seen: Seen) -> Reply:
        return await hang(started, cancelled)

    async def main() -> None:
        endpoint = Endpoint(respond)
        async with transport_for(endpoint) as transport:
            transport.write([modern(9, "tools/call", {"name": "slow"})])
            await started.wait()
            transport.write([CancelIntent(request_id=9, reason="enough")])
            await cancelled.wait()
        assert [s.method for s in endpoint.seen] == ["POST"]

    run(main)


def test_handshake_cancel_posts_notifications_cancelled_then_drops_the_stream() -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def respond(seen: Seen) -> Reply:
        if seen.method == "DELETE":
            return Reply(200)
        if seen.body.get("method") == "notifications/cancelled":
            return Reply(202)
        return await hang(started, cancelled)

    async def main() -> None:
        endpoint = Endpoint(respond)
        async with transport_for(endpoint, open_get_stream=False) as transport:
            transport.session_id, transport.protocol_version = "s", LEGACY
            transport.write([request(9, "tools/call", {"name": "slow"})])
            await started.wait()
            transport.write([CancelIntent(request_id=9, reason="enough")])
            await cancelled.wait()
        [_, cancel, _delete] = endpoint.seen
        assert cancel.body == {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": 9, "reason": "enough"},
        }
        assert cancel.headers["mcp-session-id"] == "s"

    run(main)


# ----------------------------------------------------------- SEP-2243 headers


TOOLS = [
    {
        "name": "route",
        "inputSchema": {
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "greeting": {"type": "string", "x-mcp-header": "Greeting"},
                "target": {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}},
                "flag": {"type": "boolean", "x-mcp-header": "Flag"},
                "absent": {"type": "string", "x-mcp-header": "Absent"},
            },
        },
    },
    {
        "name": "twice",  # names equal ignoring case: invalid
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "string", "x-mcp-header": "X"}, "b": {"type": "string", "x-mcp-header": "x"}},
        },
    },
    {
        "name": "in_items",  # not reachable through properties alone: invalid
        "inputSchema": {
            "type": "object",
            "properties": {"l": {"type": "array", "items": {"type": "string", "x-mcp-header": "L"}}},
        },
    },
    {
        "name": "a_number",
        "inputSchema": {"type": "object", "properties": {"f": {"type": "number", "x-mcp-header": "F"}}},
    },
    {"name": "plain", "inputSchema": {"type": "object"}},
]


def test_stateless_requests_mirror_headers_and_invalid_tools_are_dropped(caplog: pytest.LogCaptureFixture) -> None:
    async def respond(seen: Seen) -> Reply:
        if seen.method == "DELETE":
            return Reply(405)
        if seen.body["method"] == "tools/list":
            return Reply.json(result(seen.body["id"], {"tools": TOOLS}))
        return Reply.json(result(seen.body["id"], {"content": []}))

    async def main() -> None:
        endpoint = Endpoint(respond)
        async with transport_for(endpoint) as transport:
            transport.session_id = "legacy-session"  # never sent on a stateless-era request
            transport.write([modern(1, "tools/list")])
            [listed] = await answer(transport, 1)
            keep_tools_with_valid_headers(listed["result"], transport)  # as Client does with the result
            arguments = {"region": "us-west1", "greeting": "Hello, \u4e16\u754c", "target": {"n": 42}, "flag": False}
            transport.write([modern(2, "tools/call", {"name": "route", "arguments": arguments})])
            await answer(transport, 2)
            transport.write([modern(3, "resources/read", {"uri": "file:///a b/\u00e9.txt"})])
            await answer(transport, 3)
        assert [tool["name"] for tool in listed["result"]["tools"]] == ["route", "plain"]
        call, read = endpoint.seen[1].headers, endpoint.seen[2].headers
        assert call["mcp-protocol-version"] == MODERN
        assert call["mcp-method"] == "tools/call"
        assert call["mcp-name"] == "route"
        assert call["mcp-param-region"] == "us-west1"
        assert call["mcp-param-greeting"] == "=?base64?SGVsbG8sIOS4lueVjA==?="
        assert call["mcp-param-n"] == "42"
        assert call["mcp-param-flag"] == "false"
        assert "mcp-param-absent" not in call
        assert "mcp-session-id" not in call
        assert read["mcp-method"] == "resources/read"
        assert read["mcp-name"] == "=?base64?ZmlsZTovLy9hIGIvw6kudHh0?="

    with caplog.at_level(logging.WARNING, logger="backchannel.http"):
        run(main)
    dropped = " ".join(r.message for r in caplog.records)
    assert "'twice'" in dropped and "'in_items'" in dropped and "'a_number'" in dropped


def test_client_module_imports_no_http_stack() -> None:
    code = "import sys, backchannel.client.client; sys.exit('httpx' in sys.modules or 'httpx2' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


# ------------------------------------------------------------ the dual-era probe


def legacy_only_endpoint(probe_reply: Reply) -> Endpoint:
    """A 2025-11-25 server: sessionless requests other than initialize get ``probe_reply``."""

    async def respond(seen: Seen) -> Reply:
        if seen.method == "GET":
            return Reply(405)
        if seen.method == "DELETE":
            return Reply(200)
        method = seen.body.get("method")
        if method == "initialize":
            info = {"protocolVersion": LEGACY, "capabilities": {"tools": {}}, "serverInfo": {"name": "old"}}
            return Reply.json(result(seen.body["id"], info), headers={"mcp-session-id": "old-1"})
        if "mcp-session-id" not in seen.headers:
            return probe_reply
        if "id" not in seen.body:
            return Reply(202)
        return Reply.json(result(seen.body["id"], {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}))

    return Endpoint(respond)


@pytest.mark.parametrize(
    "probe_reply",
    [
        Reply(400),
        Reply(404, {"content-type": "text/html"}, [b"<h1>Not Found</h1>"]),
        Reply(405, {"allow": "GET"}),
        Reply.json({"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "Bad Request"}}, 400),
    ],
    ids=["400-empty", "404-html", "405", "400-legacy-jsonrpc"],
)
def test_auto_falls_back_to_initialize_when_the_probe_is_not_understood(probe_reply: Reply) -> None:
    async def main() -> None:
        endpoint = legacy_only_endpoint(probe_reply)
        http = httpx.AsyncClient(transport=httpx.ASGITransport(endpoint), base_url="http://127.0.0.1")
        async with http, Client.http(URL, httpx_client=http, era="auto") as client:
            assert client.era == "handshake"
            assert [tool.name for tool in await client.list_tools()] == ["t"]
        methods = [s.body.get("method", s.method) for s in endpoint.seen]
        assert methods[:3] == ["server/discover", "initialize", "notifications/initialized"]
        assert endpoint.seen[0].headers["mcp-method"] == "server/discover"
        # The client hands the transport the version initialize chose, in time for the very next POST.
        for later in endpoint.posts()[2:]:
            assert later.headers["mcp-protocol-version"] == LEGACY

    run(main)


# ---------------------------------------------------------------- end to end


def e2e_server() -> Server:
    server = Server("http-e2e", "1.0.0")

    @server.tool()
    async def slow(ctx: Context) -> str:
        """Progress, a pause long enough to switch to SSE, more progress, then the answer."""
        await ctx.report_progress(1, 3, "one")
        await asyncio.sleep(0.05)
        await ctx.report_progress(2, 3, "two")
        return "done"

    async def routed(region: str, note: str) -> str:
        return f"{region}:{note}"

    schema = {
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}, "note": {"type": "string"}},
        "required": ["region", "note"],
    }
    server.add_tool(routed, name="routed", input_schema=schema)
    return server


def text_of(result: Any) -> str:
    [content] = result.content
    assert isinstance(content, TextContent)
    return content.text


@pytest.mark.parametrize("era", ["handshake", "stateless", "auto"])
def test_end_to_end_list_and_call_with_progress(era: str) -> None:
    async def main() -> None:
        app = e2e_server().http_app(sse_after=0.01)
        http = httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://127.0.0.1")
        progress: list[ProgressReceived] = []
        async with http, Client.http(URL, httpx_client=http, era=era) as client:
            assert client.era == ("handshake" if era == "handshake" else "stateless")
            assert {tool.name for tool in await client.list_tools()} == {"slow", "routed"}
            called = await client.call_tool("slow", {}, on_progress=progress.append)
            assert text_of(called) == "done"
            # The app refuses a stateless call whose Mcp-Param-Region is missing or wrong (400, -32020).
            routed = await client.call_tool("routed", {"region": "eu \u00e9", "note": "x"})
            assert "eu \u00e9:x" in text_of(routed)
            if era == "handshake":
                assert len(app.sessions.sessions) == 1
        assert [(p.progress, p.message) for p in progress] == [(1, "one"), (2, "two")]
        assert app.sessions.sessions == {}  # closing the client DELETEd the session
        await app.aclose()

    run(main)


def test_end_to_end_server_closes_the_stream_and_the_client_polls_it_back() -> None:
    """SEP-1699 against the real app: the handler ends its SSE response mid-call; the client
    waits ``retry`` ms and resumes with GET + Last-Event-ID, losing nothing."""
    server = Server("polling-e2e")

    @server.tool()
    async def polled(ctx: Context) -> str:
        await ctx.report_progress(1, 2, "before")
        assert ctx.close_sse_stream()
        await asyncio.sleep(0.1)
        await ctx.report_progress(2, 2, "after")
        return "polled"

    async def main() -> None:
        app = server.http_app(sse_after=0.01, retry_ms=50)
        resumed: list[str] = []

        async def recording(scope: Any, receive: Any, send: Any) -> None:
            headers = dict(scope["headers"])
            if scope["method"] == "GET" and b"last-event-id" in headers:
                resumed.append(headers[b"last-event-id"].decode())
            await app(scope, receive, send)

        http = httpx.AsyncClient(transport=httpx.ASGITransport(recording), base_url="http://127.0.0.1")
        progress: list[ProgressReceived] = []
        async with http, Client.http(URL, httpx_client=http, era="handshake") as client:
            assert text_of(await client.call_tool("polled", {}, on_progress=progress.append)) == "polled"
        assert [p.message for p in progress] == ["before", "after"]
        assert len(resumed) == 1
        await app.aclose()

    run(main)


def free_socket() -> socket.socket:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)  # connections queue here until uvicorn accepts them
    return sock


@contextlib.asynccontextmanager
async def served(app: Any) -> AsyncIterator[str]:
    """``app`` under uvicorn on a loopback port, in this event loop; yields the endpoint URL."""
    import uvicorn

    sock = free_socket()
    config = uvicorn.Config(app, log_level="warning", lifespan="off", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 5)
        sock.close()


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_cancelling_a_call_cancels_the_handler(era: str) -> None:
    """Stateless era: the transport closes the response; handshake era: notifications/cancelled."""
    server = Server("cancel-e2e")
    started, cancelled = asyncio.Event(), asyncio.Event()

    @server.tool()
    async def forever() -> str:
        return await hang(started, cancelled)

    async def main() -> None:
        app = server.http_app()
        async with served(app) as url:
            async with Client.http(url, era=era) as client:
                call = asyncio.ensure_future(client.call_tool("forever", {}))
                await started.wait()
                call.cancel()
                await cancelled.wait()
                with contextlib.suppress(asyncio.CancelledError):
                    await call
                assert {tool.name for tool in await client.list_tools()} == {"forever"}  # still usable
            await app.aclose()

    run(main)


def test_get_stream_carries_messages_that_belong_to_no_request() -> None:
    """Handshake era: after ``notifications/initialized`` the client listens on GET; a
    ``tools/list_changed`` sent outside any request arrives there."""
    server = Server("get-e2e")

    @server.tool()
    def first() -> str:
        return "1"

    class Watching(Client):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.notified: asyncio.Queue[str] = asyncio.Queue()

        async def handle_notification(self, notification: NotificationReceived, connection: Connection) -> None:
            self.notified.put_nowait(notification.method)

    async def main() -> None:
        app = server.http_app()
        listening = asyncio.Event()

        async def watching_get(scope: Any, receive: Any, send: Any) -> None:
            async def sending(message: Any) -> None:
                await send(message)
                if scope["method"] == "GET" and message["type"] == "http.response.start":
                    listening.set()  # the app registers the stream before it starts the response

            await app(scope, receive, sending)

        async with served(watching_get) as url:
            async with Watching.http(url, era="handshake") as client:
                assert isinstance(client, Watching)
                await listening.wait()
                server.add_tool(lambda: "2", name="second")
                assert await client.notified.get() == "notifications/tools/list_changed"
            await app.aclose()

    run(main)
