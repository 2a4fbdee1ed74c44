"""Our client against servers that speak only the deprecated HTTP+SSE transport (2024-11-05):
the official Python SDK's (``MCPServer.run("sse")``, mcp 2.3.0) and server-everything's ``sse``
mode (the TypeScript SDK's ``SSEServerTransport``, bound to 127.0.0.1 by ``loopback-only.cjs``).

``Client.http(url)`` is given the ``/sse`` URL a person would copy from the server's docs. As the
backwards-compatibility guide says, the POST of ``initialize`` there is refused (405 from the
SDK's Starlette route, 404 from server-everything's express app), the client GETs the URL, the
stream names its endpoint, and everything goes that way from then on. ``era="auto"`` first
probes with ``server/discover``, which is refused the same way, so the handshake era follows.
Each peer serves one module-scoped session; each test checks one step. Never called on
server-everything: ``get-env`` and ``gzip-file-as-resource``.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _old_wire import run

from backchannel import Client
from backchannel.protocol.events import ProgressReceived
from backchannel.testing import free_port, running_process
from backchannel.transports.http.client import HttpClientTransport
from backchannel.transports.http.legacy_sse_client import LegacySseClientTransport
from backchannel.types.capabilities import extension_settings
from backchannel.types.errors import LocalProtocolError, RequestError
from peers.paths import EVERYTHING_ENTRY, LOOPBACK_ONLY, NODE22, TESTS_DIR, have_npm_peers, have_pysdk

pytestmark = pytest.mark.interop

PYSDK_SSE_SERVER = Path(__file__).resolve().parent / "pysdk_sse_server.py"
EXTENSION = "com.example/old-friends"
OPTIONS: dict[str, Any] = {"probe_timeout": 5.0, "request_timeout": 20.0}


async def _attempt(key: str, out: dict[str, Any], call: Any) -> None:
    try:
        out[key] = await call()
    except Exception as exc:
        out[key] = exc


# ------------------------------------------------------------------ the official Python SDK


@pytest.fixture(scope="module")
def pysdk_url() -> Iterator[str]:
    if not have_pysdk():
        pytest.skip("the official Python SDK (mcp==2.3.0) is not installed")
    port = free_port()
    with running_process([sys.executable, str(PYSDK_SSE_SERVER), str(port)], port=port):
        yield f"http://127.0.0.1:{port}/sse"


@pytest.fixture(scope="module")
def pysdk(pysdk_url: str) -> dict[str, Any]:
    async def body() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with Client.http(pysdk_url, **OPTIONS) as client:
            assert isinstance(client.transport, HttpClientTransport)
            out["legacy"] = client.transport.legacy is not None
            out["era"] = (client.era, client.protocol_version)
            out["server"] = client.server_info
            out["capabilities"] = client.server_capabilities
            await _attempt("tools", out, client.list_tools)
            await _attempt("echo", out, lambda: client.call_tool("echo", {"text": "hi"}))
            await _attempt("add", out, lambda: client.call_tool("add", {"a": 2, "b": 3}))
            await _attempt("hello", out, lambda: client.read_resource("res://hello"))
            await _attempt("greet", out, lambda: client.get_prompt("greet", {"name": "Ada"}))
            await _attempt("set_level", out, lambda: client.set_logging_level("debug"))
            await _attempt("ping", out, client.ping)
        without = Client(HttpClientTransport(pysdk_url, legacy_fallback=False), era="handshake", **OPTIONS)
        await _attempt("without_fallback", out, without.__aenter__)
        await without.aclose()
        async with Client(LegacySseClientTransport(pysdk_url), **OPTIONS) as direct:
            out["direct_era"] = direct.era
            out["direct_extension"] = extension_settings(direct.server_capabilities, EXTENSION)
            await _attempt("direct_echo", out, lambda: direct.call_tool("echo", {"text": "direct"}))
        return out

    return dict(run(body))


def test_client_http_falls_back_to_the_old_transport(pysdk: dict[str, Any]) -> None:
    assert pysdk["legacy"] is True
    assert pysdk["era"] == ("handshake", "2025-11-25")
    assert pysdk["server"]["name"] == "pysdk-peer"


def test_every_kind_of_request_works_over_it(pysdk: dict[str, Any]) -> None:
    assert len(pysdk["tools"]) == 29
    assert [block.text for block in pysdk["echo"].content] == ["hi"]
    assert pysdk["add"].structured_content == {"result": 5}
    assert [item.text for item in pysdk["hello"].contents] == ["Hello, world!"]
    assert [message.content.text for message in pysdk["greet"].messages] == ["Hello, Ada!"]
    assert pysdk["ping"] is None


def test_set_logging_level_refuses_a_server_without_logging_before_sending(pysdk: dict[str, Any]) -> None:
    assert "logging" not in pysdk["capabilities"]
    assert isinstance(pysdk["set_level"], LocalProtocolError)
    assert str(pysdk["set_level"]) == "pysdk-peer declares no logging capability: it sends no logs"


def test_without_the_fallback_the_refusal_stands(pysdk: dict[str, Any]) -> None:
    refused = pysdk["without_fallback"]
    assert isinstance(refused, RequestError)
    assert "HTTP 405" in refused.message


def test_the_old_transport_can_be_chosen_outright(pysdk: dict[str, Any]) -> None:
    # The SDK's server answers server/discover on the old stream too, so era="auto" settles on the
    # stateless era, where the SDK declares its extensions (SEP-2133) and we read them.
    assert pysdk["direct_era"] == "stateless"
    assert pysdk["direct_extension"] == {"colour": "blue"}
    assert [block.text for block in pysdk["direct_echo"].content] == ["direct"]


def test_no_extensions_in_the_handshake_era(pysdk: dict[str, Any]) -> None:
    # The SDK leaves ``extensions`` out of a handshake-era initialize result, as we do.
    assert extension_settings(pysdk["capabilities"], EXTENSION) is None


# ------------------------------------------------------------------ server-everything


@pytest.fixture(scope="module")
def everything_url() -> Iterator[str]:
    if not have_npm_peers():
        pytest.skip("npm peers not installed (run tests/peers/install.sh)")
    port = free_port()
    env = shutil.which("env") or "/usr/bin/env"
    argv = [env, f"PORT={port}", str(NODE22), "--require", str(LOOPBACK_ONLY), str(EVERYTHING_ENTRY), "sse"]
    with running_process(argv, port=port, cwd=TESTS_DIR):
        yield f"http://127.0.0.1:{port}/sse"


@pytest.fixture(scope="module")
def everything(everything_url: str) -> dict[str, Any]:
    async def body() -> dict[str, Any]:
        out: dict[str, Any] = {"progress": [], "logs": []}

        def on_progress(event: ProgressReceived) -> None:
            out["progress"].append((event.progress, event.total))

        async with Client.http(everything_url, on_log=out["logs"].append, **OPTIONS) as client:
            assert isinstance(client.transport, HttpClientTransport)
            out["legacy"] = client.transport.legacy is not None
            out["era"] = client.era
            out["server"] = client.server_info
            await _attempt("tools", out, client.list_tools)
            await _attempt("echo", out, lambda: client.call_tool("echo", {"message": "hi"}))
            await _attempt("sum", out, lambda: client.call_tool("get-sum", {"a": 2, "b": 3}))
            long = {"duration": 1, "steps": 4}
            await _attempt(
                "long", out, lambda: client.call_tool("trigger-long-running-operation", long, on_progress=on_progress)
            )
            await _attempt("set_level", out, lambda: client.set_logging_level("debug"))
            await _attempt("ping", out, client.ping)
        return out

    return dict(run(body))


def test_server_everything_sse_mode_is_reached_through_the_fallback(everything: dict[str, Any]) -> None:
    assert everything["legacy"] is True
    assert everything["era"] == "handshake"
    assert everything["server"]["name"] == "mcp-servers/everything"
    names = {tool.name for tool in everything["tools"]}
    assert {"echo", "get-sum", "trigger-long-running-operation"} <= names


def test_server_everything_answers_over_it(everything: dict[str, Any]) -> None:
    assert [block.text for block in everything["echo"].content] == ["Echo: hi"]
    assert [block.text for block in everything["sum"].content] == ["The sum of 2 and 3 is 5."]
    assert everything["set_level"] is None
    assert everything["ping"] is None


def test_progress_arrives_in_order_over_the_old_stream(everything: dict[str, Any]) -> None:
    assert not isinstance(everything["long"], Exception), everything["long"]
    assert everything["progress"] == [(1, 4), (2, 4), (3, 4), (4, 4)]
