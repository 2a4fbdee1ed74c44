"""SEP-2243 through a mount: a stateless-era ``tools/call`` of a mounted tool with ``x-mcp-header``
arguments is checked against its ``Mcp-Param-*`` headers by the mounting server, which reads the
body ("Server Behavior for Custom Headers", 2026-07-28 streamable-http.mdx): headers that disagree
with the body are 400 with -32020, for a mount in the same process and for a remote one (a bridge
``Proxy``, the tool as its upstream listed it). The conformance leg ``run.py --through-gateway``
found the gateway answering such calls 200.
"""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from backchannel import Client, Server
from backchannel.framing import http as H
from backchannel.testing import run, serve_on_loopback
from backchannel.types import meta as M
from backchannel.types.errors import HEADER_MISMATCH
from backchannel.types.versions import STATELESS_VERSIONS

REGION_SCHEMA = {
    "type": "object",
    "properties": {"region": {"type": "string", "x-mcp-header": "Region"}, "query": {"type": "string"}},
    "required": ["region", "query"],
}


def _regional() -> Server:
    server = Server("regional")
    server.add_tool(lambda region, query: f"{region}:{query}", name="regional", input_schema=REGION_SCHEMA)
    return server


def _call(name: str) -> dict[str, Any]:
    meta = {M.PROTOCOL_VERSION: STATELESS_VERSIONS[-1], M.CLIENT_CAPABILITIES: {}, M.CLIENT_INFO: {"name": "raw"}}
    params = {"name": name, "arguments": {"region": "eu-west1", "query": "q"}, "_meta": meta}
    return {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}


@pytest.mark.parametrize("where", ["in-process", "remote"])
def test_a_mounted_tools_headers_are_checked_by_the_mounting_server(where: str) -> None:
    async def body() -> None:
        async with serve_on_loopback(_regional().http_app()) as upstream:
            gateway = Server("gateway")
            if where == "in-process":
                gateway.mount("ev", _regional())
            else:
                gateway.mount("ev", url=f"{upstream}/mcp")
            try:
                async with serve_on_loopback(gateway.http_app()) as base:
                    url = f"{base}/mcp"
                    async with Client.http(url, era="stateless") as client:
                        assert "ev_regional" in [tool.name for tool in await client.list_tools()]
                        result = await client.call_tool("ev_regional", {"region": "eu-west1", "query": "q"})
                        assert result.content[0].text == "eu-west1:q"  # type: ignore[union-attr]
                    message = _call("ev_regional")
                    headers = dict(H.request_headers(message, param_headers=H.x_mcp_headers(REGION_SCHEMA)))
                    headers.update({"Mcp-Param-Region": "us-east1", "accept": "application/json, text/event-stream"})
                    async with httpx2.AsyncClient(timeout=10) as http:
                        response = await http.post(url, json=message, headers=headers)
                    assert response.status_code == 400, response.text
                    assert response.json()["error"]["code"] == HEADER_MISMATCH
            finally:
                await gateway.aclose()

    run(body, 60)
