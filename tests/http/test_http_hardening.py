"""Issue #12, items 1-2 over Streamable HTTP: a body nested too deep is a 400 with a JSON-RPC
-32700 body, and a ``_meta`` value of the wrong JSON type is -32602 naming the field; the
endpoint keeps serving either way (the stdio side is ``tests/wire/test_hardening_core.py``)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from _http_harness import (
    asgi_client,
    assert_jsonrpc_error,
    call,
    legacy_headers,
    make_server,
    modern,
    modern_headers,
    open_session,
    request,
    run,
)

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
