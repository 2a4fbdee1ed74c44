"""The bounded fuzz pass over Streamable HTTP (issue #12, "Proven by"): 2,000 fuzzed POSTs
to the ASGI app, in process, both eras.

The bodies are the stdio fuzzer's frames; stateless-era ones go out with their
SEP-2243 headers (sometimes wrong or missing), handshake-era ones inside a session
(sometimes without its id or with another). Every response is checked as it comes:
never a 5xx; a JSON body is one JSON-RPC message (an error one with an expected code,
never -32603); a 202 carries nothing; an SSE stream carries JSON-RPC messages. A ping
in the session after every 100 POSTs is answered within 1 s.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import time
from typing import Any

from _peers import bounded
from frames import ALLOWED_CODES, LEGACY, FrameMaker, Ledger
from fuzz_server import make_server

from backchannel.framing.mirrored_headers import request_headers
from backchannel.framing.sse import SSEDecoder
from backchannel.http_host.app import HttpApp

POSTS = 2_000
PING_EVERY = 100
PING_BOUND = 1.0  # seconds
WAIT = 5.0  # seconds: a bound on each response, never a pause
ACCEPT = "application/json, text/event-stream"


class Response:
    def __init__(self) -> None:
        self.status = 0
        self.headers: dict[str, str] = {}
        self.body = bytearray()
        self.messages: list[Any] = []
        self.done = asyncio.Event()


async def post(app: HttpApp, body: bytes, headers: dict[str, str]) -> Response:
    """One POST to ``app``, read until its answer (or the end); the client then leaves."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1:8000")] + [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    response = Response()
    decoder = SSEDecoder()
    leave = asyncio.Event()
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await leave.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            response.status = message["status"]
            response.headers = {k.decode().lower(): v.decode() for k, v in message.get("headers", [])}
        elif message["type"] == "http.response.body":
            chunk = message.get("body", b"")
            response.body += chunk
            if response.headers.get("content-type", "").startswith("text/event-stream"):
                for event in decoder.feed(chunk):
                    if event.data:
                        item = json.loads(event.data)
                        response.messages.append(item)
                        # An answer ends what this test waits for; so does a listen stream's acknowledgement.
                        if "method" not in item or item.get("method") == "notifications/subscriptions/acknowledged":
                            response.done.set()
            if not message.get("more_body"):
                response.done.set()

    task = asyncio.get_running_loop().create_task(app(scope, receive, send))
    try:
        async with asyncio.timeout(WAIT):
            await response.done.wait()
    finally:
        leave.set()
        async with asyncio.timeout(WAIT):
            await task
    return response


def check(response: Response, body: bytes, problems: list[str]) -> None:
    what = f"{response.status} for {body[:200]!r}"
    kind = response.headers.get("content-type", "")
    if response.status >= 500:
        problems.append(f"a server error: {what}: {bytes(response.body[:300])!r}")
        return
    if response.status == 202:
        if response.body:
            problems.append(f"a 202 with a body: {what}")
        return
    if kind.startswith("application/json"):
        try:
            messages = [json.loads(response.body)]
        except ValueError:
            problems.append(f"a JSON response that is not JSON: {what}: {bytes(response.body[:300])!r}")
            return
    elif kind.startswith("text/event-stream"):
        if response.status != 200:
            problems.append(f"an SSE stream with status {what}")
        messages = response.messages
    else:
        problems.append(f"neither JSON nor SSE ({kind!r}): {what}: {bytes(response.body[:300])!r}")
        return
    for message in messages:
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            problems.append(f"not a JSON-RPC message: {what}: {message!r:.300}")
        elif isinstance(message.get("error"), dict) and message["error"].get("code") not in ALLOWED_CODES:
            problems.append(f"error {message['error'].get('code')}: {what}: {message!r:.300}")
        elif response.status >= 400 and "error" not in message:
            problems.append(f"status {response.status} without a JSON-RPC error: {what}")


def headers_for(rng: random.Random, body: bytes, session: str) -> dict[str, str]:
    headers = {"accept": ACCEPT, "content-type": "application/json"}
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):  # the frames that are no JSON, or too deep for the json module
        message = None
    params = message.get("params") if isinstance(message, dict) else None
    modern = (
        isinstance(params, dict)
        and isinstance(params.get("_meta"), dict)
        and "io.modelcontextprotocol/protocolVersion" in params["_meta"]
    )
    if modern and isinstance(message, dict):
        if rng.random() < 0.8:
            with contextlib.suppress(ValueError):  # an argument no header can carry: send without
                headers.update({k.lower(): v for k, v in request_headers(message).items()})
        if rng.random() < 0.1:
            headers["mcp-method"] = rng.choice(["tools/list", "", "x"])
    else:
        headers["mcp-protocol-version"] = LEGACY
        roll = rng.random()
        if roll < 0.9:
            headers["mcp-session-id"] = session
        elif roll < 0.95:
            headers["mcp-session-id"] = "not-a-session"
    if rng.random() < 0.03:
        headers["content-type"] = rng.choice(["text/plain", "application/json; charset=latin-1", ""])
    if rng.random() < 0.03:
        headers["accept"] = rng.choice(["application/json", "text/html", ""])
    return headers


def test_bounded_http_fuzz_pass() -> None:
    seed = int(os.environ.get("FUZZ_SEED", "12"))
    rng = random.Random(seed)
    maker = FrameMaker(seed, Ledger(), huge_bytes=50_000, max_line=300_000)
    app = make_server().http_app(allowed_hosts=["127.0.0.1:8000", "127.0.0.1"])
    problems: list[str] = []
    latencies: list[float] = []

    async def body() -> None:
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "fuzzer", "version": "1"}},
        }
        opened = await post(app, json.dumps(init).encode(), {"accept": ACCEPT, "content-type": "application/json"})
        assert opened.status == 200, bytes(opened.body)
        session = opened.headers["mcp-session-id"]
        base = {
            "accept": ACCEPT,
            "content-type": "application/json",
            "mcp-protocol-version": LEGACY,
            "mcp-session-id": session,
        }
        done = await post(app, b'{"jsonrpc":"2.0","method":"notifications/initialized"}', base)
        assert done.status == 202
        sent = 0
        while sent < POSTS:
            for line in maker.frames() + maker.closing():
                response = await post(app, line, headers_for(rng, line, session))
                check(response, line, problems)
                sent += 1
                if sent % PING_EVERY == 0:
                    started = time.monotonic()
                    pong = await post(app, b'{"jsonrpc":"2.0","id":"ping","method":"ping"}', base)
                    latencies.append(time.monotonic() - started)
                    if pong.status != 200 or b'"result"' not in pong.body:
                        problems.append(
                            f"the session's ping failed after {sent} POSTs: {pong.status} {bytes(pong.body)!r}"
                        )
        await app.aclose()

    bounded(body, timeout=240)
    assert problems == [], "\n".join(problems[:20])
    assert latencies and max(latencies) < PING_BOUND, max(latencies)
