"""Issue #12, items 1-2 over Streamable HTTP: a body nested too deep is a 400 with a JSON-RPC
-32700 body, and a ``_meta`` value of the wrong JSON type is -32602 naming the field; the
endpoint keeps serving either way (the stdio side is ``tests/wire/test_hardening_core.py``)."""

from __future__ import annotations

import json
from typing import Any

import httpx2 as httpx
import pytest
from _http_harness import (
    asgi_client,
    assert_jsonrpc_error,
    call,
    legacy_headers,
    make_server,
    messages_of,
    modern,
    modern_headers,
    open_session,
    request,
    run,
)

from backchannel import Context, Server
from backchannel.framing.codec import MAX_NESTING_DEPTH
from backchannel.types.errors import INVALID_PARAMS, PARSE_ERROR
from backchannel.types.meta import LOG_LEVEL, PROTOCOL_VERSION


def nested_ping(total_depth: int, request_id: int = 1) -> dict[str, Any]:
    deep: Any = []
    for _ in range(total_depth - 3):
        deep = [deep]
    return modern(request("ping", {"deep": deep}, request_id))  # message, params, then the list


def test_a_body_nested_too_deep_is_400_parse_error_and_the_endpoint_goes_on() -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app()) as client:
            raw = b"[" * 1000 + b"]" * 1000
            response = await client.post("/mcp", content=raw, headers=legacy_headers(version=None))
            error = assert_jsonrpc_error(response, 400, PARSE_ERROR)
            assert f"limit of {MAX_NESTING_DEPTH} levels" in error["message"]
            assert response.json()["id"] is None
            session = await open_session(client)
            echo = await client.post("/mcp", json=call("echo", {"text": "on"}), headers=legacy_headers(session))
            assert echo.status_code == 200, echo.text

    run(body)


def test_both_sides_of_the_nesting_limit_over_http() -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app()) as client:
            over = nested_ping(MAX_NESTING_DEPTH + 1)
            response = await client.post("/mcp", content=json.dumps(over), headers=modern_headers(over))
            assert_jsonrpc_error(response, 400, PARSE_ERROR)
            # ``ping`` does not exist in 2026-07-28: -32601 proves the message at the limit was read.
            at = nested_ping(MAX_NESTING_DEPTH)
            response = await client.post("/mcp", content=json.dumps(at), headers=modern_headers(at))
            assert response.json()["error"]["code"] == -32601, response.text

    run(body)


@pytest.mark.parametrize("value", [[], {}, 1, True], ids=repr)
@pytest.mark.parametrize("key", [LOG_LEVEL, PROTOCOL_VERSION])
def test_a_meta_value_of_the_wrong_json_type_is_invalid_params_over_http(key: str, value: Any) -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app()) as client:
            good = modern(request("tools/list", {}, 1))
            bad = modern(request("tools/list", {}, 2))
            headers = modern_headers(good)
            bad["params"]["_meta"][key] = value
            response = await client.post("/mcp", content=json.dumps(bad), headers=headers)
            assert response.status_code < 500, response.text
            error = response.json()["error"]
            assert error["code"] == INVALID_PARAMS, error
            assert key in error["message"]
            after = await client.post("/mcp", content=json.dumps(good), headers=headers)
            assert "tools" in after.json()["result"], after.text

    run(body)


def response_messages(response: httpx.Response) -> list[dict[str, Any]]:
    """The JSON-RPC messages of a POST's answer, whether plain JSON or an SSE stream."""
    if response.headers["content-type"].startswith("text/event-stream"):
        return messages_of(response.content)
    return [response.json()]


class Opaque:
    """Nothing a JSON encoder knows how to write."""


def unencodable_server() -> Server:
    server = Server("unencodable", log_redactor=None)  # the redactor would make it text first

    @server.tool()
    async def log_opaque(ctx: Context) -> str:
        await ctx.log("info", {"object": Opaque()})
        await ctx.log("info", "a plain line after it")
        return "logged"

    return server


def test_a_message_that_cannot_be_encoded_costs_only_itself_over_http() -> None:
    async def body() -> None:
        app = unencodable_server().http_app()
        async with asgi_client(app) as client:
            # Handshake era: the log line goes on the POST's stream before the answer.
            session = await open_session(client, capabilities={})
            headers = legacy_headers(session)
            level = request("logging/setLevel", {"level": "debug"}, 5)
            assert (await client.post("/mcp", json=level, headers=headers)).status_code == 200
            response = await client.post("/mcp", json=call("log_opaque", {}, 7), headers=headers)
            messages = response_messages(response)
            [answer] = [m for m in messages if m.get("id") == 7]
            assert answer["result"]["content"] == [{"type": "text", "text": "logged"}]
            logs = [m["params"]["data"] for m in messages if m.get("method") == "notifications/message"]
            assert logs == ["a plain line after it"]
            # Stateless era: the same call, its own stream.
            message = modern(call("log_opaque", {}, 8), **{LOG_LEVEL: "debug"})
            response = await client.post("/mcp", content=json.dumps(message), headers=modern_headers(message))
            messages = response_messages(response)
            [answer] = [m for m in messages if m.get("id") == 8]
            assert answer["result"]["content"] == [{"type": "text", "text": "logged"}]

    run(body)
