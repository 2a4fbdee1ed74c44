"""Resuming handshake-era streams with ``Last-Event-ID`` (2025-11-25 transports.mdx §Resumability,
SEP-1699 polling), and the GET stream for messages that belong to no request."""

from __future__ import annotations

import asyncio
import json

import pytest
from _http_harness import (
    Probe,
    SSEReader,
    asgi_client,
    assert_jsonrpc_error,
    call,
    events_of,
    legacy_headers,
    live,
    make_server,
    messages_of,
    open_session,
    run,
    wait_until,
)

from backchannel.types.errors import INVALID_REQUEST

GET = {"accept": "text/event-stream"}


@pytest.mark.parametrize("release_before_get", [True, False], ids=["replayed", "live"])
def test_resume_a_dropped_stream_with_last_event_id(release_before_get: bool) -> None:
    probe = Probe()

    async def body() -> None:
        async with live(make_server(probe).http_app(retry_ms=250)) as server, server.client() as client:
            session_id = await open_session(client)
            message = call("gated", request_id=9, progressToken="g")
            async with client.stream("POST", "/mcp", json=message, headers=legacy_headers(session_id)) as response:
                assert response.headers["content-type"] == "text/event-stream"
                reader = SSEReader(response)
                priming = await reader.next_event()
                assert priming is not None and priming.data == "" and priming.event_id
                assert reader.decoder.retry_ms == 250
                stream_id = priming.event_id.rsplit("_", 1)[0]
                progress = await reader.next_event()
                assert progress is not None and progress.event_id == f"{stream_id}_1"
                assert json.loads(progress.data)["params"]["progress"] == 1
            # The connection is gone; the handler is not cancelled by that (handshake era).
            if release_before_get:
                probe.release.set()
                connection = server.app.sessions.sessions[session_id].connection
                await wait_until(lambda: connection.active_handlers == 0)  # the answer is stored
            resume = {**GET, "mcp-session-id": session_id, "last-event-id": f"{stream_id}_1"}
            async with client.stream("GET", "/mcp", headers=resume) as again:
                assert again.status_code == 200
                assert again.headers["content-type"] == "text/event-stream"
                probe.release.set()  # (again, or only now: the stream is attached, it will see the rest)
                reader = SSEReader(again)
                events = []
                while (event := await reader.next_event()) is not None:
                    events.append(event)
            assert [e.event_id for e in events] == [f"{stream_id}_{n}" for n in (2, 3, 4)]
            messages = [json.loads(e.data) for e in events]
            assert [m["params"]["progress"] for m in messages[:2]] == [2, 3]
            assert messages[2] == {
                "jsonrpc": "2.0",
                "id": 9,
                "result": {"content": [{"type": "text", "text": "gated done"}]},
            }

    run(body)


def test_close_sse_stream_ends_the_post_after_priming_and_get_fetches_the_rest() -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app(retry_ms=100)) as client:
            session_id = await open_session(client)
            message = call("poll_me", request_id="p", progressToken=1)
            response = await client.post("/mcp", json=message, headers=legacy_headers(session_id))
            assert response.status_code == 200
            assert response.headers["content-type"] == "text/event-stream"
            events = events_of(response.content)
            assert len(events) == 1 and events[0].data == "" and events[0].event_id is not None
            assert "retry: 100" in response.text
            resume = {**GET, "mcp-session-id": session_id, "last-event-id": events[0].event_id}
            rest = await client.get("/mcp", headers=resume)
            assert rest.status_code == 200
            messages = messages_of(rest.content)
            assert [m.get("params", {}).get("progress") for m in messages[:2]] == [1, 2]
            assert messages[-1] == {
                "jsonrpc": "2.0",
                "id": "p",
                "result": {"content": [{"type": "text", "text": "polled"}]},
            }
            # A finished stream can be replayed again from any point.
            again = await client.get("/mcp", headers={**resume, "last-event-id": events_of(rest.content)[1].event_id})
            assert messages_of(again.content) == messages[2:]

    run(body)


def test_last_event_id_that_we_never_issued_is_400() -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app()) as client:
            session_id = await open_session(client)
            response = await client.get("/mcp", headers={**GET, "mcp-session-id": session_id, "last-event-id": "junk"})
            assert_jsonrpc_error(response, 400, INVALID_REQUEST)

    run(body)


def test_last_event_id_of_another_sessions_stream_replays_nothing() -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app()) as client:
            owner = await open_session(client)
            streamed = await client.post(
                "/mcp", json=call("slow", {"steps": 2}, progressToken="secret"), headers=legacy_headers(owner)
            )
            first_id = events_of(streamed.content)[0].event_id
            intruder = await open_session(client)
            response = await client.get("/mcp", headers={**GET, "mcp-session-id": intruder, "last-event-id": first_id})
            assert b"secret" not in response.content
            assert_jsonrpc_error(response, 400, INVALID_REQUEST)

    run(body)


def test_get_opens_the_stream_for_messages_unrelated_to_any_request() -> None:
    async def body() -> None:
        server_app = make_server()
        async with live(server_app.http_app()) as server, server.client() as client:
            session_id = await open_session(client)
            async with client.stream("GET", "/mcp", headers={**GET, "mcp-session-id": session_id}) as stream:
                assert stream.status_code == 200
                assert stream.headers["content-type"] == "text/event-stream"
                assert stream.headers["mcp-session-id"] == session_id
                reader = SSEReader(stream)
                # Request-scoped traffic stays on its POST, not here.
                done = await client.post(
                    "/mcp", json=call("chatty", progressToken=1), headers=legacy_headers(session_id)
                )
                assert [m.get("method") for m in messages_of(done.content)][-1] is None
                server_app.add_tool(lambda: "new", name="added_later")
                message = await asyncio.wait_for(reader.next_message(), 3)
                assert message == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}

    run(body)


def test_second_get_stream_for_a_session_is_409() -> None:
    async def body() -> None:
        async with live(make_server().http_app()) as server, server.client() as client:
            session_id = await open_session(client)
            headers = {**GET, "mcp-session-id": session_id}
            async with client.stream("GET", "/mcp", headers=headers) as first:
                assert first.status_code == 200
                second = await client.get("/mcp", headers=headers)
                assert_jsonrpc_error(second, 409, INVALID_REQUEST)
            # Once the first stream is closed, a new one may be opened.
            app = server.app
            await wait_until(lambda: app.sessions.sessions[session_id].transport.standalone is None)
            async with client.stream("GET", "/mcp", headers=headers) as third:
                assert third.status_code == 200

    run(body)


def test_delete_closes_the_open_get_stream() -> None:
    async def body() -> None:
        async with live(make_server().http_app()) as server, server.client() as client:
            session_id = await open_session(client)
            async with client.stream("GET", "/mcp", headers={**GET, "mcp-session-id": session_id}) as stream:
                reader = SSEReader(stream)
                deleted = await client.delete("/mcp", headers=legacy_headers(session_id))
                assert deleted.status_code == 200
                assert await asyncio.wait_for(reader.next_message(), 3) is None  # the stream ended

    run(body)
