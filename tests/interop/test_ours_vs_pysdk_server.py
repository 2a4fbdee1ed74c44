"""Our client against the official Python SDK's server (mcp 2.3.0), over stdio and Streamable
HTTP, in every era choice.

mcp 2.3.0 serves both eras on one stdio server, and over HTTP at one endpoint
(``pysdk_server.py --http PORT`` runs ``MCPServer.run("streamable-http")`` on 127.0.0.1; the
``MCP-Protocol-Version`` header picks the era), so ``era="auto"`` must detect the stateless
era; ``era="handshake"`` must do the handshake; ``era="stateless"`` must insist on the stateless era
(and the old spellings ``"legacy"``/``"modern"`` must do the same).
One connection per transport and era choice runs every step; each test then checks one step's
outcome.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _http_peer import http_peer

from backchannel.client import Client
from backchannel.testing import free_port
from backchannel.types.content import TextContent
from peers.paths import PYSDK_SERVER, have_pysdk

pytestmark = [pytest.mark.interop, pytest.mark.usefixtures("transport")]

if not have_pysdk():
    pytest.skip("the official Python SDK (mcp==2.3.0) is not installed", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
FILLERS = [f"t{i:02d}" for i in range(25)]
ALL_TOOLS = ["echo", "add", "weather", "fail", *FILLERS]
SERVER_INFO = {"name": "pysdk-peer", "version": "2.3.0-peer"}
WEATHER = {"city": "Oslo", "temperature_c": 21.5, "conditions": "sunny", "humidity_pct": 40}
# era choice -> (client.era, client.protocol_version)
EXPECTED_ERA = {
    "auto": ("stateless", "2026-07-28"),
    "handshake": ("handshake", "2025-11-25"),
    "stateless": ("stateless", "2026-07-28"),
    # the old spellings, still accepted by ``Client``
    "legacy": ("handshake", "2025-11-25"),
    "modern": ("stateless", "2026-07-28"),
}
TIMEOUT = 60
PEER_SERVER = [str(PYSDK_SERVER), "--page-size", "10"]


@pytest.fixture(scope="module")
def url(transport: str) -> Iterator[str | None]:
    """The server's endpoint over HTTP (started here); None over stdio (the client spawns it)."""
    if transport == "stdio":
        yield None
        return
    port = free_port()
    with http_peer([sys.executable, *PEER_SERVER, "--http", str(port)], port, cwd=ROOT) as endpoint:
        yield endpoint


def _client(url: str | None, era: str) -> Client:
    if url is None:
        return Client.stdio(sys.executable, PEER_SERVER, cwd=ROOT, era=era, request_timeout=20)
    return Client.http(url, era=era, request_timeout=20)


async def _session(url: str | None, era: str) -> dict[str, Any]:
    """Connect with ``era``, run every step, return each step's value or exception."""
    outcomes: dict[str, Any] = {}

    async def step(key: str, call: Callable[[], Awaitable[Any]]) -> None:
        try:
            outcomes[key] = await call()
        except Exception as exc:
            outcomes[key] = exc

    client = _client(url, era)
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
def run(request: pytest.FixtureRequest, url: str | None) -> dict[str, Any]:
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
    """``Client.ping`` works in both eras: ``ping`` in the handshake era; 2026-07-28 has no
    ``ping``, so the client sends ``server/discover``, which every stateless-era server must
    answer."""
    assert ok(run, "ping") is None
