"""Security and malformed input: DNS rebinding (Host/Origin, 403), the authenticator (401) and
sessions bound to their principal (404), the body limit (413), and every refusal a JSON-RPC error."""

from __future__ import annotations

from typing import Any

import httpx2 as httpx
import pytest
from _http_harness import (
    ACCEPT_BOTH,
    asgi_client,
    assert_jsonrpc_error,
    call,
    initialize_body,
    legacy_headers,
    make_server,
    modern,
    modern_headers,
    open_session,
    request,
    run,
)

from backchannel.http_host.authenticator import BearerTokens
from backchannel.types.errors import INVALID_REQUEST, PARSE_ERROR

JSON = {"content-type": "application/json", "accept": ACCEPT_BOTH}


def test_foreign_host_header_is_403_dns_rebinding() -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app()) as client:
            response = await client.post("/mcp", json=initialize_body(), headers={**JSON, "host": "evil.example"})
            error = assert_jsonrpc_error(response, 403, INVALID_REQUEST)
            assert "evil.example" in error["message"]
            assert response.json()["id"] is None

    run(body)


def test_foreign_origin_header_is_403_dns_rebinding() -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app()) as client:
            bad = await client.post("/mcp", json=initialize_body(), headers={**JSON, "origin": "http://evil.example"})
            assert_jsonrpc_error(bad, 403, INVALID_REQUEST)
            local = await client.post(
                "/mcp", json=initialize_body(), headers={**JSON, "origin": "http://localhost:5173"}
            )
            assert local.status_code == 200

    run(body)


def test_allowed_hosts_and_origins_are_configurable() -> None:
    async def body() -> None:
        app = make_server().http_app(allowed_hosts=["mcp.example.com"], allowed_origins=["https://app.example.com"])
        async with asgi_client(app) as client:
            headers = {**JSON, "host": "mcp.example.com", "origin": "https://app.example.com"}
            assert (await client.post("/mcp", json=initialize_body(), headers=headers)).status_code == 200
            loopback = await client.post("/mcp", json=initialize_body(), headers=JSON)  # Host: 127.0.0.1
            assert_jsonrpc_error(loopback, 403, INVALID_REQUEST)

    run(body)


def _auth(token: str | None) -> dict[str, str]:
    return {} if token is None else {"authorization": f"Bearer {token}"}


@pytest.mark.parametrize("token", [None, "wrong"], ids=["no_token", "invalid_token"])
def test_authenticator_refuses_without_a_valid_bearer_token_with_401(token: str | None) -> None:
    async def body() -> None:
        app = make_server().http_app(authenticator=BearerTokens({"tok-a": "alice"}))
        async with asgi_client(app) as client:
            for method, message in (("handshake", initialize_body()), ("stateless", modern(request("tools/list")))):
                headers = {**(legacy_headers() if method == "handshake" else modern_headers(message)), **_auth(token)}
                response = await client.post("/mcp", json=message, headers=headers)
                assert_jsonrpc_error(response, 401, INVALID_REQUEST)
                assert response.headers["www-authenticate"].startswith("Bearer")
            get = await client.get("/mcp", headers={"accept": "text/event-stream", **_auth(token)})
            assert get.status_code == 401 and "www-authenticate" in get.headers
            assert not app.sessions.sessions

    run(body)


def test_session_is_bound_to_its_principal_another_one_gets_404() -> None:
    async def body() -> None:
        app = make_server().http_app(authenticator=BearerTokens({"tok-a": "alice", "tok-b": "bob"}))
        async with asgi_client(app) as client:
            session_id = await open_session(client, headers=_auth("tok-a"))
            assert app.sessions.sessions[session_id].principal == "alice"
            as_bob = legacy_headers(session_id, **_auth("tok-b"))
            assert_jsonrpc_error(
                await client.post("/mcp", json=request("tools/list"), headers=as_bob), 404, INVALID_REQUEST
            )
            get = await client.get(
                "/mcp", headers={"accept": "text/event-stream", "mcp-session-id": session_id, **_auth("tok-b")}
            )
            assert_jsonrpc_error(get, 404, INVALID_REQUEST)
            assert_jsonrpc_error(await client.delete("/mcp", headers=as_bob), 404, INVALID_REQUEST)
            as_alice = legacy_headers(session_id, **_auth("tok-a"))
            answer = await client.post("/mcp", json=call("echo", {"text": "still mine"}), headers=as_alice)
            assert answer.status_code == 200 and answer.json()["result"]["content"][0]["text"] == "still mine"

    run(body)


def test_body_over_max_body_bytes_is_413_with_a_jsonrpc_error() -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app(max_body_bytes=1024)) as client:
            session_id = await open_session(client)
            big = call("echo", {"text": "x" * 2000})
            response = await client.post("/mcp", json=big, headers=legacy_headers(session_id))
            assert_jsonrpc_error(response, 413, INVALID_REQUEST)

            async def chunks() -> Any:  # no Content-Length: the limit holds while reading
                for _ in range(64):
                    yield b"x" * 100

            streamed = await client.post("/mcp", content=chunks(), headers=legacy_headers(session_id))
            assert_jsonrpc_error(streamed, 413, INVALID_REQUEST)
            fits = await client.post("/mcp", json=call("echo", {"text": "x" * 100}), headers=legacy_headers(session_id))
            assert fits.status_code == 200

    run(body)


def test_malformed_json_is_400_parse_error() -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app()) as client:
            response = await client.post("/mcp", content=b'{"jsonrpc": "2.0", "id": 1,', headers=JSON)
            assert_jsonrpc_error(response, 400, PARSE_ERROR)
            assert response.json()["id"] is None

    run(body)


def test_batch_is_400_invalid_request() -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app()) as client:
            response = await client.post("/mcp", json=[initialize_body(), request("ping", None, 2)], headers=JSON)
            assert_jsonrpc_error(response, 400, INVALID_REQUEST)

    run(body)


def test_wrong_content_type_is_415() -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app()) as client:
            headers = {**JSON, "content-type": "text/plain"}
            response = await client.post("/mcp", content=b'{"jsonrpc":"2.0","id":0,"method":"ping"}', headers=headers)
            assert_jsonrpc_error(response, 415, INVALID_REQUEST)

    run(body)


BAD_REQUESTS: dict[str, tuple[int, dict[str, Any]]] = {
    "post_accept_without_event_stream": (
        406,
        {"method": "POST", "json": {}, "headers": {**JSON, "accept": "application/json"}},
    ),
    "get_accept_without_event_stream": (406, {"method": "GET", "headers": {"accept": "application/json"}}),
    "put_method": (405, {"method": "PUT", "content": b"{}", "headers": JSON}),
    "wrong_path": (404, {"method": "POST", "url": "/other", "json": {}, "headers": JSON}),
    "not_an_object": (400, {"method": "POST", "json": "hello", "headers": JSON}),
    "bad_envelope": (400, {"method": "POST", "json": {"jsonrpc": "1.0", "id": 1, "method": "x"}, "headers": JSON}),
    "get_without_session_id": (
        400,
        {"method": "GET", "headers": {"accept": "text/event-stream", "last-event-id": "x"}},
    ),
}


@pytest.mark.parametrize("case", list(BAD_REQUESTS), ids=list(BAD_REQUESTS))
def test_every_error_response_body_is_a_jsonrpc_error(case: str) -> None:
    status, options = BAD_REQUESTS[case]

    async def body() -> httpx.Response:
        async with asgi_client(make_server().http_app()) as client:
            return await client.request(url=options.pop("url", "/mcp"), **options)

    response = run(body)
    assert_jsonrpc_error(response, status, INVALID_REQUEST)
    if status == 405:
        assert response.headers["allow"] == "GET, POST, DELETE"
