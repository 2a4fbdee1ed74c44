"""Our client logs in to our protected server through a real authorization server (oidc-provider):
discovery from the 401 (RFC 9728, then OpenID discovery), dynamic registration as a native
application, the authorization code with PKCE S256 and ``resource`` exactly the server's URI, a
step-up on 403 ``insufficient_scope`` with the union of scopes, refresh before expiry and after
a 401, DPoP-bound tokens, and the client credentials grant with a secret and with a private key.

The authorization server logs the person in without a page (``tests/peers/oidc_provider.mjs``),
so the "browser" follows redirects; the terminal client's login in real Chromium is
``test_terminal_login.py``. What crossed the wire is read from taps on both HTTP clients."""

from __future__ import annotations

import asyncio
import base64
import json
from dataclasses import replace
from typing import Any

import pytest
from _auth_harness import jwt_auth, scoped_server, serving
from _client_harness import KEYED_CLIENT, SECRET, SERVICE_KEY_PEM, FollowingBrowser, Tap

from backchannel import Client
from backchannel.auth import Dpop
from backchannel.client.oauth import ClientCredentials, MemoryTokenStore, OAuth, TokenSet
from backchannel.testing import run

pytestmark = pytest.mark.interop


def _claims(proof: str) -> dict[str, Any]:
    payload = proof.split(".")[1]
    claims: dict[str, Any] = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    return claims


def text(result: Any) -> str:
    value: str = result.content[0].text
    return value


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_a_person_logs_in_through_discovery_registration_and_a_step_up(oidc: Any, era: str) -> None:
    browser, store, authorization, mcp = FollowingBrowser(), MemoryTokenStore(), Tap(), Tap()

    async def body() -> None:
        async with (
            serving(scoped_server(), jwt_auth(oidc.issuer, oidc.jwks_uri)) as (url, _),
            authorization.client() as as_http,
            mcp.client() as mcp_http,
        ):
            auth = OAuth(browser, store=store, http_client=as_http, client_name="backchannel tests")
            async with Client.http(url, auth=auth, era=era, httpx_client=mcp_http) as client:
                assert text(await client.call_tool("whoami", {})).startswith(f"{oidc.issuer}#alice#")
                assert text(await client.call_tool("purge", {})) == "purged"  # 403, a step-up, the call again
            first, second = browser.asked
            assert first["resource"] == url == second["resource"]  # the metadata's resource, as it is
            assert first["code_challenge_method"] == "S256" and len(first["code_challenge"]) == 43
            assert set(first["scope"].split()) - {"offline_access"} == {"mcp"}  # the 401's scope
            assert set(second["scope"].split()) - {"offline_access"} == {"mcp", "mcp:admin"}  # held and challenged
            (registration,) = authorization.json_posts("/reg")
            assert registration["application_type"] == "native"
            assert registration["redirect_uris"] == [browser.redirect_uri]
            assert "refresh_token" in registration["grant_types"]
            exchanges = [form for form in authorization.forms("/token") if form["grant_type"] == "authorization_code"]
            assert [form["resource"] for form in exchanges] == [url, url]
            assert all(form["code_verifier"] and form["redirect_uri"] == browser.redirect_uri for form in exchanges)
            statuses = [e.status for e in mcp.to(url) if e.method == "POST"]
            assert statuses.count(401) == 1 and statuses.count(403) == 1, statuses
            # After the login every request carries the token, the handshake era's GET stream too.
            after = mcp.to(url)[[e.status for e in mcp.to(url)].index(401) + 1 :]
            assert after and all(e.headers.get("authorization", "").startswith("Bearer ") for e in after)
            assert era == "stateless" or any(e.method == "GET" for e in after)
            tokens = TokenSet.from_dict(await store.get(f"tokens {oidc.issuer} {url}") or {})
            assert tokens is not None and tokens.issuer == oidc.issuer and tokens.refresh_token
            assert "mcp:admin" in (tokens.scopes or ())
            assert (await store.get(f"client {oidc.issuer}") or {}).get("client_id")

    run(body, timeout=60)


def test_a_token_about_to_expire_is_refreshed_before_it_is_sent(oidc: Any) -> None:
    browser, authorization, mcp = FollowingBrowser(), Tap(), Tap()

    async def body() -> None:
        async with (
            serving(scoped_server(), jwt_auth(oidc.issuer, oidc.jwks_uri)) as (url, _),
            authorization.client() as as_http,
            mcp.client() as mcp_http,
        ):
            auth = OAuth(browser, http_client=as_http)
            async with Client.http(url, auth=auth, era="stateless", httpx_client=mcp_http) as client:
                await client.call_tool("whoami", {})
                before = mcp.to(url)[-1].headers["authorization"]
                auth.refresh_margin = 10**9  # every token now "expires soon"
                await client.call_tool("whoami", {})
                after = mcp.to(url)[-1].headers["authorization"]
            refreshes = [f for f in authorization.forms("/token") if f["grant_type"] == "refresh_token"]
            assert len(refreshes) >= 1 and all(f["resource"] == url for f in refreshes)
            assert before != after  # the new token went out, and the server never saw the old one refused
            assert 401 not in [e.status for e in mcp.to(url)[-2:]]
            assert len(browser.asked) == 1  # no second login

    run(body, timeout=60)


def test_a_refused_token_is_refreshed_after_the_401_without_a_second_login(oidc: Any) -> None:
    browser, store, authorization, mcp = FollowingBrowser(), MemoryTokenStore(), Tap(), Tap()

    async def body() -> None:
        async with (
            serving(scoped_server(), jwt_auth(oidc.issuer, oidc.jwks_uri)) as (url, _),
            authorization.client() as as_http,
            mcp.client() as mcp_http,
        ):
            async with Client.http(url, auth=OAuth(browser, store=store, http_client=as_http), era="stateless") as c:
                await c.call_tool("whoami", {})
            key = f"tokens {oidc.issuer} {url}"
            stored = TokenSet.from_dict(await store.get(key) or {})
            assert stored is not None and stored.refresh_token
            await store.set(key, replace(stored, access_token="revoked-by-the-server").to_dict())
            # A new run with the kept tokens: the server refuses the access token, the refresh token saves it.
            auth = OAuth(browser, store=store, http_client=as_http)
            async with Client.http(url, auth=auth, era="stateless", httpx_client=mcp_http) as client:
                assert text(await client.call_tool("whoami", {})).startswith(f"{oidc.issuer}#alice#")
            first = mcp.to(url)[0]
            assert first.headers["authorization"] == "Bearer revoked-by-the-server" and first.status == 401
            assert [f["grant_type"] for f in authorization.forms("/token")][-1] == "refresh_token"
            assert len(browser.asked) == 1

    run(body, timeout=60)


@pytest.mark.parametrize("nonce", [False, True])
def test_dpop_bound_tokens_are_asked_for_and_proven_on_every_request(oidc: Any, nonce: bool) -> None:
    browser, authorization, mcp = FollowingBrowser(), Tap(), Tap()
    policy = Dpop(required=True, nonce=nonce)

    async def body() -> None:
        async with (
            serving(scoped_server(), jwt_auth(oidc.issuer, oidc.jwks_uri, dpop=policy)) as (url, _),
            authorization.client() as as_http,
            mcp.client() as mcp_http,
        ):
            auth = OAuth(browser, http_client=as_http)  # dpop=None: the resource's metadata asks for it
            async with Client.http(url, auth=auth, era="stateless", httpx_client=mcp_http) as client:
                assert text(await client.call_tool("whoami", {})).startswith(f"{oidc.issuer}#alice#")
                await client.list_tools()
            token_requests = [e for e in authorization.exchanges if e.url.endswith("/token")]
            assert token_requests and all("dpop" in e.headers for e in token_requests)
            signed = [e for e in mcp.to(url) if "authorization" in e.headers]
            assert signed and all(e.headers["authorization"].startswith("DPoP ") for e in signed)
            proofs = [e.headers["dpop"] for e in signed]
            assert len(set(proofs)) == len(proofs)  # a fresh proof each time
            answered = [e.status for e in signed]
            if nonce:  # RFC 9449 §9: refused once for want of the server's nonce, then carried on every proof
                assert answered[0] == 401 and all(status == 200 for status in answered[1:]), answered
                # Answering the nonce challenge is the same request again: no login, no refresh.
                assert [form["grant_type"] for form in authorization.forms("/token")] == ["authorization_code"]
                assert all(_claims(proof).get("nonce") for proof in proofs[1:])
            else:
                assert all(status == 200 for status in answered), answered

    run(body, timeout=60)


@pytest.mark.parametrize("how", ["client_secret_basic", "private_key_jwt"])
def test_a_service_logs_in_with_client_credentials(oidc: Any, how: str) -> None:
    authorization = Tap()
    if how == "client_secret_basic":
        grant, name = ClientCredentials("svc-alice", SECRET), "svc-alice"
    else:
        grant, name = ClientCredentials(KEYED_CLIENT, private_key=SERVICE_KEY_PEM), KEYED_CLIENT

    async def body() -> None:
        async with (
            serving(scoped_server(), jwt_auth(oidc.issuer, oidc.jwks_uri)) as (url, _),
            authorization.client() as as_http,
        ):
            async with Client.http(url, auth=OAuth(grant=grant, http_client=as_http), era="stateless") as client:
                assert name in text(await client.call_tool("whoami", {}))
            (form,) = authorization.forms("/token")
            assert form["grant_type"] == "client_credentials" and form["resource"] == url
            (sent,) = [e for e in authorization.exchanges if e.url.endswith("/token")]
            if how == "client_secret_basic":
                assert sent.headers["authorization"].startswith("Basic ") and "client_secret" not in form
            else:
                assert form["client_assertion_type"].endswith(":jwt-bearer")
                assert form["client_assertion"].count(".") == 2  # a JWS, signed with the service's key

    run(body, timeout=60)


class SlowPerson(FollowingBrowser):
    """A person who takes longer to log in than the client gives a server to answer its probe."""

    async def authorize(self, url: str) -> Any:
        await asyncio.sleep(1.5)
        return await super().authorize(url)


def test_the_time_a_person_takes_to_log_in_is_not_counted_against_the_request(oidc: Any) -> None:
    browser = SlowPerson()

    async def body() -> None:
        async with serving(scoped_server(), jwt_auth(oidc.issuer, oidc.jwks_uri)) as (url, _):
            # era="auto" probes with server/discover for 0.5 s; the login under that probe takes longer.
            auth = OAuth(browser)
            async with Client.http(url, auth=auth, probe_timeout=0.5, request_timeout=1.0) as client:
                assert client.era == "stateless"  # the probe was answered, after the login, not timed out
                assert text(await client.call_tool("whoami", {})).startswith(f"{oidc.issuer}#alice#")
            assert len(browser.asked) == 1

    run(body, timeout=60)
