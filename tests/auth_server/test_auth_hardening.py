"""What an adversary sends the auth step, on ``run_http``'s own HTTP server (issue #26, items 9
and 14d; 2026-07-28 authorization: Token Handling, Canonical Server URI; RFC 8707 §2; RFC 9449
§4.3; RFC 9112 §3.2).

- A DPoP proof whose ``htu`` has a port that is none (``:99999``, ``:abc``) is 401
  ``invalid_dpop_proof``; a ``Host`` with one is 400 ``invalid_request``; a validly signed token
  or proof whose claims nest 5,000 deep is 401. Never a 500: each refusal carries its
  ``WWW-Authenticate`` challenge and a JSON-RPC error body, and the server goes on serving.
- The audience is compared in the canonical form: ``aud`` with user information, a query or a
  fragment is another resource than ``https://mcp.example.com/mcp``; the case of scheme and host,
  the default port and a trailing slash are the same resource.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx2
import pytest
from _auth_harness import (
    DpopKey,
    LocalIssuer,
    auth_headers,
    call,
    challenge_params,
    scoped_server,
    serving,
    stateless,
)
from joserfc import jws

from backchannel.auth import Dpop, JwtVerifier, ResourceAuth
from backchannel.auth.dpop import access_token_hash
from backchannel.testing import run

WHOAMI = {"name": "whoami", "arguments": {}}
DEEP = 5_000


def _protected(issuer: LocalIssuer, resource: str | None = None, **options: Any) -> Any:
    """``url -> ResourceAuth`` for ``issuer``'s tokens (its keys fixed, never fetched)."""

    def make(url: str) -> ResourceAuth:
        return ResourceAuth(
            resource or url, issuer.issuer, JwtVerifier(keys=issuer.jwks()), scopes_required=["mcp"], **options
        )

    return make


def _nested(depth: int) -> str:
    return '{"a":' * depth + "{}" + "}" * depth


def _deep_token(issuer: LocalIssuer, audience: str, **claims: Any) -> str:
    """A token ``issuer`` signs whose claims carry an object nested ``DEEP`` levels (no JSON
    encoder writes one: the payload is text)."""
    now = int(time.time())
    fields = {"iss": issuer.issuer, "sub": "carol", "aud": audience, "scope": "mcp", "exp": now + 300, **claims}
    payload = json.dumps(fields)[:-1] + f', "deep": {_nested(DEEP)}}}'
    header = {"alg": "ES256", "typ": "at+jwt", "kid": issuer.key.kid}
    return jws.serialize_compact(header, payload.encode(), issuer.key)


def _deep_proof(key: DpopKey, url: str, token: str) -> str:
    claims = {"jti": "deep-1", "htm": "POST", "htu": url, "iat": int(time.time()), "ath": access_token_hash(token)}
    payload = json.dumps(claims)[:-1] + f', "deep": {_nested(DEEP)}}}'
    header = {"typ": "dpop+jwt", "alg": "ES256", "jwk": key.key.as_dict(private=False)}
    return jws.serialize_compact(header, payload.encode(), key.key)


def _refused(answer: httpx2.Response, status: int, scheme: str, error: str) -> str:
    """Assert ``answer`` is the refusal ``status`` with a ``scheme`` challenge naming ``error`` and a
    JSON-RPC error body; its description."""
    assert answer.status_code == status, (answer.status_code, answer.text)
    challenge = challenge_params(answer)
    assert challenge["scheme"] == scheme and challenge["error"] == error, challenge
    body = answer.json()
    assert body["jsonrpc"] == "2.0" and body["error"]["code"] == -32600, body
    assert body["error"]["message"] == challenge["error_description"]
    return challenge["error_description"]


# ------------------------------------------------------------------ no 500 from the auth step


def test_a_proof_whose_htu_port_is_no_port_is_401_invalid_dpop_proof() -> None:
    issuer, key = LocalIssuer(), DpopKey()

    async def body() -> None:
        async with serving(scoped_server(), _protected(issuer, dpop=Dpop()), ours=True) as (url, _):
            token = issuer.token(url, cnf={"jkt": key.jkt})
            async with httpx2.AsyncClient(timeout=10) as http:
                for htu in ("http://127.0.0.1:99999/mcp", "http://127.0.0.1:abc/mcp"):
                    proof = key.proof("POST", htu, token=token)
                    answer = await call(http, url, "tools/call", WHOAMI, token=token, scheme="DPoP", proof=proof)
                    assert "'htu'" in _refused(answer, 401, "DPoP", "invalid_dpop_proof")
                good = key.proof("POST", url, token=token)
                answer = await call(http, url, "tools/call", WHOAMI, token=token, scheme="DPoP", proof=good)
                assert answer.status_code == 200  # and the server goes on

    run(body)


async def _raw_post(port: int, host: str, headers: dict[str, str], body: bytes) -> httpx2.Response:
    """One POST /mcp with exactly this ``Host`` (an HTTP client would make its own), read back."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        fields = {"host": host, **headers, "content-length": str(len(body)), "connection": "close"}
        head = "".join(f"{name}: {value}\r\n" for name, value in fields.items())
        writer.write(f"POST /mcp HTTP/1.1\r\n{head}\r\n".encode() + body)
        await writer.drain()
        raw = await asyncio.wait_for(reader.read(), 10)
    finally:
        writer.close()
    status_line, _, rest = raw.partition(b"\r\n")
    head_bytes, _, content = rest.partition(b"\r\n\r\n")
    lines = head_bytes.decode("latin-1").split("\r\n")
    answer_headers = [tuple(part.strip() for part in line.split(":", 1)) for line in lines if ":" in line]
    return httpx2.Response(int(status_line.split()[1]), headers=answer_headers, content=content)


@pytest.mark.parametrize("host", ["127.0.0.1:99999", "127.0.0.1:abc"])
def test_a_host_whose_port_is_no_port_is_400_invalid_request(host: str) -> None:
    issuer, key = LocalIssuer(), DpopKey()

    async def body() -> None:
        # allowed_hosts="*": a public server relying on its tokens lets any Host reach the auth step.
        async with serving(scoped_server(), _protected(issuer, dpop=Dpop()), ours=True, allowed_hosts=["*"]) as (
            url,
            _,
        ):
            port = int(url.split(":")[2].split("/")[0])
            token = issuer.token(url, cnf={"jkt": key.jkt})
            message, extra = stateless("tools/call", WHOAMI)
            headers = {**auth_headers(token, scheme="DPoP", proof=key.proof("POST", url, token=token)), **extra}
            answer = await _raw_post(port, host, headers, json.dumps(message).encode())
            assert "Host header" in _refused(answer, 400, "Bearer", "invalid_request")

    run(body)


def test_a_token_or_a_proof_with_claims_nested_5000_deep_is_401() -> None:
    issuer, key = LocalIssuer(), DpopKey()

    async def body() -> None:
        async with (
            serving(scoped_server(), _protected(issuer, dpop=Dpop()), ours=True) as (url, _),
            httpx2.AsyncClient(timeout=10) as http,
        ):
            answer = await call(http, url, "tools/call", WHOAMI, token=_deep_token(issuer, url))
            assert "claims" in _refused(answer, 401, "Bearer", "invalid_token")
            token = issuer.token(url, cnf={"jkt": key.jkt})
            proof = _deep_proof(key, url, token)
            answer = await call(http, url, "tools/call", WHOAMI, token=token, scheme="DPoP", proof=proof)
            assert "claims" in _refused(answer, 401, "DPoP", "invalid_dpop_proof")
            answer = await call(http, url, "tools/call", WHOAMI, token=issuer.token(url))
            assert answer.status_code == 200  # and the server goes on

    run(body)


# ------------------------------------------------------------------ the audience (RFC 8707 canonical form)

RESOURCE = "https://mcp.example.com/mcp"
SAME = [
    "https://mcp.example.com/mcp",
    "HTTPS://MCP.Example.COM/mcp",  # the spec: servers SHOULD accept upper-case scheme and host
    "https://mcp.example.com:443/mcp",  # the default port
    "https://mcp.example.com/mcp/",  # the spec's note: with and without a trailing slash are both in use
]
OTHER = [
    "https://user@mcp.example.com/mcp",
    "https://user:pw@mcp.example.com/mcp",
    "https://mcp.example.com/mcp?x=1",  # RFC 8707 §2: a query is part of the resource
    "https://mcp.example.com/mcp?",
    "https://mcp.example.com/mcp#fragment",  # RFC 8707 §2: MUST NOT include a fragment
    "https://mcp.example.com:8443/mcp",
    "http://mcp.example.com/mcp",
    "https://mcp.example.com/MCP",  # the path is case-sensitive
    "https://mcp.example.com/mcp/x",
]


def test_the_audience_is_the_canonical_resource_uri_not_a_userinfo_query_or_fragment_variant() -> None:
    issuer = LocalIssuer()

    async def body() -> None:
        async with (
            serving(scoped_server(), _protected(issuer, RESOURCE), ours=True) as (url, _),
            httpx2.AsyncClient(timeout=10) as http,
        ):
            for audience in SAME:
                answer = await call(http, url, "tools/call", WHOAMI, token=issuer.token(audience))
                assert answer.status_code == 200, (audience, answer.text)
            for audience in OTHER:
                answer = await call(http, url, "tools/call", WHOAMI, token=issuer.token(audience))
                why = _refused(answer, 401, "Bearer", "invalid_token")
                assert "not issued for this resource" in why, audience
            both = issuer.token([OTHER[0], SAME[1]])  # one audience of several is enough
            assert (await call(http, url, "tools/call", WHOAMI, token=both)).status_code == 200

    run(body)
