"""Every refusal of a token, on the wire (2026-07-28 authorization: Token Handling, Access Token
Privilege Restriction; RFC 8707 §2, RFC 9068, RFC 7662): a token minted by the real authorization
server (oidc-provider) for this resource is accepted and names its principal; one for another
resource, one expired, one from another issuer, one signed by a key the issuer does not publish
are refused with 401 ``invalid_token``. The JWKS is cached, followed through rotation, and
refetched on an unknown ``kid`` at most once per interval; introspection answers are cached no
longer than the token lives."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from _auth_harness import (
    SECRET,
    AuthorizationServer,
    LocalIssuer,
    call,
    challenge_params,
    in_process,
    jwt_auth,
    result_text,
    scoped_server,
    serving,
)

from backchannel.auth import IntrospectionVerifier, JwtVerifier, ResourceAuth
from backchannel.auth.principal import principal_key
from backchannel.testing import FakeClock, run, serve_on_loopback

RESOURCE = "http://127.0.0.1:8000/mcp"
WHOAMI = {"name": "whoami", "arguments": {}}


def test_a_token_of_the_authorization_server_for_this_resource_is_accepted_and_names_its_principal(
    oauth: AuthorizationServer,
) -> None:
    async def body() -> None:
        async with serving(scoped_server(), jwt_auth(oauth.issuer, oauth.jwks_uri)) as (url, _):
            token = (await oauth.token("svc-alice", url))["access_token"]
            async with httpx2.AsyncClient(timeout=10) as http:
                answer = await call(http, url, "tools/call", WHOAMI, token=token)
            assert answer.status_code == 200
            assert result_text(answer) == principal_key(oauth.issuer, "svc-alice", "svc-alice")

    run(body, timeout=30)


def test_a_token_for_another_resource_is_refused(oauth: AuthorizationServer) -> None:
    async def body() -> None:
        app = scoped_server().http_app(auth=jwt_auth(oauth.issuer, oauth.jwks_uri)(RESOURCE))
        other = (await oauth.token("svc-alice", "http://127.0.0.1:9/other/mcp"))["access_token"]
        mine = (await oauth.token("svc-alice", RESOURCE))["access_token"]
        async with in_process(app) as http:
            answer = await call(http, "/mcp", "tools/call", WHOAMI, token=other)
            assert answer.status_code == 401
            challenge = challenge_params(answer)
            assert (
                challenge["error"] == "invalid_token"
                and "not issued for this resource" in challenge["error_description"]
            )
            assert (await call(http, "/mcp", "tools/call", WHOAMI, token=mine)).status_code == 200

    run(body, timeout=30)


# ------------------------------------------------------------------ claims, with a local issuer


class Jwks:
    """A JWKS endpoint whose keys the test changes, counting how often it is fetched."""

    def __init__(self, *issuers: LocalIssuer) -> None:
        self.keys = [key for issuer in issuers for key in issuer.jwks()["keys"]]
        self.fetches = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        self.fetches += 1
        body = json.dumps({"keys": self.keys}).encode()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})


@contextlib.asynccontextmanager
async def local_app(issuer: LocalIssuer, jwks: Jwks, **verifier: Any) -> AsyncIterator[Any]:
    async with serve_on_loopback(jwks, lifespan="off") as base:
        auth = ResourceAuth(RESOURCE, issuer.issuer, JwtVerifier(f"{base}/jwks", **verifier), scopes_required=["mcp"])
        async with in_process(scoped_server().http_app(auth=auth)) as http:
            yield http


@pytest.mark.parametrize(
    ("claims", "refusal"),
    [
        ({"exp": int(time.time()) - 120}, "the token has expired"),  # past the 60 s leeway
        ({"nbf": int(time.time()) + 600}, "the token is not valid yet"),
        ({"iss": "https://evil.test"}, "does not trust"),
        ({"aud": "https://elsewhere.test/mcp"}, "not issued for this resource"),
        ({"aud": None}, "not issued for this resource"),
        ({"exp": None}, "no expiry"),
    ],
    ids=["expired", "not-yet-valid", "wrong-issuer", "another-audience", "no-audience", "no-expiry"],
)
def test_a_token_with_a_wrong_claim_is_refused_with_invalid_token(claims: dict[str, Any], refusal: str) -> None:
    issuer = LocalIssuer()

    async def body() -> None:
        async with local_app(issuer, Jwks(issuer)) as http:
            answer = await call(http, "/mcp", "tools/list", token=issuer.token(RESOURCE, **claims))
            assert answer.status_code == 401
            challenge = challenge_params(answer)
            assert challenge["error"] == "invalid_token" and refusal in challenge["error_description"]

    run(body)


def test_clock_skew_within_the_leeway_is_accepted_and_uppercase_scheme_and_host_are_the_same_audience() -> None:
    issuer = LocalIssuer()

    async def body() -> None:
        async with local_app(issuer, Jwks(issuer)) as http:
            token = issuer.token("HTTP://127.0.0.1:8000/mcp", exp=int(time.time()) - 30, nbf=int(time.time()) + 30)
            assert (await call(http, "/mcp", "tools/list", token=token)).status_code == 200

    run(body)


def test_a_token_signed_by_a_key_the_issuer_does_not_publish_is_refused() -> None:
    issuer, impostor = LocalIssuer(), LocalIssuer(kid="k1")  # same kid, another key

    async def body() -> None:
        async with local_app(issuer, Jwks(issuer)) as http:
            answer = await call(http, "/mcp", "tools/list", token=impostor.token(RESOURCE))
            assert answer.status_code == 401
            assert "signature" in challenge_params(answer)["error_description"]

    run(body)


def test_keys_are_cached_followed_through_rotation_and_an_unknown_kid_refetches_at_most_once_per_interval() -> None:
    old, new = LocalIssuer(kid="old"), LocalIssuer(kid="new")
    jwks = Jwks(old)
    clock = FakeClock()

    async def status(http: Any, issuer: LocalIssuer) -> int:
        return (await call(http, "/mcp", "tools/list", token=issuer.token(RESOURCE, iss=old.issuer))).status_code

    async def body() -> None:
        async with local_app(old, jwks, refetch_interval=30, refresh=3600, clock=clock) as http:
            assert [await status(http, old) for _ in range(3)] == [200] * 3
            assert jwks.fetches == 1  # cached
            clock.advance(31)
            forged = [await status(http, LocalIssuer(kid=f"made-up-{n}")) for n in range(5)]
            assert forged == [401] * 5 and jwks.fetches == 2  # one refetch for the lot, then the cache says no
            jwks.keys = new.jwks()["keys"]  # the issuer rotates: "new" published, "old" withdrawn
            assert await status(http, new) == 401  # within the interval: not fetched again
            clock.advance(31)
            assert await status(http, new) == 200 and jwks.fetches == 3  # the unknown kid fetched the new set
            assert await status(http, old) == 401  # withdrawn
            clock.advance(3600)  # past ``refresh``: fetched again even for a known kid
            assert await status(http, new) == 200 and jwks.fetches == 4

    run(body)


def test_keys_that_cannot_be_fetched_answer_503_not_401() -> None:
    issuer = LocalIssuer()
    auth = ResourceAuth(RESOURCE, issuer.issuer, JwtVerifier("http://127.0.0.1:9/jwks", timeout=2))

    async def body() -> None:
        async with in_process(scoped_server().http_app(auth=auth)) as http:
            for _ in range(2):  # and again while it is still down: never a 401 that would send the client to log in
                answer = await call(http, "/mcp", "tools/list", token=issuer.token(RESOURCE))
                assert answer.status_code == 503 and answer.headers["retry-after"] == "5"

    run(body)


# ------------------------------------------------------------------ introspection (RFC 7662)


def test_an_opaque_token_is_introspected_and_its_answer_cached_no_longer_than_it_lives(
    oauth: AuthorizationServer,
) -> None:
    resource = "http://127.0.0.1:8000/opaque/mcp"
    clock = FakeClock(time.time())
    verifier = IntrospectionVerifier(
        oauth.introspection_endpoint, client_id="mcp-rs", client_secret=SECRET, cache_ttl=10**9, clock=clock
    )
    app = scoped_server().http_app("/opaque/mcp", auth=ResourceAuth(resource, oauth.issuer, verifier))

    async def body() -> None:
        issued = await oauth.token("svc-bob", resource)
        token = issued["access_token"]
        assert token.count(".") != 2  # opaque, not a JWT
        async with in_process(app) as http:
            for _ in range(3):
                answer = await call(http, "/opaque/mcp", "tools/call", WHOAMI, token=token)
                assert result_text(answer) == principal_key(oauth.issuer, "svc-bob", "svc-bob")
            assert verifier.requests == 1  # cached
            clock.advance(issued["expires_in"] + 1)  # past its exp: the cached answer is gone
            assert (await call(http, "/opaque/mcp", "tools/call", WHOAMI, token=token)).status_code == 200
            assert verifier.requests == 2
            answer = await call(http, "/opaque/mcp", "tools/list", token="not-a-token-anyone-issued")
            assert answer.status_code == 401 and challenge_params(answer)["error"] == "invalid_token"
            other = (await oauth.token("svc-bob", "http://127.0.0.1:9/opaque/mcp"))["access_token"]
            answer = await call(http, "/opaque/mcp", "tools/list", token=other)
            assert answer.status_code == 401 and "not issued for this resource" in answer.headers["www-authenticate"]

    run(body, timeout=30)


def test_a_revoked_opaque_token_is_refused_once_its_cached_answer_is_older_than_cache_ttl(
    oauth: AuthorizationServer,
) -> None:
    resource = "http://127.0.0.1:8000/opaque/mcp"
    clock = FakeClock(time.time())
    verifier = IntrospectionVerifier(
        oauth.introspection_endpoint, client_id="mcp-rs", client_secret=SECRET, cache_ttl=30, clock=clock
    )
    app = scoped_server().http_app("/opaque/mcp", auth=ResourceAuth(resource, oauth.issuer, verifier))

    async def body() -> None:
        token = (await oauth.token("svc-bob", resource))["access_token"]
        async with in_process(app) as http:
            assert (await call(http, "/opaque/mcp", "tools/list", token=token)).status_code == 200
            async with httpx2.AsyncClient(timeout=10) as as_client:
                revoked = await as_client.post(
                    f"{oauth.issuer}/token/revocation", data={"token": token}, auth=("svc-bob", SECRET)
                )
            assert revoked.status_code == 200
            clock.advance(31)
            answer = await call(http, "/opaque/mcp", "tools/list", token=token)
            assert answer.status_code == 401 and "not active" in challenge_params(answer)["error_description"]

    run(body, timeout=30)
