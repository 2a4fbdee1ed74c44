"""A stream followed on another worker of a fleet ends at its lifetime too (issue #26, item 6).

Two workers in one process behind a round robin: a request's stream is written by the worker
that runs it, and a resumption that lands on the other worker follows the stream through the
shared state. That follower also ends at ``stream_lifetime`` with a ``retry`` field, and the
client resumes again with ``Last-Event-ID`` until the answer comes: nothing lost or repeated.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import httpx2
from _fleet import RoundRobin, Worker, fleet_server, open_session, post, session_headers, sse_events

from backchannel.state.shared import SharedState
from backchannel.testing import run, serve_on_loopback

RETRY_MS = 200


def test_a_stream_followed_on_another_worker_ends_at_its_lifetime_and_resumes(
    new_state: Callable[[], SharedState],
) -> None:
    async def body() -> None:
        workers = [Worker(f"w{i}") for i in range(2)]
        apps = [fleet_server(w, state=new_state()).http_app(stream_lifetime=0.5, retry_ms=RETRY_MS) for w in workers]
        async with serve_on_loopback(RoundRobin(apps)) as base, httpx2.AsyncClient(timeout=10) as http:
            url = base + "/mcp"
            session = await open_session(http, url)  # initialize on worker 0, initialized on worker 1
            call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "ask", "arguments": {}}}
            headers = session_headers(session)
            async with asyncio.timeout(5):  # worker 0 runs the call; its response ends at the lifetime
                first = (await post(http, url, session, call)).text
            farewell = f"retry: {RETRY_MS}\n\n"
            assert first.endswith(farewell)
            (last_id, question), *_ = sse_events(first)
            assert question["method"] == "elicitation/create"
            async with asyncio.timeout(5):  # worker 1 follows the stream from the shared state, for its lifetime
                followed = (await http.get(url, headers={**headers, "last-event-id": last_id})).text
            assert followed.endswith(farewell) and not sse_events(followed)  # nothing new yet, nothing repeated
            answer = {"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": {"name": "x"}}}
            assert (await post(http, url, session, answer)).status_code == 202  # worker 0
            async with asyncio.timeout(5):
                rest = sse_events((await http.get(url, headers={**headers, "last-event-id": last_id})).text)  # worker 1
            assert [message["result"]["content"][0]["text"] for _, message in rest] == ["accept:x@w0"]
            assert rest[0][0].endswith("_2")

    run(body)
