"""Our client against server-everything (the TypeScript SDK's reference server), over stdio and
over Streamable HTTP (bound to 127.0.0.1 by the ``loopback-only.cjs`` preload).

server-everything speaks handshake-era versions only (up to 2025-11-25), so ``era="auto"`` must
fall back from the ``server/discover`` probe to ``initialize``. It sends
``notifications/tools/list_changed`` right after ``initialize``; the client must shrug it off.
Over HTTP it keeps sessions (``Mcp-Session-Id``). ``trigger-long-running-operation`` streams
``notifications/progress`` before its result (over HTTP, on the POST's SSE response);
``on_progress`` must see them in order, before the result. One connection per transport runs
every step; each test then checks one step's outcome.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
from _http_peer import http_peer

from backchannel.client import Client
from backchannel.protocol.events import ProgressReceived
from backchannel.testing import free_port
from backchannel.types.content import TextContent
from peers.paths import EVERYTHING_STDIO_CMD, TESTS_DIR, everything_http_cmd, have_npm_peers

pytestmark = [pytest.mark.interop, pytest.mark.usefixtures("transport")]

if not have_npm_peers():
    pytest.skip("npm peers not installed (run tests/peers/install.sh)", allow_module_level=True)

TIMEOUT = 60
PROBE_TIMEOUT = 3.0
STATIC_DOCS = "demo://resource/static/document/"
LONG_RUNNING = "trigger-long-running-operation"
STEPS = 4


@pytest.fixture(scope="module")
def url(transport: str) -> Iterator[str | None]:
    """The server's endpoint over HTTP (started here); None over stdio (the client spawns it)."""
    if transport == "stdio":
        yield None
        return
    port = free_port()
    with http_peer(everything_http_cmd(port), port, cwd=TESTS_DIR) as endpoint:
        yield endpoint


def _client(url: str | None) -> Client:
    options: dict[str, Any] = {"era": "auto", "probe_timeout": PROBE_TIMEOUT, "request_timeout": 20}
    if url is None:
        command, *args = EVERYTHING_STDIO_CMD
        return Client.stdio(command, args, cwd=TESTS_DIR, **options)
    return Client.http(url, **options)


async def _session(url: str | None) -> dict[str, Any]:
    outcomes: dict[str, Any] = {}

    async def step(key: str, call: Callable[[], Awaitable[Any]]) -> None:
        try:
            outcomes[key] = await call()
        except Exception as exc:
            outcomes[key] = exc

    async def resource_pages() -> list[list[str]]:
        pages, cursor = [], None
        while True:
            page = await client.list_resources_page(cursor)
            pages.append([r.uri for r in page.resources])
            cursor = page.next_cursor
            if cursor is None:
                return pages

    async def long_running() -> list[Any]:
        """Progress values and the result, in the order they reached us."""
        events: list[Any] = []

        def on_progress(progress: ProgressReceived) -> None:
            events.append(("progress", progress.progress, progress.total))

        result = await client.call_tool(LONG_RUNNING, {"duration": 1, "steps": STEPS}, on_progress=on_progress)
        events.append(("result", result))
        # A round trip, so that a progress notification read late would be in ``events`` after the
        # result: the answer to the ping comes after whatever the server wrote before it (on stdio,
        # the one pipe), and our client has dispatched all it read before that answer.
        await client.ping()
        return events

    client = _client(url)
    started = time.monotonic()
    async with asyncio.timeout(TIMEOUT), client:
        outcomes["connect"] = {
            "seconds": time.monotonic() - started,
            "era": client.era,
            "protocol_version": client.protocol_version,
            "server_info": client.server_info,
            "server_capabilities": client.server_capabilities,
            "instructions": client.instructions,
            "discover_result": client.discover_result,
        }
        await step("tools", client.list_tools)
        await step("echo", lambda: client.call_tool("echo", {"message": "hi"}))
        await step("sum", lambda: client.call_tool("get-sum", {"a": 2, "b": 3}))
        await step("prompts", client.list_prompts)
        await step("resources", client.list_resources)
        await step("resource_pages", resource_pages)
        await step("templates", client.list_resource_templates)
        await step("read", lambda: client.read_resource(STATIC_DOCS + "architecture.md"))
        await step("long_running", long_running)
        await step("ping", client.ping)
    return outcomes


@pytest.fixture(scope="module")
def run(url: str | None) -> dict[str, Any]:
    return asyncio.run(_session(url))


def ok(run: dict[str, Any], key: str) -> Any:
    value = run[key]
    if isinstance(value, BaseException):
        raise AssertionError(f"{key} failed: {value!r}") from value
    return value


def text_of(result: Any) -> str:
    assert result.is_error is not True
    assert len(result.content) == 1 and isinstance(result.content[0], TextContent)
    text: str = result.content[0].text
    return text


def test_auto_falls_back_to_handshake(run: dict[str, Any]) -> None:
    connect = run["connect"]
    assert connect["era"] == "handshake"
    assert connect["protocol_version"] == "2025-11-25"
    assert connect["discover_result"] is None
    # The probe is refused (over HTTP: no session id), not left unanswered: no probe timeout.
    assert connect["seconds"] < PROBE_TIMEOUT


def test_discovery(run: dict[str, Any]) -> None:
    connect = run["connect"]
    assert connect["server_info"]["name"] == "mcp-servers/everything"
    assert connect["server_info"]["version"] == "2.0.0"
    capabilities = connect["server_capabilities"]
    assert capabilities["tools"] == {"listChanged": True}
    assert capabilities["prompts"] == {"listChanged": True}
    assert capabilities["resources"] == {"subscribe": True, "listChanged": True}
    assert "logging" in capabilities
    assert isinstance(connect["instructions"], str) and connect["instructions"]


def test_list_tools(run: dict[str, Any]) -> None:
    names = [t.name for t in ok(run, "tools")]
    assert {"echo", "get-sum", LONG_RUNNING} <= set(names)
    assert len(names) == len(set(names))
    tools = {t.name: t for t in ok(run, "tools")}
    assert {"a", "b"} <= set(tools["get-sum"].input_schema["properties"])
    assert {"duration", "steps"} <= set(tools[LONG_RUNNING].input_schema["properties"])


def test_echo(run: dict[str, Any]) -> None:
    assert text_of(ok(run, "echo")) == "Echo: hi"


def test_get_sum(run: dict[str, Any]) -> None:
    text = text_of(ok(run, "sum"))
    assert "5" in text
    assert text == "The sum of 2 and 3 is 5."


def test_list_prompts(run: dict[str, Any]) -> None:
    names = [p.name for p in ok(run, "prompts")]
    assert {"simple-prompt", "args-prompt"} <= set(names)


def test_list_resources_all_pages(run: dict[str, Any]) -> None:
    uris = [r.uri for r in ok(run, "resources")]
    assert STATIC_DOCS + "architecture.md" in uris
    assert len(uris) == len(set(uris))
    pages = ok(run, "resource_pages")
    assert [uri for page in pages for uri in page] == uris
    templates = [t.uri_template for t in ok(run, "templates")]
    assert "demo://resource/dynamic/text/{resourceId}" in templates


def test_read_resource(run: dict[str, Any]) -> None:
    contents = ok(run, "read").contents
    assert len(contents) == 1
    assert contents[0].uri == STATIC_DOCS + "architecture.md"
    assert contents[0].mime_type == "text/markdown"
    assert contents[0].text.startswith("# Everything Server")


def test_long_running_progress(run: dict[str, Any]) -> None:
    events = ok(run, "long_running")
    kinds = [event[0] for event in events]
    assert kinds == ["progress"] * (len(events) - 1) + ["result"], kinds
    values = [value for _, value, _ in events[:-1]]
    assert values, "no progress notification arrived"
    assert all(a < b for a, b in itertools.pairwise(values)), values
    assert values[-1] <= STEPS
    assert all(total == STEPS for _, _, total in events[:-1])
    assert text_of(events[-1][1]).startswith("Long running operation completed.")


def test_ping(run: dict[str, Any]) -> None:
    assert ok(run, "ping") is None
