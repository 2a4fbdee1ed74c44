"""The endpoint as a protected resource, on the wire: its metadata at the path-aware well-known
URL (RFC 9728), 401 challenges naming it and the scope required, one 403 ``insufficient_scope``
listing every scope a request needs, and lists that hide what the caller's token does not grant
(2026-07-28 and 2025-11-25 authorization: Scope Selection Strategy, Scope Challenge Handling)."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
from _auth_harness import HANDSHAKE, LocalIssuer, auth_headers, call, challenge_params, in_process, scoped_server

from backchannel import Client
from backchannel.auth import JwtVerifier, ResourceAuth
from backchannel.testing import connected, run

RESOURCE = "http://127.0.0.1:8000/mcp"
METADATA = "http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp"


def _app(issuer: LocalIssuer, **options: Any) -> Any:
    options.setdefault("scopes_required", ["mcp"])
    auth = ResourceAuth(RESOURCE, issuer.issuer, JwtVerifier(keys=issuer.jwks()), resource_name="Test", **options)
    return scoped_server().http_app(auth=auth)


def test_the_metadata_is_served_at_the_path_aware_and_the_root_well_known_urls() -> None:
    async def body() -> None:
        async with in_process(_app(LocalIssuer())) as http:
            for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
                answer = await http.get(path)
                assert answer.status_code == 200 and answer.headers["content-type"] == "application/json"
                assert answer.json() == {
                    "resource": RESOURCE,
                    "authorization_servers": ["https://issuer.test"],
                    "scopes_supported": ["mcp"],
                    "bearer_methods_supported": ["header"],
                    "resource_name": "Test",
                }
            assert (await http.get("/.well-known/oauth-protected-resource/other")).status_code == 404
            assert (await http.post("/.well-known/oauth-protected-resource/mcp")).status_code == 405

    run(body)


def test_a_request_without_a_token_gets_401_naming_the_metadata_and_the_scope_required() -> None:
    async def body() -> None:
        async with in_process(_app(LocalIssuer())) as http:
            answer = await call(http, "/mcp", "tools/list", token=None)
            assert answer.status_code == 401
            challenge = challenge_params(answer)
            assert challenge == {"scheme": "Bearer", "scope": "mcp", "resource_metadata": METADATA}  # no error code
            assert answer.json()["error"]["code"] == -32600  # a JSON-RPC body, as every refusal

    run(body)


def test_a_token_without_the_base_scope_gets_403_insufficient_scope() -> None:
    issuer = LocalIssuer()

    async def body() -> None:
        async with in_process(_app(issuer)) as http:
            answer = await call(http, "/mcp", "tools/list", token=issuer.token(RESOURCE, "files:read"))
            assert answer.status_code == 403
            challenge = challenge_params(answer)
            assert challenge["error"] == "insufficient_scope" and challenge["scope"] == "mcp"
            assert challenge["resource_metadata"] == METADATA

    run(body)


@pytest.mark.parametrize("era", ["stateless", "handshake"])
def test_a_call_needing_more_scopes_gets_one_403_listing_every_scope_it_needs(era: str) -> None:
    issuer = LocalIssuer()
    token = issuer.token(RESOURCE, "mcp files:write")  # holds one of the tool's two scopes

    async def body() -> None:
        async with in_process(_app(issuer)) as http:
            params = {"name": "publish", "arguments": {"title": "q3"}}
            if era == "stateless":
                answer = await call(http, "/mcp", "tools/call", params, token=token)
            else:
                answer = await _handshake_call(http, token, params)
            assert answer.status_code == 403
            challenge = challenge_params(answer)
            assert challenge["error"] == "insufficient_scope"
            assert challenge["scope"] == "mcp files:write mcp:reports"  # all of them, held ones too: one step-up
            assert challenge["resource_metadata"] == METADATA and "mcp:reports" in challenge["error_description"]
            assert answer.json()["id"] is not None  # the refusal answers that request
            granted = issuer.token(RESOURCE, "mcp files:write mcp:reports")
            if era == "stateless":
                answer = await call(http, "/mcp", "tools/call", params, token=granted)
            else:
                answer = await _handshake_call(http, granted, params)
            assert answer.status_code == 200 and answer.json()["result"]["content"][0]["text"] == "published q3"

    run(body)


async def _handshake_call(http: httpx2.AsyncClient, token: str, params: dict[str, Any]) -> httpx2.Response:
    headers = auth_headers(token)
    opened = await http.post(
        "/mcp",
        headers=headers,
        json={
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
        },
    )
    assert opened.status_code == 200, opened.text
    headers |= {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": HANDSHAKE}
    await http.post("/mcp", headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    return await http.post(
        "/mcp", headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    )


def test_scoped_prompts_and_resources_are_refused_the_same_way() -> None:
    issuer = LocalIssuer()
    token = issuer.token(RESOURCE, "mcp")

    async def body() -> None:
        async with in_process(_app(issuer)) as http:
            for method, params in (
                ("prompts/get", {"name": "admin_prompt"}),
                ("resources/read", {"uri": "memo://secret"}),
                (
                    "completion/complete",
                    {"ref": {"type": "ref/prompt", "name": "admin_prompt"}, "argument": {"name": "x", "value": ""}},
                ),
            ):
                answer = await call(http, "/mcp", method, params, token=token)
                assert answer.status_code == 403, method
                assert challenge_params(answer)["scope"] == "mcp mcp:admin"
            answer = await call(http, "/mcp", "resources/read", {"uri": "memo://public"}, token=token)
            assert answer.json()["result"]["contents"][0]["text"] == "public"

    run(body)


@pytest.mark.parametrize("era", ["stateless", "handshake"])
def test_lists_show_only_what_the_token_grants(era: str) -> None:
    issuer = LocalIssuer()

    async def listed(scope: str) -> tuple[set[str], set[str], set[str]]:
        headers = {"authorization": f"Bearer {issuer.token(RESOURCE, scope)}"}
        transport = httpx2.ASGITransport(app=_app(issuer))
        async with (
            httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as http,
            Client.http(RESOURCE, headers=headers, era=era, httpx_client=http) as client,
        ):
            tools = {t.name for t in await client.list_tools()}
            prompts = {p.name for p in await client.list_prompts()}
            resources = {str(r.uri) for r in await client.list_resources()}
        return tools, prompts, resources

    async def body() -> None:
        assert await listed("mcp") == ({"whoami"}, set(), {"memo://public"})
        assert await listed("mcp mcp:admin files:read") == (
            {"whoami", "purge", "read_file"},
            {"admin_prompt"},
            {"memo://public", "memo://secret"},
        )

    run(body)


def test_a_broader_scope_implies_the_narrower_ones() -> None:
    issuer = LocalIssuer()
    token = issuer.token(RESOURCE, "mcp files:write")

    async def body() -> None:
        async with in_process(_app(issuer, scope_implies={"files:write": ["files:read"]})) as http:
            answer = await call(http, "/mcp", "tools/call", {"name": "read_file", "arguments": {}}, token=token)
            assert answer.status_code == 200 and answer.json()["result"]["content"][0]["text"] == "contents"

    run(body)


def test_over_stdio_and_memory_no_scope_is_checked() -> None:
    async def body() -> None:
        async with connected(scoped_server()) as client:
            assert {t.name for t in await client.list_tools()} == {"whoami", "purge", "publish", "read_file"}
            result = await client.call_tool("purge")
            assert result.content[0].text == "purged"  # type: ignore[union-attr]

    run(body)
