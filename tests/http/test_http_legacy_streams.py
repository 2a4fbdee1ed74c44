"""Handshake-era POST answers: JSON or a request-scoped SSE stream (2025-11-25 transports.mdx
§Sending Messages): the SEP-1699 priming event, progress/log/server requests on the POST's
own stream before its answer, and several such streams at once."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from _http_harness import (
    Probe,
    SSEReader,
    asgi_client,
    call,
    events_of,
    legacy_headers,
    live,
    make_server,
    messages_of,
    open_session,
    request,
    run,
    wait_until,
)


def _progress(message: dict[str, Any]) -> tuple[str, float]:
    assert message["method"] == "notifications/progress", message
    return message["params"]["progressToken"], message["params"]["progress"]


def test_post_answered_as_json_when_the_answer_comes_first() -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app()) as client:
            session_id = await open_session(client)
            response = await client.post("/mcp", json=call("echo", {"text": "x"}), headers=legacy_headers(session_id))
            assert response.status_code == 200
            assert response.headers["content-type"] == "application/json"
            assert int(response.headers["content-length"]) == len(response.content)
            assert response.json()["result"]["content"] == [{"type": "text", "text": "x"}]

    run(body)


def test_post_answered_as_sse_stream_that_primes_then_closes_after_the_answer() -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app(retry_ms=1500)) as client:
            session_id = await open_session(client)
            message = call("slow", {"steps": 2}, request_id="s1", progressToken="tok")
            response = await client.post("/mcp", json=message, headers=legacy_headers(session_id))
            assert response.status_code == 200
            assert response.headers["content-type"] == "text/event-stream"
            assert response.headers["cache-control"] == "no-cache"
            assert response.headers["x-accel-buffering"] == "no"
            assert response.headers["mcp-session-id"] == session_id
            # SEP-1699: the first event is an id with empty data, and a retry: field.
            assert response.text.startswith("id: ")
            first_block = response.text.split("\n\n")[0].splitlines()
            assert any(line.startswith("retry: 1500") for line in first_block)
            assert "data:" in first_block
            events = events_of(response.content)
            assert events[0].data == ""
            stream = events[0].event_id
            assert stream is not None and stream.endswith("_0")
            prefix = stream[: -len("0")]
            assert [e.event_id for e in events] == [f"{prefix}{n}" for n in range(4)]
            messages = [json.loads(e.data) for e in events[1:]]
            assert [_progress(m) for m in messages[:2]] == [("tok", 1), ("tok", 2)]
            assert messages[2] == {
                "jsonrpc": "2.0",
                "id": "s1",
                "result": {"content": [{"type": "text", "text": "slow done 2"}]},
            }

    run(body)


def test_logs_and_progress_travel_on_the_post_stream_before_the_answer() -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app()) as client:
            session_id = await open_session(client)
            level = request("logging/setLevel", {"level": "warning"}, 2)
            assert (await client.post("/mcp", json=level, headers=legacy_headers(session_id))).json()["result"] == {}
            response = await client.post(
                "/mcp", json=call("chatty", request_id=3, progressToken=7), headers=legacy_headers(session_id)
            )
            assert response.headers["content-type"] == "text/event-stream"
            messages = messages_of(response.content)
            assert [m.get("method") for m in messages] == [
                "notifications/progress",
                "notifications/message",  # only the warning: the info line is below the level set
                "notifications/progress",
                None,
            ]
            assert messages[1]["params"] == {"level": "warning", "data": "halfway"}
            assert messages[-1]["id"] == 3 and messages[-1]["result"]["content"][0]["text"] == "chatty done"

    run(body)


def test_concurrent_post_streams_each_carry_only_their_own_request() -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app()) as client:
            session_id = await open_session(client)
            headers = legacy_headers(session_id)
            started = asyncio.get_running_loop().time()
            first, second = await asyncio.gather(
                client.post(
                    "/mcp",
                    json=call("slow", {"steps": 4, "delay": 0.1}, request_id="a", progressToken="A"),
                    headers=headers,
                ),
                client.post(
                    "/mcp",
                    json=call("slow", {"steps": 3, "delay": 0.13}, request_id="b", progressToken="B"),
                    headers=headers,
                ),
            )
            elapsed = asyncio.get_running_loop().time() - started
            assert elapsed < 0.7, elapsed  # side by side: one after the other takes at least 0.79 s
            for response, token, steps, request_id in ((first, "A", 4, "a"), (second, "B", 3, "b")):
                assert response.headers["content-type"] == "text/event-stream"
                messages = messages_of(response.content)
                assert [_progress(m) for m in messages[:-1]] == [(token, n) for n in range(1, steps + 1)]
                assert messages[-1]["id"] == request_id
                assert messages[-1]["result"]["content"][0]["text"] == f"slow done {steps}"
            ids_a = {e.event_id.rsplit("_", 1)[0] for e in events_of(first.content)}  # type: ignore[union-attr]
            ids_b = {e.event_id.rsplit("_", 1)[0] for e in events_of(second.content)}  # type: ignore[union-attr]
            assert len(ids_a) == len(ids_b) == 1 and ids_a != ids_b  # two streams, distinct ids

    run(body)


def test_server_to_client_request_travels_on_the_post_stream_it_belongs_to() -> None:
    async def body() -> None:
        async with live(make_server().http_app()) as server, server.client() as client:
            session_id = await open_session(client, capabilities={"roots": {"listChanged": True}})
            headers = legacy_headers(session_id)
            async with client.stream("POST", "/mcp", json=call("ask_roots", request_id=5), headers=headers) as response:
                assert response.headers["content-type"] == "text/event-stream"
                reader = SSEReader(response)
                question = await reader.next_message()
                assert question is not None and question["method"] == "roots/list"
                answer = {"jsonrpc": "2.0", "id": question["id"], "result": {"roots": [{"uri": "file:///a"}]}}
                posted = await client.post("/mcp", json=answer, headers=headers)
                assert (posted.status_code, posted.content) == (202, b"")
                final = await reader.next_message()
                assert final == {
                    "jsonrpc": "2.0",
                    "id": 5,
                    "result": {"content": [{"type": "text", "text": "file:///a"}]},
                }
                assert await reader.next_message() is None  # the stream ends after the answer

    run(body)


def test_cancelled_notification_ends_the_post_stream_of_that_request() -> None:
    probe = Probe()

    async def body() -> None:
        app = make_server(probe).http_app()
        async with live(app) as server, server.client() as client:
            session_id = await open_session(client)
            headers = legacy_headers(session_id)
            async with client.stream(
                "POST", "/mcp", json=call("hang", request_id=7, progressToken=1), headers=headers
            ) as response:
                reader = SSEReader(response)
                assert (await reader.next_message())["method"] == "notifications/progress"  # type: ignore[index]
                cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
                assert (await client.post("/mcp", json=cancel, headers=headers)).status_code == 202
                # No answer follows a cancelled request, and the stream ends rather than hang.
                assert await asyncio.wait_for(reader.next_message(), 3) is None
            assert probe.cancelled
            await wait_until(lambda: not app.sessions.sessions[session_id].transport.feeds)

    run(body)


def test_delete_ends_the_post_streams_still_open() -> None:
    probe = Probe()

    async def body() -> None:
        async with live(make_server(probe).http_app()) as server, server.client() as client:
            session_id = await open_session(client)
            headers = legacy_headers(session_id)
            async with client.stream("POST", "/mcp", json=call("hang", progressToken=1), headers=headers) as response:
                reader = SSEReader(response)
                assert (await reader.next_message())["method"] == "notifications/progress"  # type: ignore[index]
                assert (await client.delete("/mcp", headers=headers)).status_code == 200
                assert await asyncio.wait_for(reader.next_message(), 3) is None
            await asyncio.wait_for(probe.finished.wait(), 3)  # the handler was stopped with the session

    run(body)
