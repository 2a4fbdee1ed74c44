"""Stateless-era requests on the same endpoint (2026-07-28 streamable-http.mdx, SEP-2243):
one POST = one request, headers checked against the body, request-scoped streams,
closing the response = cancelling, ``subscriptions/listen`` as the one long-lived stream."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from _http_harness import (
    MODERN,
    Probe,
    SSEReader,
    asgi_client,
    assert_jsonrpc_error,
    call,
    events_of,
    live,
    make_server,
    messages_of,
    modern,
    modern_headers,
    open_session,
    request,
    run,
    wait_until,
)

from backchannel.types import meta as M
from backchannel.types.errors import HEADER_MISMATCH, INVALID_PARAMS, METHOD_NOT_FOUND, UNSUPPORTED_PROTOCOL_VERSION


def test_fast_request_is_answered_as_json_without_a_session() -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app()) as client:
            message = modern(call("echo", {"text": "m"}, request_id="r1"))
            response = await client.post("/mcp", json=message, headers=modern_headers(message))
            assert response.status_code == 200
            assert response.headers["content-type"] == "application/json"
            assert "mcp-session-id" not in response.headers
            result = response.json()["result"]
            assert response.json()["id"] == "r1"
            assert result["resultType"] == "complete" and result["content"] == [{"type": "text", "text": "m"}]

    run(body)


def test_request_with_progress_is_an_sse_stream_ending_with_the_answer() -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app()) as client:
            message = modern(call("slow", {"steps": 2}, request_id=4), progressToken="t")
            response = await client.post("/mcp", json=message, headers=modern_headers(message))
            assert response.status_code == 200
            assert response.headers["content-type"] == "text/event-stream"
            assert response.headers["x-accel-buffering"] == "no"
            assert all(event.event_id is None for event in events_of(response.content))  # not resumable
            messages = messages_of(response.content)
            assert [m["params"]["progress"] for m in messages[:-1]] == [1, 2]
            assert messages[-1]["id"] == 4 and messages[-1]["result"]["content"][0]["text"] == "slow done 2"

    run(body)


def test_per_request_log_level_sends_logs_on_that_request_only() -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app()) as client:
            loud = modern(call("chatty", request_id=1), **{M.LOG_LEVEL: "info"})
            quiet = modern(call("chatty", request_id=2))
            with_logs = await client.post("/mcp", json=loud, headers=modern_headers(loud))
            without = await client.post("/mcp", json=quiet, headers=modern_headers(quiet))
            logs = [m["params"]["data"] for m in messages_of(with_logs.content) if m.get("method")]
            assert logs == ["starting", "halfway"]
            assert without.headers["content-type"] == "application/json"  # no progress token, no logs
            assert without.json()["result"]["content"][0]["text"] == "chatty done"

    run(body)


def test_session_id_header_on_a_modern_request_is_ignored_and_not_echoed() -> None:
    async def body() -> None:
        app = make_server().http_app()
        async with asgi_client(app) as client:
            session_id = await open_session(client)
            for sent in (session_id, "no-such-session"):
                message = modern(request("tools/list"))
                response = await client.post(
                    "/mcp", json=message, headers=modern_headers(message, **{"mcp-session-id": sent})
                )
                assert response.status_code == 200 and "tools" in response.json()["result"]
                assert "mcp-session-id" not in response.headers
            assert list(app.sessions.sessions) == [session_id]

    run(body)


def test_modern_notification_is_202_without_a_session() -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app()) as client:
            note = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
            response = await client.post(
                "/mcp",
                json=note,
                headers={
                    "content-type": "application/json",
                    "accept": "application/json, text/event-stream",
                    "mcp-protocol-version": MODERN,
                },
            )
            assert (response.status_code, response.content) == (202, b"")

    run(body)


MISMATCHES = {
    "missing_mcp_method": lambda h: h.pop("mcp-method"),
    "wrong_mcp_method": lambda h: h.update({"mcp-method": "tools/list"}),
    "missing_mcp_name": lambda h: h.pop("mcp-name"),
    "wrong_mcp_name": lambda h: h.update({"mcp-name": "echo"}),
    "missing_protocol_version": lambda h: h.pop("mcp-protocol-version"),
    "protocol_version_differs_from_body": lambda h: h.update({"mcp-protocol-version": "2025-11-25"}),
    "missing_mcp_param": lambda h: h.pop("mcp-param-region"),
    "wrong_mcp_param": lambda h: h.update({"mcp-param-region": "us-east1"}),
    "mcp_param_bad_base64": lambda h: h.update({"mcp-param-region": "=?base64?!!!?="}),
}


@pytest.mark.parametrize("spoil", list(MISMATCHES), ids=list(MISMATCHES))
def test_header_that_disagrees_with_the_body_is_400_header_mismatch(spoil: str) -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app()) as client:
            message = modern(call("regional", {"region": "eu-west1", "query": "q"}, request_id=8))
            headers = modern_headers(message)
            assert headers["mcp-param-region"] == "eu-west1"
            MISMATCHES[spoil](headers)
            response = await client.post("/mcp", json=message, headers=headers)
            assert_jsonrpc_error(response, 400, HEADER_MISMATCH)
            assert response.json()["id"] == 8

    run(body)


def test_base64_encoded_mcp_param_is_decoded_before_comparing() -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app()) as client:
            message = modern(call("regional", {"region": "Zürich ", "query": "q"}))
            headers = modern_headers(message)
            assert headers["mcp-param-region"].startswith("=?base64?")
            response = await client.post("/mcp", json=message, headers=headers)
            assert response.status_code == 200
            assert response.json()["result"]["content"][0]["text"] == "Zürich :q"

    run(body)


def test_unsupported_modern_version_is_400_unsupported_protocol_version() -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app()) as client:
            message = modern(request("tools/list"), **{M.PROTOCOL_VERSION: "2099-01-01"})
            headers = modern_headers(message)
            assert headers["mcp-protocol-version"] == "2099-01-01"
            error = assert_jsonrpc_error(
                await client.post("/mcp", json=message, headers=headers), 400, UNSUPPORTED_PROTOCOL_VERSION
            )
            assert MODERN in error["data"]["supported"]

    run(body)


def test_missing_client_capabilities_is_400_invalid_params() -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app()) as client:
            message = modern(request("tools/list"))
            del message["params"]["_meta"][M.CLIENT_CAPABILITIES]
            response = await client.post("/mcp", json=message, headers=modern_headers(message))
            error = assert_jsonrpc_error(response, 400, INVALID_PARAMS)
            assert M.CLIENT_CAPABILITIES in error["message"]

    run(body)


def test_unknown_method_is_404_method_not_found() -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app()) as client:
            message = modern(request("nothing/here"))
            response = await client.post("/mcp", json=message, headers=modern_headers(message))
            assert_jsonrpc_error(response, 404, METHOD_NOT_FOUND)

    run(body)


def test_closing_the_response_cancels_the_request(tmp_path: Path) -> None:
    probe = Probe()
    marker = tmp_path / "finally.txt"

    async def body() -> None:
        async with live(make_server(probe, marker=marker).http_app()) as server, server.client() as client:
            message = modern(call("hang", request_id="h"), progressToken=1)
            async with client.stream("POST", "/mcp", json=message, headers=modern_headers(message)) as response:
                assert response.headers["content-type"] == "text/event-stream"
                first = await SSEReader(response).next_message()
                assert first is not None and first["method"] == "notifications/progress"
                assert probe.started.is_set() and not probe.finished.is_set()
            await asyncio.wait_for(probe.finished.wait(), 3)
            assert probe.cancelled
            assert marker.read_text() == "finally ran"

    run(body)


def test_subscriptions_listen_acknowledges_then_streams_list_changed() -> None:
    async def body() -> None:
        server_app = make_server()
        async with live(server_app.http_app()) as server, server.client() as client:
            message = modern(request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, "L1"))
            async with client.stream("POST", "/mcp", json=message, headers=modern_headers(message)) as response:
                assert response.status_code == 200
                assert response.headers["content-type"] == "text/event-stream"
                reader = SSEReader(response)
                ack = await asyncio.wait_for(reader.next_message(), 3)
                assert ack == {
                    "jsonrpc": "2.0",
                    "method": "notifications/subscriptions/acknowledged",
                    "params": {"_meta": {M.SUBSCRIPTION_ID: "L1"}, "notifications": {"toolsListChanged": True}},
                }
                # Request-scoped traffic of another request never lands here.
                other = modern(call("slow", {"steps": 1}), progressToken="x")
                assert (await client.post("/mcp", json=other, headers=modern_headers(other))).status_code == 200
                server_app.add_tool(lambda: "late", name="late_tool")
                changed = await asyncio.wait_for(reader.next_message(), 3)
                assert changed == {
                    "jsonrpc": "2.0",
                    "method": "notifications/tools/list_changed",
                    "params": {"_meta": {M.SUBSCRIPTION_ID: "L1"}},
                }
                assert len(server_app.subscriptions)
            # Closing the stream ends the subscription.
            await wait_until(lambda: not len(server_app.subscriptions))

    run(body)
