"""Per-mount scopes on the wire (issue #30, "Per-mount scopes"): a mount made with
``scopes=("mcp:admin",)`` is left out of the lists of an HTTP caller whose token lacks the scope,
and its calls are refused with 403 ``insufficient_scope`` naming it, as the server's own scoped
tools are (``tests/auth_server/test_challenges.py``; 2025-11-25 and 2026-07-28 authorization,
Scope Challenge Handling); a token that grants it sees and calls it. An unscoped mount is
served to both."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from auth_server._auth_harness import HANDSHAKE, LocalIssuer, auth_headers, call, challenge_params
from backchannel import Client, Server
from backchannel.auth import JwtVerifier, ResourceAuth
from mounts._mounting import ERAS, bounded
from mounts.mount_upstream import build

RESOURCE = "http://127.0.0.1:8000/mcp"


def _app(issuer: LocalIssuer) -> Any:
    gateway = Server("gateway")

    @gateway.tool()
    def hello() -> str:
        return "hi"

    gateway.mount("adm", build(), scopes=("mcp:admin",))
    gateway.mount("pub", build())
    gateway.transform_tool("adm_measure", name="admin_length", fix={"units": "cm"})  # still the mount's scope
    auth = ResourceAuth(RESOURCE, issuer.issuer, JwtVerifier(keys=issuer.jwks()), scopes_required=["mcp"])
    return gateway.http_app(auth=auth)


def _http(app: Any) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url="http://127.0.0.1:8000", timeout=10)


async def _listed(app: Any, token: str, era: str) -> tuple[set[str], set[str], set[str]]:
    async with (
        _http(app) as http,
        Client.http(RESOURCE, headers={"authorization": f"Bearer {token}"}, era=era, httpx_client=http) as client,
    ):
        tools = {tool.name for tool in await client.list_tools()}
        prompts = {prompt.name for prompt in await client.list_prompts()}
        resources = {str(resource.uri) for resource in await client.list_resources()}
    return tools, prompts, resources


async def _handshake_call(app: Any, token: str, params: dict[str, Any]) -> httpx2.Response:
    headers = auth_headers(token)
    async with _http(app) as http:
        opened = await http.post(
            "/mcp",
            headers=headers,
            json={
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": HANDSHAKE,
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            },
        )
        assert opened.status_code == 200, opened.text
        headers |= {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": HANDSHAKE}
        await http.post("/mcp", headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        return await http.post(
            "/mcp", headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        )


async def _called(app: Any, token: str, era: str, params: dict[str, Any]) -> httpx2.Response:
    if era == "handshake":
        return await _handshake_call(app, token, params)
    async with _http(app) as http:
        return await call(http, "/mcp", "tools/call", params, token=token)


@pytest.mark.parametrize("era", ERAS)
@bounded
async def test_a_scoped_mount_is_hidden_from_a_token_without_its_scope(era: str) -> None:
    issuer = LocalIssuer()
    app = _app(issuer)
    tools, prompts, resources = await _listed(app, issuer.token(RESOURCE, "mcp"), era)
    assert "hello" in tools and "pub_echo" in tools and "pub_trip" in prompts and "pub+memo://note" in resources
    assert not [name for name in tools | prompts | resources if name.startswith("adm")]
    tools, prompts, resources = await _listed(app, issuer.token(RESOURCE, "mcp mcp:admin"), era)
    assert {"hello", "pub_echo", "adm_echo"} <= tools and "adm_trip" in prompts and "adm+memo://note" in resources


@pytest.mark.parametrize("era", ERAS)
@bounded
async def test_a_call_of_a_scoped_mount_is_refused_403_naming_its_scope(era: str) -> None:
    issuer = LocalIssuer()
    app = _app(issuer)
    params = {"name": "adm_echo", "arguments": {"text": "x"}}
    answer = await _called(app, issuer.token(RESOURCE, "mcp"), era, params)
    assert answer.status_code == 403
    challenge = challenge_params(answer)
    assert challenge["error"] == "insufficient_scope" and challenge["scope"] == "mcp mcp:admin"
    assert answer.json()["error"]["code"] == -32600
    answer = await _called(app, issuer.token(RESOURCE, "mcp"), era, {"name": "pub_echo", "arguments": {"text": "y"}})
    assert answer.status_code == 200 and answer.json()["result"]["content"][0]["text"] == "y"
    answer = await _called(app, issuer.token(RESOURCE, "mcp mcp:admin"), era, params)
    assert answer.status_code == 200 and answer.json()["result"]["content"][0]["text"] == "x"


@pytest.mark.parametrize("era", ERAS)
@bounded
async def test_a_scoped_mount_s_tool_keeps_its_scope_under_a_new_name(era: str) -> None:
    issuer = LocalIssuer()
    app = _app(issuer)
    params = {"name": "admin_length", "arguments": {"length": 2}}
    answer = await _called(app, issuer.token(RESOURCE, "mcp"), era, params)
    assert answer.status_code == 403 and challenge_params(answer)["scope"] == "mcp mcp:admin"
    tools, _, _ = await _listed(app, issuer.token(RESOURCE, "mcp"), era)
    assert "admin_length" not in tools
    answer = await _called(app, issuer.token(RESOURCE, "mcp mcp:admin"), era, params)
    assert answer.status_code == 200 and answer.json()["result"]["content"][0]["text"] == "2cm"
