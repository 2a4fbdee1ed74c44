"""The JWKS cache under concurrent first requests (issue #27, item 2; 2026-07-28 authorization:
Token Handling, "MCP servers MUST validate access tokens"): a request that arrives while the
authorization server's keys are being fetched waits for that fetch instead of being refused.

A real oidc-provider signs the tokens and holds its JWKS answers until the test releases them
(a slow network, made exact); our server, on ``run_http``'s HTTP server, starts with a cold key
cache. One request starts the fetch, seven more arrive while it is under way, and all eight are
answered 200 from the one fetch; after the provider rotates its keys, the same with a token of
the new key: eight 200s and one more fetch. Tokens of the withdrawn key are then refused with
no further fetch (the refetch bound holds)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from _auth_harness import (
    AS_CONFIG,
    AuthorizationServer,
    authorization_server,
    call,
    challenge_params,
    scoped_server,
    serving,
)

from backchannel.auth import JwtVerifier, Principal, ResourceAuth
from backchannel.testing import FakeClock, run, within
from peers.paths import NODE_MODULES, have_npm_peers

CONCURRENT = 8
WHOAMI = {"name": "whoami", "arguments": {}}


@pytest.fixture
def keys_held() -> Iterator[AuthorizationServer]:
    """An oidc-provider of our own (its keys get rotated), with its test controls on."""
    if not have_npm_peers() or not (NODE_MODULES / "oidc-provider").is_dir():
        pytest.skip("the npm peers (oidc-provider) are not installed: run tests/peers/install.sh")
    with authorization_server({**AS_CONFIG, "control": True}) as server:
        yield server


class Entered:
    """The server's verifier, counting the requests that reached it (in flight or done)."""

    def __init__(self, verifier: JwtVerifier) -> None:
        self.verifier = verifier
        self.count = 0

    async def verify(self, token: str) -> Principal:
        self.count += 1
        return await self.verifier.verify(token)


async def _control(server: AuthorizationServer, method: str, what: str) -> dict[str, Any]:
    async with httpx2.AsyncClient(timeout=10) as http:
        answer = await http.request(method, f"{server.issuer}/control/{what}")
    answer.raise_for_status()
    result: dict[str, Any] = answer.json()
    return result


async def _during_one_fetch(keys: AuthorizationServer, entered: Entered, url: str, token: str) -> list[tuple[int, str]]:
    """One call with ``token`` that makes the server fetch the keys, then ``CONCURRENT - 1``
    more that reach the server while that fetch is held at the provider; then the fetch is
    answered. Each call on its own connection; (status, error) of each answer."""
    await _control(keys, "POST", "hold-jwks")
    fetches, arrived = entered.verifier.keys.fetches, entered.count
    clients = [httpx2.AsyncClient(timeout=30) for _ in range(CONCURRENT)]
    try:
        first = asyncio.ensure_future(call(clients[0], url, "tools/call", WHOAMI, token=token))
        await within(lambda: entered.verifier.keys.fetches > fetches or first.done(), "the first call's fetch", 10)
        others = [asyncio.ensure_future(call(http, url, "tools/call", WHOAMI, token=token)) for http in clients[1:]]
        await within(lambda: entered.count == arrived + CONCURRENT, "every call at the verifier", 10)
        await _control(keys, "POST", "release-jwks")
        answers = await asyncio.gather(first, *others)
    finally:
        for http in clients:
            await http.aclose()
    return [_shown(answer) for answer in answers]


def _shown(answer: httpx2.Response) -> tuple[int, str]:
    """(status, the refusal's error or JSON-RPC message) of an answer."""
    if answer.status_code == 200:
        return (200, "")
    if "www-authenticate" in answer.headers:
        return (answer.status_code, challenge_params(answer).get("error", ""))
    return (answer.status_code, answer.json()["error"]["message"])


def test_concurrent_first_requests_and_requests_after_a_key_rotation_share_one_jwks_fetch(
    keys_held: AuthorizationServer,
) -> None:
    clock = FakeClock()  # the key cache's: the rotation is met past the refetch interval, not by waiting
    verifiers: list[Entered] = []

    def make_auth(url: str) -> ResourceAuth:
        verifiers.append(Entered(JwtVerifier(keys_held.jwks_uri, refetch_interval=30, timeout=30, clock=clock)))
        return ResourceAuth(url, keys_held.issuer, verifiers[0], scopes_required=["mcp"])

    async def body() -> None:
        async with serving(scoped_server(), make_auth, ours=True) as (url, _):
            entered = verifiers[0]
            old_token = (await keys_held.token("svc-alice", url))["access_token"]
            cold = await _during_one_fetch(keys_held, entered, url, old_token)
            assert cold == [(200, "")] * CONCURRENT, cold
            assert (await _control(keys_held, "GET", "jwks-fetches"))["fetches"] == 1

            await _control(keys_held, "POST", "rotate")  # new kids; the keys we hold are withdrawn
            new_token = (await keys_held.token("svc-alice", url))["access_token"]
            clock.advance(31)  # past the refetch interval: an unknown kid may be fetched again
            rotated = await _during_one_fetch(keys_held, entered, url, new_token)
            assert rotated == [(200, "")] * CONCURRENT, rotated
            assert (await _control(keys_held, "GET", "jwks-fetches"))["fetches"] == 2

            withdrawn = await asyncio.gather(*(_one(url, old_token) for _ in range(CONCURRENT)))
            assert withdrawn == [(401, "invalid_token")] * CONCURRENT, withdrawn  # within the interval:
            assert (await _control(keys_held, "GET", "jwks-fetches"))["fetches"] == 2  # no fetch

    run(body, timeout=60)


async def _one(url: str, token: str) -> tuple[int, str]:
    async with httpx2.AsyncClient(timeout=30) as http:
        return _shown(await call(http, url, "tools/call", WHOAMI, token=token))
