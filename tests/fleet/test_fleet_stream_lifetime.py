"""A stream followed on another worker of a fleet ends at its lifetime too (issue #26, item 6).

Two workers in one process behind a round robin: a request's stream is written by the worker
that runs it, and a resumption that lands on the other worker follows the stream through the
shared state. That follower also ends at ``stream_lifetime`` with a ``retry`` field, and the
client resumes again with ``Last-Event-ID`` until the answer comes: nothing lost or repeated.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx2
from _fleet import RoundRobin, Worker, fleet_server

from backchannel.state.shared import SharedState
from backchannel.testing import run, serve_on_loopback

HANDSHAKE = "2025-11-25"
RETRY_MS = 200
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


async def post(http: httpx2.AsyncClient, url: str, session: str | None, message: dict[str, Any]) -> httpx2.Response:
    headers = dict(HEADERS)
    if session is not None:
        headers |= {"mcp-session-id": session, "mcp-protocol-version": HANDSHAKE}
    return await http.post(url, content=json.dumps(message), headers=headers)


def events(text: str) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for block in text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if fields.get("data"):
            out.append((fields.get("id", ""), json.loads(fields["data"])))
    return out


def test_a_stream_followed_on_another_worker_ends_at_its_lifetime_and_resumes(
    new_state: Callable[[], SharedState],
) -> None:
    async def body() -> None:
        workers = [Worker(f"w{i}") for i in range(2)]
        apps = [fleet_server(w, state=new_state()).http_app(stream_lifetime=0.5, retry_ms=RETRY_MS) for w in workers]
        async with serve_on_loopback(RoundRobin(apps)) as base, httpx2.AsyncClient(timeout=10) as http:
            url = base + "/mcp"
            init = {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": HANDSHAKE,
                    "capabilities": {"elicitation": {}},
                    "clientInfo": {"name": "t"},
                },
            }
            session = (await post(http, url, None, init)).headers["mcp-session-id"]  # worker 0
            await post(http, url, session, {"jsonrpc": "2.0", "method": "notifications/initialized"})  # worker 1
            call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "ask", "arguments": {}}}
            headers = {**HEADERS, "mcp-session-id": session, "mcp-protocol-version": HANDSHAKE}
            async with asyncio.timeout(5):  # worker 0 runs the call; its response ends at the lifetime
                first = (await http.post(url, content=json.dumps(call), headers=headers)).text
            farewell = f"retry: {RETRY_MS}\n\n"
            assert first.endswith(farewell)
            (last_id, question), *_ = events(first)
            assert question["method"] == "elicitation/create"
            async with asyncio.timeout(5):  # worker 1 follows the stream from the shared state, for its lifetime
                followed = (await http.get(url, headers={**headers, "last-event-id": last_id})).text
            assert followed.endswith(farewell) and not events(followed)  # nothing new yet, nothing repeated
            answer = {"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": {"name": "x"}}}
            assert (await post(http, url, session, answer)).status_code == 202  # worker 0
            async with asyncio.timeout(5):
                rest = events((await http.get(url, headers={**headers, "last-event-id": last_id})).text)  # worker 1
            assert [message["result"]["content"][0]["text"] for _, message in rest] == ["accept:x@w0"]
            assert rest[0][0].endswith("_2")

    run(body)
