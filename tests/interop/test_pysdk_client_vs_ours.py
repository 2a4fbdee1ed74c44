"""The official Python SDK client (mcp 2.3.0) against our server, over stdio and Streamable HTTP,
in both eras.

``pysdk_client.py`` runs one plan per mode against ``backchannel_server.py --page-size 10`` and
prints what the SDK client saw; it is dumped with ``--exclude-unset`` so every field asserted
here is one our server actually sent (not a default the SDK's models filled in). Over stdio it
spawns the server itself (``-- argv``); over HTTP the server runs ``Server.run_http`` on
127.0.0.1 (``--http PORT``) and ``pysdk_client.py --url`` drives it with the SDK's
``streamable_http_client``, once with ``mode="legacy"`` (initialize handshake,
``Mcp-Session-Id``) and once with ``mode="2026-07-28"`` (per-request ``_meta`` envelope, no
session). The checks are the same on both transports.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _http_peer import http_peer

from backchannel.testing import free_port
from peers.paths import PEERS_DIR, PYSDK_CLIENT, have_pysdk

pytestmark = [pytest.mark.interop, pytest.mark.usefixtures("transport")]

if not have_pysdk():
    pytest.skip("the official Python SDK (mcp==2.3.0) is not installed", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
OUR_SERVER = [sys.executable, str(PEERS_DIR / "backchannel_server.py"), "--page-size", "10"]
FILLERS = [f"t{i:02d}" for i in range(25)]
ALL_TOOLS = ["echo", "add", "weather", "fail", *FILLERS]
SERVER_INFO = {"name": "backchannel-peer", "version": "0.1.0-peer"}
SERVER_INFO_META = {"io.modelcontextprotocol/serverInfo": SERVER_INFO}
WEATHER = {"city": "Oslo", "temperature_c": 21.5, "conditions": "sunny", "humidity_pct": 40}
MODES = ["legacy", "2026-07-28"]
TIMEOUT = 120

PLAN: list[tuple[str, str, dict[str, Any]]] = [
    ("tools", "list_tools", {}),
    ("tools_page1", "list_tools", {"cursor": None}),
    ("echo", "call_tool", {"name": "echo", "arguments": {"text": "hi"}}),
    ("add", "call_tool", {"name": "add", "arguments": {"a": 2, "b": 3}}),
    ("weather", "call_tool", {"name": "weather", "arguments": {"city": "Oslo"}}),
    ("fail", "call_tool", {"name": "fail", "arguments": {"message": "nope"}}),
    ("bad_arguments", "call_tool", {"name": "add", "arguments": {"a": "two", "c": 3}}),
    ("unknown_tool", "call_tool", {"name": "nope", "arguments": {}}),
    ("prompts", "list_prompts", {}),
    ("greet", "get_prompt", {"name": "greet", "arguments": {"name": "Ada"}}),
    ("resources", "list_resources", {}),
    ("templates", "list_resource_templates", {}),
    ("hello", "read_resource", {"uri": "res://hello"}),
    ("item", "read_resource", {"uri": "res://items/42"}),
    ("bad_cursor", "list_tools", {"cursor": "bm90LWEtY3Vyc29y"}),
    ("missing", "read_resource", {"uri": "res://nope"}),
    ("ping", "ping", {}),
]


@pytest.fixture(scope="module")
def server(transport: str) -> Iterator[list[str]]:
    """The ``pysdk_client.py`` arguments that reach our server on ``transport``."""
    if transport == "stdio":
        yield ["--", *OUR_SERVER]
        return
    port = free_port()
    with http_peer([*OUR_SERVER, "--http", str(port)], port, cwd=ROOT) as url:
        yield ["--url", url]


@pytest.fixture(scope="module", params=MODES)
def run(request: pytest.FixtureRequest, server: list[str]) -> dict[str, Any]:
    mode: str = request.param
    plan = json.dumps([{"op": op, "args": args} for _, op, args in PLAN])
    argv = [sys.executable, str(PYSDK_CLIENT), "--mode", mode, "--plan", plan, "--exclude-unset", *server]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT, check=False)
    assert proc.returncode == 0, f"pysdk_client exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    out = json.loads(proc.stdout)
    assert "closeError" not in out, out["closeError"]
    results = dict(zip([key for key, _, _ in PLAN], out["results"], strict=True))
    return {"mode": mode, "out": out, **results}


def ok(run: dict[str, Any], key: str) -> dict[str, Any]:
    value: dict[str, Any] = run[key]
    assert "error" not in value, f"{key}: {value['error']}"
    return value


def modern(run: dict[str, Any]) -> bool:
    return bool(run["mode"] != "legacy")


def test_connected(run: dict[str, Any]) -> None:
    out = run["out"]
    if modern(run):
        # The SDK's 2026-07-28 mode adopts the version directly: no handshake, no discovery.
        assert out["protocolVersion"] == "2026-07-28"
    else:
        assert out["protocolVersion"] == "2025-11-25"
        assert out["serverInfo"] == SERVER_INFO
        assert out["serverCapabilities"] == {
            "logging": {},
            "tools": {"listChanged": True},
            "prompts": {"listChanged": True},
            "resources": {"subscribe": True, "listChanged": True},
        }


def test_tools_all_pages(run: dict[str, Any]) -> None:
    tools = ok(run, "tools")
    assert [t["name"] for t in tools["tools"]] == ALL_TOOLS
    assert tools["pages"] == 3


def test_tools_first_page(run: dict[str, Any]) -> None:
    page = ok(run, "tools_page1")
    assert [t["name"] for t in page["tools"]] == ALL_TOOLS[:10]
    assert isinstance(page["nextCursor"], str) and page["nextCursor"]
    if modern(run):
        assert page["resultType"] == "complete"
        assert page["ttlMs"] == 60_000
        assert page["cacheScope"] == "private"
        assert page["_meta"] == SERVER_INFO_META
    else:
        assert not {"resultType", "ttlMs", "cacheScope"} & page.keys()


def test_output_schemas_listed(run: dict[str, Any]) -> None:
    tools = {t["name"]: t for t in ok(run, "tools")["tools"]}
    assert tools["add"]["outputSchema"] == {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    }
    weather = tools["weather"]["outputSchema"]
    assert weather["type"] == "object"
    assert set(weather["properties"]) == set(WEATHER)
    assert weather["properties"]["temperature_c"]["type"] == "number"
    assert sorted(weather["required"]) == sorted(WEATHER)
    assert "outputSchema" not in tools["echo"]
    assert tools["echo"]["inputSchema"]["properties"] == {"text": {"type": "string"}}


def test_echo(run: dict[str, Any]) -> None:
    result = ok(run, "echo")
    assert result["content"] == [{"type": "text", "text": "hi"}]
    assert "structuredContent" not in result
    assert not result.get("isError")
    if modern(run):
        assert result["resultType"] == "complete"
        assert result["_meta"] == SERVER_INFO_META
    else:
        assert "resultType" not in result


def test_add_structured(run: dict[str, Any]) -> None:
    result = ok(run, "add")
    assert result["structuredContent"] == {"result": 5}
    assert json.loads(result["content"][0]["text"]) == {"result": 5}


def test_weather_structured(run: dict[str, Any]) -> None:
    result = ok(run, "weather")
    assert result["structuredContent"] == WEATHER
    assert json.loads(result["content"][0]["text"]) == WEATHER


def test_fail_is_error(run: dict[str, Any]) -> None:
    result = ok(run, "fail")
    assert result["isError"] is True
    assert result["content"] == [{"type": "text", "text": "nope"}]


def test_bad_arguments_reach_the_caller_as_a_result(run: dict[str, Any]) -> None:
    """tools.mdx "Error Handling" (SEP-1303): the SDK hands the model an isError result it can
    correct from, rather than raising on a -32602."""
    result = ok(run, "bad_arguments")
    assert result["isError"] is True
    assert result["content"] == [
        {
            "type": "text",
            "text": "Invalid arguments for tool 'add': a: expected an integer, got \"two\"; "
            "b: required field missing; c: unexpected argument",
        }
    ]
    assert "structuredContent" not in result


def test_unknown_tool_is_still_a_protocol_error(run: dict[str, Any]) -> None:
    assert run["unknown_tool"]["error"]["code"] == -32602
    assert run["unknown_tool"]["error"]["message"] == "Unknown tool: nope"


def test_prompts(run: dict[str, Any]) -> None:
    prompts = ok(run, "prompts")
    assert prompts["pages"] == 1
    assert prompts["prompts"] == [
        {
            "name": "greet",
            "description": "Greet someone by name.",
            "arguments": [{"name": "name", "required": True}],
        },
        {
            "name": "compare",
            "description": "Compare two things.",
            "arguments": [{"name": "left", "required": True}, {"name": "right", "required": True}],
        },
    ]


def test_get_prompt(run: dict[str, Any]) -> None:
    result = ok(run, "greet")
    assert result["messages"] == [{"role": "user", "content": {"type": "text", "text": "Hello, Ada!"}}]


def test_resources_and_templates(run: dict[str, Any]) -> None:
    resources = ok(run, "resources")
    assert resources["resources"] == [
        {"name": "hello", "uri": "res://hello", "description": "A static greeting.", "mimeType": "text/plain"}
    ]
    templates = ok(run, "templates")
    assert templates["resourceTemplates"] == [
        {
            "name": "item",
            "uriTemplate": "res://items/{id}",
            "description": "An item by id.",
            "mimeType": "text/plain",
        }
    ]
    if modern(run):
        for listing in (resources, templates):
            assert (listing["ttlMs"], listing["cacheScope"], listing["resultType"]) == (
                60_000,
                "private",
                "complete",
            )


def test_read_resources(run: dict[str, Any]) -> None:
    hello = ok(run, "hello")
    assert hello["contents"] == [{"uri": "res://hello", "mimeType": "text/plain", "text": "Hello, world!"}]
    item = ok(run, "item")
    assert item["contents"] == [{"uri": "res://items/42", "mimeType": "text/plain", "text": "item 42"}]
    if modern(run):
        assert (hello["ttlMs"], hello["cacheScope"], hello["resultType"]) == (0, "private", "complete")
    else:
        assert not {"resultType", "ttlMs", "cacheScope"} & hello.keys()


def test_bad_cursor(run: dict[str, Any]) -> None:
    assert run["bad_cursor"]["error"]["code"] == -32602


def test_unknown_resource(run: dict[str, Any]) -> None:
    error = run["missing"]["error"]
    # -32002 is the handshake era's code; the stateless era reserves it and uses -32602.
    assert error["code"] == (-32602 if modern(run) else -32002)
    assert error["data"] == {"uri": "res://nope"}


def test_ping(run: dict[str, Any]) -> None:
    if modern(run):
        # 2026-07-28 removed ping: our server answers method-not-found.
        assert run["ping"]["error"]["code"] == -32601
    else:
        assert run["ping"] == {}
