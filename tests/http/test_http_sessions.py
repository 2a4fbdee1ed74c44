"""Handshake-era sessions (2025-11-25 transports.mdx §Session Management, §Protocol Version Header)."""

from __future__ import annotations

import gc
import time
import weakref

from _http_harness import (
    LEGACY,
    asgi_client,
    assert_jsonrpc_error,
    call,
    initialize_body,
    legacy_headers,
    make_server,
    open_session,
    request,
    run,
    wait_until,
)

from backchannel.types.errors import INVALID_REQUEST, UNSUPPORTED_PROTOCOL_VERSION


def test_initialize_mints_a_visible_ascii_unguessable_session_id() -> None:
    async def body() -> list[str]:
        async with asgi_client(make_server().http_app()) as client:
            ids = []
            for _ in range(3):
                response = await client.post("/mcp", json=initialize_body(), headers=legacy_headers(version=None))
                assert response.status_code == 200
                assert response.headers["content-type"] == "application/json"
                assert response.json()["result"]["protocolVersion"] == LEGACY
                ids.append(response.headers["mcp-session-id"])
            return ids

    ids = run(body)
    assert len(set(ids)) == 3
    for session_id in ids:
        assert all(0x21 <= ord(ch) <= 0x7E for ch in session_id), session_id
        assert len(session_id) >= 32  # 256 random bits, URL-safe base64


def test_every_response_of_a_session_echoes_its_id() -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app()) as client:
            session_id = await open_session(client)
            answer = await client.post("/mcp", json=call("echo", {"text": "hi"}), headers=legacy_headers(session_id))
            assert answer.status_code == 200
            assert answer.headers["mcp-session-id"] == session_id
            assert answer.json() == {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "hi"}]}}

    run(body)


def test_request_without_session_id_after_initialize_is_400() -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app()) as client:
            await open_session(client)
            response = await client.post("/mcp", json=request("tools/list"), headers=legacy_headers())
            assert_jsonrpc_error(response, 400, INVALID_REQUEST)
            assert "mcp-session-id" not in response.headers

    run(body)


def test_unknown_session_id_is_404() -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app()) as client:
            await open_session(client)
            response = await client.post("/mcp", json=request("tools/list"), headers=legacy_headers("not-a-session"))
            assert_jsonrpc_error(response, 404, INVALID_REQUEST)

    run(body)


def test_delete_ends_the_session_then_every_request_is_404() -> None:
    async def body() -> None:
        app = make_server().http_app()
        async with asgi_client(app) as client:
            session_id = await open_session(client)
            deleted = await client.delete("/mcp", headers=legacy_headers(session_id))
            assert deleted.status_code == 200
            assert session_id not in app.sessions.sessions
            post = await client.post("/mcp", json=request("tools/list"), headers=legacy_headers(session_id))
            assert_jsonrpc_error(post, 404, INVALID_REQUEST)
            notification = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            assert_jsonrpc_error(
                await client.post("/mcp", json=notification, headers=legacy_headers(session_id)), 404, INVALID_REQUEST
            )
            get = await client.get("/mcp", headers={"accept": "text/event-stream", "mcp-session-id": session_id})
            assert_jsonrpc_error(get, 404, INVALID_REQUEST)
            again = await client.delete("/mcp", headers=legacy_headers(session_id))
            assert_jsonrpc_error(again, 404, INVALID_REQUEST)

    run(body)


def test_delete_without_session_id_is_400() -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app()) as client:
            assert_jsonrpc_error(await client.delete("/mcp", headers=legacy_headers()), 400, INVALID_REQUEST)

    run(body)


def test_get_without_session_id_is_400() -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app()) as client:
            response = await client.get("/mcp", headers={"accept": "text/event-stream"})
            assert_jsonrpc_error(response, 400, INVALID_REQUEST)

    run(body)


def test_unsupported_protocol_version_header_is_400() -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app()) as client:
            session_id = await open_session(client)
            for version in ("1999-01-01", "2025-06-18"):  # unknown; known but not this session's
                response = await client.post(
                    "/mcp", json=request("tools/list"), headers=legacy_headers(session_id, version=version)
                )
                error = assert_jsonrpc_error(response, 400, UNSUPPORTED_PROTOCOL_VERSION)
                assert error["data"]["requested"] == version
            bad = legacy_headers(session_id, version="1999-01-01")
            get = await client.get("/mcp", headers={**bad, "accept": "text/event-stream"})
            assert_jsonrpc_error(get, 400, UNSUPPORTED_PROTOCOL_VERSION)
            assert_jsonrpc_error(await client.delete("/mcp", headers=bad), 400, UNSUPPORTED_PROTOCOL_VERSION)
            # Without the header, the negotiated version is assumed.
            fine = await client.post("/mcp", json=request("tools/list"), headers=legacy_headers(session_id, None))
            assert fine.status_code == 200 and "tools" in fine.json()["result"]

    run(body)


def test_a_failed_initialize_keeps_no_session() -> None:
    async def body() -> None:
        app = make_server().http_app()
        async with asgi_client(app) as client:
            broken = request("initialize", {"protocolVersion": 5}, 0)
            response = await client.post("/mcp", json=broken, headers=legacy_headers())
            assert response.status_code == 200
            assert response.json()["error"]["code"] == -32602
            await wait_until(lambda: not app.sessions.sessions)

    run(body)


def test_notification_and_client_response_posts_are_202_with_no_body() -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app()) as client:
            session_id = await open_session(client)
            notification = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
            accepted = await client.post("/mcp", json=notification, headers=legacy_headers(session_id))
            assert (accepted.status_code, accepted.content) == (202, b"")
            stray = {"jsonrpc": "2.0", "id": 99, "result": {}}
            accepted = await client.post("/mcp", json=stray, headers=legacy_headers(session_id))
            assert (accepted.status_code, accepted.content) == (202, b"")

    run(body)


def test_idle_timeout_ends_the_session_and_frees_its_memory() -> None:
    async def body() -> None:
        server = make_server()
        app = server.http_app(session_idle_timeout=60.0)
        async with asgi_client(app) as client:
            session_id = await open_session(client)
            # A streamed answer leaves events in the store, tied to the session.
            streamed = await client.post(
                "/mcp", json=call("slow", {"steps": 1}, progressToken="p"), headers=legacy_headers(session_id)
            )
            assert streamed.headers["content-type"] == "text/event-stream"
            session = weakref.ref(app.sessions.sessions[session_id])
            connection = weakref.ref(app.sessions.sessions[session_id].connection)
            assert len(app.event_store) == 1  # type: ignore[arg-type]
            # The reaper's question, asked a minute and a second from now: no waiting it out.
            await app.sessions.end_idle(time.monotonic() + 61.0)
            await wait_until(lambda: session_id not in app.sessions.sessions, timeout=3)
            await wait_until(lambda: connection() is None or connection().closed.is_set())  # type: ignore[union-attr]
            assert len(app.event_store) == 0  # type: ignore[arg-type]
            await wait_until(lambda: gc.collect() >= 0 and session() is None and connection() is None)
            assert session() is None and connection() is None  # nothing holds the ended session
            assert len(server._connections) == 0
            response = await client.post("/mcp", json=request("tools/list"), headers=legacy_headers(session_id))
            assert_jsonrpc_error(response, 404, INVALID_REQUEST)

    run(body)


def test_activity_keeps_a_session_alive_past_the_idle_timeout() -> None:
    async def body() -> None:
        app = make_server().http_app(session_idle_timeout=60.0)
        async with asgi_client(app) as client:
            session_id = await open_session(client)
            for _ in range(6):  # 6 x 40 s of pings, each well inside the timeout: 4 timeouts in all
                ping = await client.post("/mcp", json=request("ping"), headers=legacy_headers(session_id))
                assert ping.status_code == 200
                # The reaper's question 40 s after this ping, asked now instead of waited for.
                assert await app.sessions.end_idle(time.monotonic() + 40.0) == 0
            assert session_id in app.sessions.sessions

    run(body)
