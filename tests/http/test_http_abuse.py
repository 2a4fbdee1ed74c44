"""The HTTP endpoint under abuse (issue #12, items 6 and 9): slow requests are cut, caps answer 503.

On a real socket against ``run_http``'s own server (``serving.HttpServer``, served in
the test's loop): request headers or a body that trickle in are cut with a 408 and a JSON-RPC
body once their time is up, while ordinary requests go on being answered; past the connection
cap a request gets 503 with ``Retry-After``. In process (ASGI): the app's own body clock, its
caps on requests served at once and on live sessions, and the URL pages served only under an
allowed Host. ``run_http`` itself runs once in a subprocess.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import httpx2 as httpx
from _http_harness import (
    ACCEPT_BOTH,
    BASE,
    Probe,
    asgi_client,
    assert_jsonrpc_error,
    call,
    initialize_body,
    legacy_headers,
    make_server,
    modern,
    modern_headers,
    on_our_server,
    open_session,
    request,
    run,
    wait_until,
)

from _raw_http import talk
from _subprocesses import checkout_env
from backchannel import Server
from backchannel.http_host import limits
from backchannel.http_host.h1 import connection as h1
from backchannel.server.url_elicitation import UrlElicitations
from backchannel.testing import free_port, running_process
from backchannel.types.errors import INTERNAL_ERROR, INVALID_REQUEST

BODY_HEAD = (
    "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n"
    "accept: application/json, text/event-stream\r\ncontent-length: 200\r\n\r\n"
)


# --------------------------------------------------------------------------- plumbing


guarded = on_our_server  # (``_http_harness``: the app on run_http's server, on a free port)


async def trickle(port: int, head: bytes, drip: bytes, every: float) -> bytes:
    """Send ``head``, then ``drip`` one byte every ``every`` seconds until the server answers;
    everything the server sent before it closed the connection."""

    async def write(writer: asyncio.StreamWriter) -> None:
        writer.write(head)
        await writer.drain()
        for byte in drip:
            await asyncio.sleep(every)  # the attack's pace, not a wait for the server
            writer.write(bytes([byte]))
            await writer.drain()

    return await talk(port, write, read_timeout=None, until_answer=True)


def parse(raw: bytes) -> tuple[int, dict[str, str], Any]:
    """Status, headers and JSON body of one raw HTTP/1.1 response."""
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
    return int(status_line.split()[1]), headers, json.loads(body)


def assert_refusal(raw: bytes, status: int, code: int) -> dict[str, Any]:
    """A raw response of ``status`` with a JSON-RPC error body of ``code`` (id null); the error."""
    got, headers, body = parse(raw)
    assert got == status, raw
    assert headers["content-type"] == "application/json"
    assert body["jsonrpc"] == "2.0" and body["id"] is None and body["error"]["code"] == code, body
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return body["error"]  # type: ignore[no-any-return]


async def ping(client: httpx.AsyncClient, request_id: int = 7) -> httpx.Response:
    """An ordinary request (a stateless-era ``tools/list``: no session needed)."""
    message = modern(request("tools/list", {}, request_id))
    return await client.post("/mcp", json=message, headers=modern_headers(message))


# --------------------------------------------------------------------------- slow requests (run_http's protocol)


def test_fifty_slow_bodies_are_cut_with_408_while_a_ping_is_answered() -> None:
    timeout = 0.5

    async def body() -> None:
        app = make_server().http_app(body_timeout=None, max_requests=None)  # as run_http builds it
        async with guarded(app, header_timeout=5.0, body_timeout=timeout) as (port, _):
            started = time.monotonic()
            head = BODY_HEAD.format(port=port).encode()
            attack = [asyncio.ensure_future(trickle(port, head, b"{" + b" " * 199, every=0.1)) for _ in range(50)]
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as client:
                answer = await ping(client)
            assert answer.status_code == 200 and answer.json()["id"] == 7 and "tools" in answer.json()["result"]
            answers = await asyncio.gather(*attack)
            assert time.monotonic() - started >= timeout  # the body's own clock, not an earlier one
            for raw in answers:
                error = assert_refusal(raw, 408, INVALID_REQUEST)
                assert "body" in error["message"] and "0.5 s" in error["message"]
                assert parse(raw)[1]["connection"] == "close"

    run(body, timeout=15)


def test_slow_or_silent_headers_are_cut_with_408() -> None:
    async def body() -> None:
        async with guarded(make_server().http_app(), header_timeout=0.3, body_timeout=5.0) as (port, server):
            dripped = trickle(port, b"", b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: " + b"a" * 200, 0.05)
            silent = trickle(port, b"", b"", 0.05)
            for raw in await asyncio.gather(dripped, silent):
                error = assert_refusal(raw, 408, INVALID_REQUEST)
                assert "headers" in error["message"]
            await wait_until(lambda: not server.connections)

    run(body)


def test_a_kept_alive_connection_gets_a_fresh_header_clock_per_request() -> None:
    # Each request on one connection may take most of the header timeout; none is cut.
    async def body() -> None:
        async with guarded(make_server().http_app(), header_timeout=0.5) as (port, _):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            message = json.dumps(modern(request("tools/list", {}, 1))).encode()
            headers = modern_headers(modern(request("tools/list", {}, 1)))
            head = f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-length: {len(message)}\r\n"
            head += "".join(f"{name}: {value}\r\n" for name, value in headers.items()) + "\r\n"
            for _ in range(4):  # 0.8 s in all: more than one header timeout
                writer.write(head.encode() + message)
                await writer.drain()
                status_line = await reader.readuntil(b"\r\n\r\n")
                assert status_line.startswith(b"HTTP/1.1 200"), status_line
                length = int(
                    next(h for h in status_line.split(b"\r\n") if h.startswith(b"content-length")).split(b":")[1]
                )
                assert "tools" in json.loads(await reader.readexactly(length))["result"]
                await asyncio.sleep(0.2)  # a client's pace between requests, not a wait for the server
            writer.close()

    run(body)


def test_slow_headers_of_a_later_request_on_a_kept_alive_connection_are_cut_with_408() -> None:
    # The idle wait between requests is not the header clock: once a byte of the next
    # request arrives, its headers get header_timeout, not what is left of the keep-alive.
    async def body() -> None:
        async with guarded(make_server().http_app(), header_timeout=0.3) as (port, _):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(f"GET /nowhere HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n\r\n".encode())
            head = await reader.readuntil(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 404"), head
            length = int(next(h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")).split(b":")[1])
            await reader.readexactly(length)

            async def drip() -> None:
                with contextlib.suppress(OSError):
                    for byte in b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: " + b"a" * 200:
                        writer.write(bytes([byte]))
                        await asyncio.sleep(0.05)  # the attack's pace, not a wait for the server

            dripping = asyncio.ensure_future(drip())
            raw = await asyncio.wait_for(reader.read(), 10)
            dripping.cancel()
            writer.close()
            assert "headers" in assert_refusal(raw, 408, INVALID_REQUEST)["message"]

    run(body)


# --------------------------------------------------------------------------- caps


def test_past_max_connections_the_slowest_connection_makes_room_for_a_new_one() -> None:
    # Slow clients holding every connection slot cannot keep an ordinary request out.
    async def body() -> None:
        async with guarded(make_server().http_app(), max_connections=3) as (port, server):
            slow = [await asyncio.open_connection("127.0.0.1", port) for _ in range(3)]
            for _, writer in slow:
                writer.write(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n")  # and nothing more for now
            await wait_until(lambda: len(server.connections) == 3)
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as client:
                assert (await ping(client)).status_code == 200
            error = assert_refusal(await slow[0][0].read(), 408, INVALID_REQUEST)
            assert "needed this connection" in error["message"]
            for _, writer in slow:
                writer.close()

    run(body)


def test_a_closed_connection_whose_client_never_reads_is_cut_after_a_while(monkeypatch: Any) -> None:
    # A closing connection counts no more against the cap: one whose client reads nothing of what
    # is left to send would keep its socket and that buffer for ever, one more per request.
    monkeypatch.setattr(h1, "LINGER", 0.5)
    big = b"x" * (32 * 1024 * 1024)  # (more than the kernel's buffers on both sides hold)

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            length = [(b"content-length", str(len(big)).encode())]
            await send({"type": "http.response.start", "status": 200, "headers": length})
            await send({"type": "http.response.body", "body": big})

    async def body() -> None:
        async with guarded(app, keep_alive=0.2) as (port, server):
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET / HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")  # and the answer is never read
            await wait_until(lambda: len(server.connections) == 1)
            [conn] = server.connections
            await wait_until(lambda: conn.transport.is_closing())  # (kept alive, then idle too long)
            await wait_until(lambda: not server.connections, timeout=5)
            writer.close()

    run(body)


def test_past_max_connections_with_every_one_busy_a_request_is_503_with_retry_after() -> None:
    async def body() -> None:
        probe = Probe()
        app = make_server(probe).http_app(body_timeout=None, max_requests=None)
        async with (
            guarded(app, max_connections=3, retry_after=7) as (port, _),
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as busy,
        ):
            calls = []
            for index in range(3):  # three responses being streamed: no connection is idle or slow
                message = modern(call("gated", request_id=index))
                built = busy.build_request("POST", "/mcp", json=message, headers=modern_headers(message))
                calls.append(await busy.send(built, stream=True))
            await wait_until(lambda: app.serving == 3)
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as client:
                refused = await ping(client)
                error = assert_jsonrpc_error(refused, 503, INTERNAL_ERROR)
                assert refused.json()["id"] is None and "limit of 3 open connections" in error["message"]
                assert refused.headers["retry-after"] == "7" and refused.headers["connection"] == "close"
                probe.release.set()
                for response in calls:
                    await response.aread()
                    assert response.status_code == 200
                assert (await ping(client)).status_code == 200  # an idle kept-alive connection made room

    run(body)


def test_past_max_sessions_initialize_is_503_with_retry_after_until_one_is_deleted() -> None:
    async def body() -> None:
        # No idle timeout: no session ends by itself, so Retry-After is the configured guess
        # (test_client_limits.py checks the time a place really frees).
        app = make_server().http_app(max_sessions=2, retry_after=9, session_idle_timeout=None)
        async with asgi_client(app) as client:
            first = await open_session(client)
            await open_session(client)
            refused = await client.post("/mcp", json=initialize_body(), headers=legacy_headers())
            error = assert_jsonrpc_error(refused, 503, INTERNAL_ERROR)
            assert refused.json()["id"] is None and "limit of 2 live sessions" in error["message"]
            assert refused.headers["retry-after"] == "9" and "mcp-session-id" not in refused.headers
            assert len(app.sessions.sessions) == 2
            assert (await ping(client)).status_code == 200  # the stateless era needs no session slot
            deleted = await client.delete("/mcp", headers=legacy_headers(first))
            assert deleted.status_code == 200
            assert await open_session(client)

    run(body)


def test_past_max_requests_a_request_is_503_until_one_ends() -> None:
    # The app's own cap, for when it is mounted in a server with no cap of its own.
    async def body() -> None:
        probe = Probe()
        app = make_server(probe).http_app(max_requests=1, retry_after=3)
        async with asgi_client(app) as client:
            message = modern(call("gated", request_id="g"))
            held = asyncio.ensure_future(client.post("/mcp", json=message, headers=modern_headers(message)))
            await probe.started.wait()
            refused = await ping(client)
            error = assert_jsonrpc_error(refused, 503, INTERNAL_ERROR)
            assert "limit of 1 requests" in error["message"] and refused.headers["retry-after"] == "3"
            probe.release.set()
            assert (await held).status_code == 200
            assert app.serving == 0
            assert (await ping(client)).status_code == 200

    run(body)


def test_the_app_cuts_a_slow_body_with_408_when_mounted_elsewhere() -> None:
    # No run_http protocol in front: the app's own clock stops the read.
    async def body() -> None:
        app = make_server().http_app(body_timeout=0.2)
        never = asyncio.Event()
        sent: list[dict[str, Any]] = []
        calls = 0

        async def receive() -> dict[str, Any]:
            nonlocal calls
            calls += 1
            if calls == 1:
                return {"type": "http.request", "body": b"{", "more_body": True}
            await never.wait()  # the rest of the body never comes
            return {"type": "http.disconnect"}

        async def send(event: dict[str, Any]) -> None:
            sent.append(event)

        headers = [(b"host", b"127.0.0.1"), (b"content-type", b"application/json"), (b"accept", ACCEPT_BOTH.encode())]
        scope = {"type": "http", "method": "POST", "path": "/mcp", "root_path": "", "headers": headers}
        await app(scope, receive, send)
        start, end = sent
        assert start["status"] == 408
        assert dict(start["headers"])[b"connection"] == b"close"
        answer = json.loads(end["body"])
        assert answer["id"] is None and answer["error"]["code"] == INVALID_REQUEST
        assert "body" in answer["error"]["message"]
        assert app.serving == 0 and not app.body_deadlines._reading
        async with asgi_client(app) as client:  # and the next request is served as usual
            assert (await ping(client)).status_code == 200

    run(body)


# --------------------------------------------------------------------------- URL pages (item 9)


def test_url_pages_are_served_only_under_an_allowed_host() -> None:
    async def body() -> None:
        server = Server("pages", "1.0")
        flows = UrlElicitations(BASE)
        server.url_elicitations = flows
        app = server.http_app()
        flow = flows.start("Confirm it is you.")
        assert flow.url is not None
        page = httpx.URL(flow.url).path
        async with asgi_client(app) as client:
            for method in ("GET", "POST"):
                refused = await client.request(method, page, headers={"host": "evil.example"})
                error = assert_jsonrpc_error(refused, 403, INVALID_REQUEST)
                assert "evil.example" in error["message"]
            callback = await client.get(f"{flows.prefix}/callback?state=x", headers={"host": "evil.example"})
            assert_jsonrpc_error(callback, 403, INVALID_REQUEST)
            served = await client.get(page)  # Host 127.0.0.1, no Origin: a browser's navigation
            assert served.status_code == 200 and served.headers["content-type"].startswith("text/html")

    run(body)


# --------------------------------------------------------------------------- run_http itself


def test_run_http_defaults_are_the_documented_limits() -> None:
    defaults = {name: p.default for name, p in inspect.signature(Server.run_http).parameters.items()}
    assert defaults["header_timeout"] == limits.HEADER_TIMEOUT
    assert defaults["body_timeout"] == limits.BODY_TIMEOUT
    assert defaults["max_connections"] == limits.MAX_CONNECTIONS
    assert defaults["retry_after"] == limits.RETRY_AFTER


def test_run_http_cuts_slow_headers_and_bodies(tmp_path: Path) -> None:
    port = free_port()
    script = tmp_path / "serve.py"
    script.write_text(
        textwrap.dedent(f"""
            from backchannel import Server
            server = Server("guarded", "1.0")
            server.run_http(port={port}, header_timeout=0.4, body_timeout=0.4)
        """)
    )

    async def body() -> None:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as client:
            answer = await ping(client)
            assert answer.status_code == 200
            slow_head = trickle(port, b"", b"POST /mcp HTTP/1.1\r\n" + b"x" * 100, 0.05)
            slow_body = trickle(port, BODY_HEAD.format(port=port).encode(), b" " * 200, 0.05)
            head_raw, body_raw = await asyncio.gather(slow_head, slow_body)
            assert "headers" in assert_refusal(head_raw, 408, INVALID_REQUEST)["message"]
            assert "body" in assert_refusal(body_raw, 408, INVALID_REQUEST)["message"]

    with running_process([sys.executable, str(script)], port=port, env=checkout_env(), start_timeout=10.0):
        run(body, timeout=20)
