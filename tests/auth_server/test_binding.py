"""What a principal starts stays its own, when principals are tokens of a real authorization
server (EL-32: the identity is the token's issuer, ``sub`` and client): another principal
presenting a session id gets 404, replaying a ``requestState`` gets -32602, and a URL flow
belongs to the principal that started it. The same principal with a new token (more scopes
after a step-up) keeps its session."""

from __future__ import annotations

from typing import Any

import httpx2
from _auth_harness import HANDSHAKE, AuthorizationServer, auth_headers, in_process, jwt_auth, stateless

from backchannel import Context, Server
from backchannel.auth.principal import principal_key
from backchannel.server.url_elicitation import UrlElicitations
from backchannel.testing import run

RESOURCE = "http://127.0.0.1:8000/mcp"


def _server() -> Server:
    server = Server("bound", "1.0")
    server.url_elicitations = UrlElicitations("http://127.0.0.1:8000")

    @server.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
        return f"{answer.action}:{(answer.data or {}).get('name')} for {ctx.principal}"

    @server.tool()
    async def connect(ctx: Context) -> str:
        outcome = await ctx.elicit_url("Connect your account")
        return outcome.action

    return server


async def _initialize(http: httpx2.AsyncClient, token: str) -> str:
    answer = await http.post(
        "/mcp",
        headers=auth_headers(token),
        json={
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
        },
    )
    assert answer.status_code == 200, answer.text
    session: str = answer.headers["mcp-session-id"]
    return session


async def _ping(http: httpx2.AsyncClient, token: str, session: str) -> httpx2.Response:
    headers = {**auth_headers(token), "mcp-session-id": session, "mcp-protocol-version": HANDSHAKE}
    return await http.post("/mcp", headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})


def test_another_principals_session_is_not_found_and_a_stepped_up_token_keeps_its_own(
    oauth: AuthorizationServer,
) -> None:
    async def body() -> None:
        alice = (await oauth.token("svc-alice", RESOURCE))["access_token"]
        bob = (await oauth.token("svc-bob", RESOURCE))["access_token"]
        alice_more = (await oauth.token("svc-alice", RESOURCE, "mcp mcp:admin"))["access_token"]
        async with in_process(_server().http_app(auth=jwt_auth(oauth.issuer, oauth.jwks_uri)(RESOURCE))) as http:
            session = await _initialize(http, alice)
            assert (await _ping(http, bob, session)).status_code == 404
            assert (await _ping(http, alice_more, session)).status_code == 200  # same issuer, subject and client

    run(body, timeout=30)


async def _round(
    http: httpx2.AsyncClient, token: str, name: str, capabilities: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    message, headers = stateless("tools/call", {"name": name, "arguments": {}, **extra})
    message["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = capabilities
    answer = await http.post("/mcp", json=message, headers={**auth_headers(token), **headers})
    body: dict[str, Any] = answer.json()
    return body


def test_another_principals_request_state_is_refused(oauth: AuthorizationServer) -> None:
    async def body() -> None:
        alice = (await oauth.token("svc-alice", RESOURCE))["access_token"]
        bob = (await oauth.token("svc-bob", RESOURCE))["access_token"]
        async with in_process(_server().http_app(auth=jwt_auth(oauth.issuer, oauth.jwks_uri)(RESOURCE))) as http:
            caps = {"elicitation": {}}
            first = (await _round(http, alice, "ask", caps))["result"]
            (key,) = first["inputRequests"]
            retry = {
                "requestState": first["requestState"],
                "inputResponses": {key: {"action": "accept", "content": {"name": "A"}}},
            }
            stolen = await _round(http, bob, "ask", caps, **retry)
            assert stolen["error"]["code"] == -32602
            own = await _round(http, alice, "ask", caps, **retry)
            assert (
                own["result"]["content"][0]["text"]
                == f"accept:A for {principal_key(oauth.issuer, 'svc-alice', 'svc-alice')}"
            )

    run(body, timeout=30)


def test_a_url_flow_belongs_to_the_principal_that_started_it(oauth: AuthorizationServer) -> None:
    server = _server()

    async def body() -> None:
        alice = (await oauth.token("svc-alice", RESOURCE))["access_token"]
        bob = (await oauth.token("svc-bob", RESOURCE))["access_token"]
        async with in_process(server.http_app(auth=jwt_auth(oauth.issuer, oauth.jwks_uri)(RESOURCE))) as http:
            caps = {"elicitation": {"url": {}}}
            first = (await _round(http, alice, "connect", caps))["result"]
            (key,) = first["inputRequests"]
            assert first["inputRequests"][key]["params"]["mode"] == "url"
            flows = server.url_elicitations
            assert flows is not None
            (flow,) = flows._flows.values()
            assert flow.owner == principal_key(oauth.issuer, "svc-alice", "svc-alice")
            retry = {"requestState": first["requestState"], "inputResponses": {key: {"action": "accept"}}}
            stolen = await _round(http, bob, "connect", caps, **retry)
            assert stolen["error"]["code"] == -32602 and "another user" in stolen["error"]["message"]
            flows.complete(flow)
            own = await _round(http, alice, "connect", caps, **retry)
            assert own["result"]["content"][0]["text"] == "accept"

    run(body, timeout=30)
