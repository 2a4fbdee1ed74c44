"""What the conformance suite found the bridge dropping (``run.py --through-proxy``), each on the wire.

- SEP-2243: a stateless-era ``tools/call`` of a tool with ``x-mcp-header`` arguments must carry
  them as ``Mcp-Param-*`` headers on every HTTP hop, and a server that reads the body must refuse
  headers that disagree with it (2026-07-28 streamable-http.mdx, "Server Behavior for Custom
  Headers"): the proxy mirrors them upstream and checks them on the way in.
- MRTR: ``requestState`` is optional in a retry ("clients include ``inputResponses`` and, if
  provided by the server, ``requestState``", tools.mdx), so ``inputResponses`` with no state reach
  a stateless upstream as they are; and malformed ones are refused by the proxy itself, which a
  handshake-era upstream never shows them to ("Servers SHOULD validate that the data provided by
  the client is a valid InputResponses object", mrtr.mdx).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx2
import pytest

from backchannel import Client, Context, Server
from backchannel.bridge import Proxy, UpstreamSpec
from backchannel.framing import http as H
from backchannel.testing import Tap, connected, run, serve_on_loopback
from backchannel.types import meta as M
from backchannel.types.errors import HEADER_MISMATCH, INVALID_PARAMS, RequestError
from backchannel.types.versions import HANDSHAKE_VERSIONS, STATELESS_VERSIONS

BOUND = 60.0
REGION_SCHEMA = {
    "type": "object",
    "properties": {"region": {"type": "string", "x-mcp-header": "Region"}, "query": {"type": "string"}},
    "required": ["region", "query"],
}


@dataclass
class Name:
    name: str


def upstream(versions: tuple[str, ...]) -> Server:
    server = Server("gaps-upstream", "1.0.0", versions=versions)
    server.add_tool(lambda region, query: f"{region}:{query}", name="regional", input_schema=REGION_SCHEMA)

    @server.tool()
    async def ask(ctx: Context) -> str:
        """Ask a name (key ``user_name``, as the conformance fixture does)."""
        answer = await ctx.elicit("What is your name?", Name, key="user_name")
        return f"{answer.action}:{answer.data.name if answer.data else ''}"

    return server


@contextlib.asynccontextmanager
async def proxied_over_http(server: Server) -> AsyncIterator[str]:
    """``server`` on loopback HTTP, a ``Proxy`` to its URL on loopback HTTP; the proxy's URL."""
    async with serve_on_loopback(server.http_app()) as upstream_base:
        proxy = Proxy(UpstreamSpec(url=f"{upstream_base}/mcp"))
        try:
            async with serve_on_loopback(proxy.http_app()) as base:
                yield f"{base}/mcp"
        finally:
            await proxy.upstream.aclose()


def raw_call(arguments: dict[str, Any]) -> dict[str, Any]:
    meta = {M.PROTOCOL_VERSION: STATELESS_VERSIONS[-1], M.CLIENT_CAPABILITIES: {}, M.CLIENT_INFO: {"name": "raw"}}
    params = {"name": "regional", "arguments": arguments, "_meta": meta}
    return {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}


def test_x_mcp_header_arguments_cross_the_proxy_as_headers_and_a_mismatch_is_refused_there() -> None:
    async def body() -> None:
        async with proxied_over_http(upstream(tuple(STATELESS_VERSIONS))) as url:
            async with Client.http(url, era="stateless") as client:
                assert "regional" in [tool.name for tool in await client.list_tools()]
                result = await client.call_tool("regional", {"region": "eu-west1", "query": "q"})
                assert result.content[0].text == "eu-west1:q"  # type: ignore[union-attr]
            # A handshake-era client sends no such headers, and declares elicitation, so the proxy
            # calls upstream through another client of its own, one that has listed nothing:
            # the headers come from the tool as the upstream listed it to the first.
            async with Client.http(url, era="handshake", elicitation=lambda _: {"action": "decline"}) as host:
                result = await host.call_tool("regional", {"region": "eu-west2", "query": "r"})
                assert result.content[0].text == "eu-west2:r"  # type: ignore[union-attr]
            # Headers that disagree with the body: the proxy read the body, so the proxy refuses it
            # (upstream, it would have sent headers made from the body, which agree).
            message = raw_call({"region": "eu-west1", "query": "q"})
            headers = dict(H.request_headers(message, param_headers=H.x_mcp_headers(REGION_SCHEMA)))
            assert headers["Mcp-Param-Region"] == "eu-west1"
            headers.update({"Mcp-Param-Region": "us-east1", "accept": "application/json, text/event-stream"})
            async with httpx2.AsyncClient(timeout=10) as http:
                response = await http.post(url, json=message, headers=headers)
            assert response.status_code == 400
            assert response.json()["error"]["code"] == HEADER_MISMATCH

    run(body, BOUND)


def test_input_responses_sent_without_request_state_reach_a_stateless_upstream() -> None:
    asked: list[dict[str, Any]] = []

    def person(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"name": "Asked"}}

    async def body() -> None:
        tap = Tap()
        proxy = Proxy(UpstreamSpec(server=upstream(tuple(STATELESS_VERSIONS))))
        try:
            async with connected(proxy, "stateless", wrap_client=tap.around, elicitation=person) as client:
                answers = {"user_name": {"action": "accept", "content": {"name": "Alice"}}, "extra": {"action": "x"}}
                params = {"name": "ask", "arguments": {}, "inputResponses": answers}
                result = await client.request("tools/call", params)
                assert result["content"][0]["text"] == "accept:Alice"
        finally:
            await proxy.upstream.aclose()
        assert not asked  # answered ahead, so never asked
        assert not [m for m in tap.received if (m.get("result") or {}).get("resultType") == "input_required"]

    run(body, BOUND)


@pytest.mark.parametrize("given", [12345, None, {"user_name": "Alice"}], ids=["number", "null", "not-an-object"])
def test_malformed_input_responses_are_refused_by_the_proxy_before_a_handshake_era_upstream(given: Any) -> None:
    async def body() -> None:
        proxy = Proxy(UpstreamSpec(server=upstream(tuple(HANDSHAKE_VERSIONS))))
        try:
            async with connected(proxy, "stateless", elicitation=lambda _: {"action": "decline"}) as client:
                params = {"name": "ask", "arguments": {}, "inputResponses": given}
                with pytest.raises(RequestError) as raised:
                    await client.request("tools/call", params)
                assert raised.value.code == INVALID_PARAMS
                assert "inputResponses" in raised.value.message
        finally:
            await proxy.upstream.aclose()

    run(body, BOUND)
