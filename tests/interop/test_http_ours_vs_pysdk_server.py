"""Our ``Client.http`` against the official Python SDK's server (mcp 2.3.0) over Streamable HTTP.

``pysdk_server.py --page-size 10 --http PORT`` runs ``MCPServer.run("streamable-http")`` on
127.0.0.1. It serves both eras at one endpoint (the ``MCP-Protocol-Version`` header picks),
so ``era="auto"`` must detect the stateless era, ``era="legacy"`` must do the handshake and
``era="modern"`` must insist on the stateless era. The checks are those of the stdio test
(``test_ours_vs_pysdk_server.py``). One connection per era choice runs every step.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _http_peer import free_port, http_peer

from backchannel.client import Client
from backchannel.types.content import TextContent
from peers.paths import PYSDK_SERVER, have_pysdk

pytestmark = pytest.mark.interop

if not have_pysdk():
    pytest.skip("the official Python SDK (mcp==2.3.0) is not installed", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
FILLERS = [f"t{i:02d}" for i in range(25)]
ALL_TOOLS = ["echo", "add", "weather", "fail", *FILLERS]
SERVER_INFO = {"name": "pysdk-peer", "version": "2.3.0-peer"}
WEATHER = {"city": "Oslo", "temperature_c": 21.5, "conditions": "sunny", "humidity_pct": 40}
# era choice -> (client.era, client.protocol_version)
EXPECTED_ERA = {
    "auto": ("modern", "2026-07-28"),
    "legacy": ("legacy", "2025-11-25"),
    "modern": ("modern", "2026-07-28"),
}
TIMEOUT = 60


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    port = free_port()
    argv = [sys.executable, str(PYSDK_SERVER), "--page-size", "10", "--http", str(port)]
    with http_peer(argv, port, cwd=ROOT) as endpoint:
        yield endpoint


async def _session(url: str, era: str) -> dict[str, Any]:
    """Connect with ``era``, run every step, return each step's value or exception."""
    outcomes: dict[str, Any] = {}

    async def step(key: str, call: Callable[[], Awaitable[Any]]) -> None:
        try:
            outcomes[key] = await call()
        except Exception as exc:
            outcomes[key] = exc

    client = Client.http(url, era=era, request_timeout=20)
    async with asyncio.timeout(TIMEOUT), client:
        c = client
        outcomes["connect"] = {
            "era": c.era,
            "protocol_version": c.protocol_version,
            "server_info": c.server_info,
            "server_capabilities": c.server_capabilities,
        }
        await step("tools", c.list_tools)
        await step("tools_page1", c.list_tools_page)
        await step("echo", lambda: c.call_tool("echo", {"text": "hi"}))
        await step("add", lambda: c.call_tool("add", {"a": 2, "b": 3}))
        await step("weather", lambda: c.call_tool("weather", {"city": "Oslo"}))
        await step("fail", lambda: c.call_tool("fail", {"message": "nope"}))
        await step("prompts", c.list_prompts)
        await step("greet", lambda: c.get_prompt("greet", {"name": "Ada"}))
        await step("resources", c.list_resources)
        await step("templates", c.list_resource_templates)
        await step("hello", lambda: c.read_resource("res://hello"))
        await step("item", lambda: c.read_resource("res://items/42"))
        await step("ping", c.ping)
    return outcomes


@pytest.fixture(scope="module", params=list(EXPECTED_ERA))
def run(request: pytest.FixtureRequest, url: str) -> dict[str, Any]:
    return {"choice": request.param, **asyncio.run(_session(url, request.param))}


def ok(run: dict[str, Any], key: str) -> Any:
    value = run[key]
    if isinstance(value, BaseException):
        raise AssertionError(f"{key} failed: {value!r}") from value
    return value


def test_era(run: dict[str, Any]) -> None:
    connect = run["connect"]
    assert (connect["era"], connect["protocol_version"]) == EXPECTED_ERA[run["choice"]]
    assert connect["server_info"] == SERVER_INFO
    assert {"tools", "prompts", "resources"} <= connect["server_capabilities"].keys()


def test_tools_all_pages(run: dict[str, Any]) -> None:
    assert [t.name for t in ok(run, "tools")] == ALL_TOOLS


def test_tools_first_page(run: dict[str, Any]) -> None:
    page = ok(run, "tools_page1")
    assert [t.name for t in page.tools] == ALL_TOOLS[:10]
    assert page.next_cursor


def test_output_schemas(run: dict[str, Any]) -> None:
    tools = {t.name: t for t in ok(run, "tools")}
    assert tools["add"].output_schema["properties"]["result"]["type"] == "integer"
    assert set(tools["weather"].output_schema["properties"]) == set(WEATHER)
    assert tools["echo"].output_schema is None


def test_echo(run: dict[str, Any]) -> None:
    result = ok(run, "echo")
    assert [(type(block), block.text) for block in result.content] == [(TextContent, "hi")]
    assert not result.is_error


def test_add_structured(run: dict[str, Any]) -> None:
    result = ok(run, "add")
    assert result.structured_content == {"result": 5}
    assert not result.is_error


def test_weather_structured(run: dict[str, Any]) -> None:
    assert ok(run, "weather").structured_content == WEATHER


def test_fail_is_error(run: dict[str, Any]) -> None:
    result = ok(run, "fail")
    assert result.is_error is True
    assert "nope" in result.content[0].text


def test_prompts(run: dict[str, Any]) -> None:
    prompts = ok(run, "prompts")
    assert [(p.name, [a.name for a in p.arguments or []]) for p in prompts] == [
        ("greet", ["name"]),
        ("compare", ["left", "right"]),
    ]
    messages = ok(run, "greet").messages
    assert [(m.role, m.content.text) for m in messages] == [("user", "Hello, Ada!")]


def test_resources(run: dict[str, Any]) -> None:
    assert [(r.uri, r.name, r.mime_type) for r in ok(run, "resources")] == [("res://hello", "hello", "text/plain")]
    assert [(t.uri_template, t.name) for t in ok(run, "templates")] == [("res://items/{id}", "item")]


def test_read_resources(run: dict[str, Any]) -> None:
    hello = ok(run, "hello").contents
    assert [(c.uri, c.text) for c in hello] == [("res://hello", "Hello, world!")]
    item = ok(run, "item").contents
    assert [(c.uri, c.text) for c in item] == [("res://items/42", "item 42")]


def test_ping(run: dict[str, Any]) -> None:
    """``ping`` in the handshake era; ``server/discover`` in the stateless era (which has no ping)."""
    assert ok(run, "ping") is None
