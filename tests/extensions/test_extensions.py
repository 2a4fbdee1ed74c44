"""Extension declarations (SEP-2133), on both sides, read on the wire.

2026-07-28 ``basic/versioning.mdx`` §Extension Negotiation: "Extensions are advertised in the
``extensions`` field of capabilities, which is a map of extension identifiers to per-extension
settings objects"; identifiers "MUST follow the ``_meta`` key naming rules, with a mandatory
prefix". The field is in the 2026-07-28 schema only (``ClientCapabilities.extensions``,
``ServerCapabilities.extensions``), so it rides where capabilities travel in that revision: the
server's ``server/discover`` result, and every request's
``_meta["io.modelcontextprotocol/clientCapabilities"]``. A handshake-era ``initialize`` result
leaves it out (so does the official Python SDK's, checked in ``tests/legacy_sse``).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from backchannel import Client, Server
from backchannel.server import Context
from backchannel.testing import Tap, connected, serve_on_loopback
from backchannel.types import meta as M
from backchannel.types.capabilities import extension_settings, require_extension
from backchannel.types.errors import MissingCapability, RequestError
from peers.paths import have_pysdk

UI = "com.example/ui"
UI_SETTINGS = {"mimeTypes": ["text/html;profile=mcp-app"]}
NEEDED = "com.example/needed"
TIMEOUT = 30


def run(body: Any) -> Any:
    async def bounded() -> Any:
        async with asyncio.timeout(TIMEOUT):
            return await body()

    return asyncio.run(bounded())


def _server(**options: Any) -> Server:
    server = Server("ext", **options)

    @server.tool()
    def seen(ctx: Context) -> dict[str, Any]:
        """What this request's client declared of the UI extension."""
        return {"ui": extension_settings(ctx.client_capabilities, UI)}

    @server.tool()
    def needs(ctx: Context) -> str:
        require_extension(ctx.client_capabilities, NEEDED)
        return "served"

    return server


def _answers(tap: Tap, method: str) -> list[dict[str, Any]]:
    ids = [m["id"] for m in tap.requests_received(method)]
    return [answer for i in ids for answer in tap.responses_written(i)]


def test_the_server_declares_its_extensions_in_server_discover_only() -> None:
    server = _server(extensions={UI: UI_SETTINGS})

    async def body() -> tuple[list[dict[str, Any]], list[dict[str, Any]], Any]:
        stateless, handshake = Tap(), Tap()
        async with connected(server, "stateless", wrap_server=stateless.around) as client:
            read = extension_settings(client.server_capabilities, UI)
        async with connected(server, "handshake", wrap_server=handshake.around):
            pass
        return _answers(stateless, "server/discover"), _answers(handshake, "initialize"), read

    discovered, initialized, read = run(body)
    assert discovered[0]["result"]["capabilities"]["extensions"] == {UI: UI_SETTINGS}
    assert read == UI_SETTINGS  # and our client reads them back
    assert "extensions" not in initialized[0]["result"]["capabilities"]  # the 2025-11-25 schema has none


def test_an_extension_declared_later_is_in_later_discover_results() -> None:
    server = _server()

    async def body() -> list[Any]:
        seen = []
        for _ in range(2):
            async with connected(server, "stateless") as client:
                seen.append(client.server_capabilities.get("extensions"))
            server.registry.declare_extension("com.example/later")
        return seen

    assert run(body) == [None, {"com.example/later": {}}]


def test_the_client_declares_its_extensions_on_every_stateless_request() -> None:
    async def body() -> tuple[Tap, dict[str, Any]]:
        tap = Tap()
        async with connected(_server(), "stateless", wrap_server=tap.around, extensions={UI: UI_SETTINGS}) as client:
            result = await client.call_tool("seen")
        assert result.structured_content is not None
        return tap, result.structured_content

    tap, seen = run(body)
    requests = [m for m in tap.received if "method" in m and "id" in m]
    assert [m["method"] for m in requests] == ["server/discover", "tools/call"]
    for request in requests:
        declared = request["params"]["_meta"][M.CLIENT_CAPABILITIES]["extensions"]
        assert declared[UI] == UI_SETTINGS
    assert seen == {"ui": UI_SETTINGS}  # the server reads them per request


def test_a_request_that_needs_an_undeclared_extension_is_refused_with_32021() -> None:
    async def body() -> tuple[list[dict[str, Any]], str]:
        tap = Tap()
        async with connected(_server(), "stateless", wrap_server=tap.around) as client:
            with pytest.raises(RequestError) as refused:
                await client.call_tool("needs")
        async with connected(_server(), "stateless", extensions={NEEDED: {}}) as client:
            served = await client.call_tool("needs")
        assert refused.value.code == -32021
        return _answers(tap, "tools/call"), served.content[0].text  # type: ignore[union-attr]

    answers, served = run(body)
    assert answers[0]["error"]["data"] == {"requiredCapabilities": {"extensions": {NEEDED: {}}}}
    assert served == "served"


@pytest.mark.parametrize(
    "identifier",
    ["tasks", "io.modelcontextprotocol/", "/tasks", "-bad.example/x", "com.example/x-", "com..example/x", 42],
)
def test_identifiers_must_follow_the_meta_key_rules(identifier: Any) -> None:
    with pytest.raises(ValueError, match="not an extension identifier"):
        Server("x", extensions={identifier: {}})
    with pytest.raises(ValueError, match="not an extension identifier"):
        Client(Tap(), extensions={identifier: {}})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not an extension identifier"):
        Server("x").registry.declare_extension(identifier)


def test_settings_must_be_an_object() -> None:
    with pytest.raises(ValueError, match="must be a JSON object"):
        Server("x", extensions={UI: ["text/html"]})  # type: ignore[dict-item]


def test_reading_tolerates_what_a_peer_sends() -> None:
    assert extension_settings(None, UI) is None
    assert extension_settings({"extensions": {UI: {}}}, UI) == {}
    assert extension_settings({"extensions": {UI: "yes"}}, UI) is None  # not an object: not a declaration
    assert extension_settings({"extensions": []}, UI) is None
    with pytest.raises(MissingCapability):
        require_extension({"extensions": {UI: {}}}, NEEDED)


@pytest.mark.interop
@pytest.mark.skipif(not have_pysdk(), reason="the official Python SDK (mcp==2.3.0) is not installed")
def test_the_official_sdk_client_and_our_server_read_each_other_s_extensions() -> None:
    from mcp.client.client import Client as SdkClient
    from mcp.client.extension import advertise

    server = _server(extensions={"com.example/server-side": {"level": 2}})

    async def body() -> tuple[Any, Any, Any]:
        async with serve_on_loopback(server.http_app()) as base:
            sdk = SdkClient(f"{base}/mcp", mode="auto", extensions=[advertise(UI, UI_SETTINGS)])
            async with sdk:
                declared = sdk.server_capabilities.extensions if sdk.server_capabilities else None
                result = await sdk.call_tool("seen", {})
                version = sdk.protocol_version
        return version, declared, result.structured_content

    version, declared, seen = run(body)
    assert version == "2026-07-28"  # the SDK probed server/discover and stayed in the stateless era
    assert declared == {"com.example/server-side": {"level": 2}}
    assert seen == {"ui": UI_SETTINGS}
