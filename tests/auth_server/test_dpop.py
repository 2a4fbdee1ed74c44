"""DPoP on the resource server (RFC 9449 §4.3, §7, §9; SEP-1932), with tokens bound by the real
authorization server: a bound token is accepted only with a fresh proof for this request, made
by its key; a proof is good once, on whichever worker it lands (replay is caught in the state the
workers share: a ``MemoryHub`` or a real Redis); nonces are asked for with ``use_dpop_nonce`` and
any worker accepts any worker's."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx2
from _auth_harness import AuthorizationServer, DpopKey, call, challenge_params, in_process, result_text, scoped_server

from backchannel.auth import Dpop, JwtVerifier, ResourceAuth
from backchannel.state.shared import SharedState
from backchannel.testing import run

RESOURCE = "http://127.0.0.1:8000/mcp"
WHOAMI = {"name": "whoami", "arguments": {}}


def _app(oauth: AuthorizationServer, dpop: Dpop, state: SharedState | None = None) -> Any:
    server = scoped_server()
    if state is not None:
        server.use_state(state)
    auth = ResourceAuth(RESOURCE, oauth.issuer, JwtVerifier(oauth.jwks_uri), scopes_required=["mcp"], dpop=dpop)
    return server.http_app(auth=auth)


async def _bound_token(oauth: AuthorizationServer, key: DpopKey) -> str:
    issued = await oauth.token("svc-alice", RESOURCE, dpop=key)
    assert issued["token_type"] == "DPoP"
    token: str = issued["access_token"]
    return token


async def _dpop_call(http: httpx2.AsyncClient, token: str, proof: str) -> httpx2.Response:
    return await call(http, "/mcp", "tools/call", WHOAMI, token=token, scheme="DPoP", proof=proof)


def test_a_bound_token_is_accepted_with_a_proof_and_a_replayed_proof_is_refused(oauth: AuthorizationServer) -> None:
    key = DpopKey()

    async def body() -> None:
        token = await _bound_token(oauth, key)
        async with in_process(_app(oauth, Dpop())) as http:
            proof = key.proof("POST", RESOURCE, token=token)
            answer = await _dpop_call(http, token, proof)
            assert answer.status_code == 200 and result_text(answer).endswith("#svc-alice#svc-alice")
            replayed = await _dpop_call(http, token, proof)
            assert replayed.status_code == 401
            challenge = challenge_params(replayed)
            assert challenge["scheme"] == "DPoP" and challenge["error"] == "invalid_dpop_proof"
            assert "replay" in challenge["error_description"] and "ES256" in challenge["algs"]
            assert (await _dpop_call(http, token, key.proof("POST", RESOURCE, token=token))).status_code == 200

    run(body, timeout=30)


def test_a_proof_that_does_not_fit_the_request_or_the_token_is_refused(oauth: AuthorizationServer) -> None:
    key, other_key = DpopKey(), DpopKey()

    async def body() -> None:
        token = await _bound_token(oauth, key)
        unbound = (await oauth.token("svc-alice", RESOURCE))["access_token"]
        wrong: dict[str, tuple[str, str]] = {
            "method": (token, key.proof("GET", RESOURCE, token=token)),
            "url": (token, key.proof("POST", "http://127.0.0.1:8000/other", token=token)),
            "token hash": (token, key.proof("POST", RESOURCE, token=unbound)),
            "old iat": (token, key.proof("POST", RESOURCE, token=token, iat=time.time() - 600)),
            "another key": (token, other_key.proof("POST", RESOURCE, token=token)),
            "unbound token": (unbound, key.proof("POST", RESOURCE, token=unbound)),
            "not a JWT": (token, "not-a-proof"),
        }
        async with in_process(_app(oauth, Dpop())) as http:
            for why, (sent_token, proof) in wrong.items():
                answer = await _dpop_call(http, sent_token, proof)
                assert answer.status_code == 401, why
                assert challenge_params(answer)["error"] == "invalid_dpop_proof", why
            as_bearer = await call(http, "/mcp", "tools/call", WHOAMI, token=token)  # a bound token without proof
            assert as_bearer.status_code == 401 and challenge_params(as_bearer)["error"] == "invalid_token"
            plain = await call(http, "/mcp", "tools/call", WHOAMI, token=unbound)  # bearer tokens still welcome
            assert plain.status_code == 200
            anonymous = await call(http, "/mcp", "tools/list", token=None)  # both schemes offered
            assert anonymous.headers["www-authenticate"].startswith("Bearer ")
            assert ", DPoP algs=" in anonymous.headers["www-authenticate"]

    run(body, timeout=30)


def test_required_dpop_refuses_bearer_tokens_and_says_so_in_the_metadata(oauth: AuthorizationServer) -> None:
    async def body() -> None:
        unbound = (await oauth.token("svc-alice", RESOURCE))["access_token"]
        async with in_process(_app(oauth, Dpop(required=True))) as http:
            answer = await call(http, "/mcp", "tools/list", token=unbound)
            assert answer.status_code == 401 and challenge_params(answer)["scheme"] == "DPoP"
            metadata = (await http.get("/.well-known/oauth-protected-resource/mcp")).json()
            assert metadata["dpop_bound_access_tokens_required"] is True
            assert "ES256" in metadata["dpop_signing_alg_values_supported"]

    run(body, timeout=30)


# ------------------------------------------------------------------ across workers


def test_a_proof_replayed_to_another_worker_is_refused_there(
    oauth: AuthorizationServer, new_state: Callable[[], SharedState]
) -> None:
    key = DpopKey()

    async def body() -> None:
        token = await _bound_token(oauth, key)
        first, second = _app(oauth, Dpop(), new_state()), _app(oauth, Dpop(), new_state())
        async with in_process(first) as worker_a, in_process(second) as worker_b:
            proof = key.proof("POST", RESOURCE, token=token)
            assert (await _dpop_call(worker_a, token, proof)).status_code == 200
            replayed = await _dpop_call(worker_b, token, proof)
            assert replayed.status_code == 401 and "replay" in challenge_params(replayed)["error_description"]
            fresh = key.proof("POST", RESOURCE, token=token)
            assert (await _dpop_call(worker_b, token, fresh)).status_code == 200
        for app in (first, second):
            await app.aclose()

    run(body, timeout=30)


def test_a_nonce_is_asked_for_and_one_worker_accepts_another_workers_nonce(
    oauth: AuthorizationServer, new_state: Callable[[], SharedState]
) -> None:
    key = DpopKey()

    async def body() -> None:
        token = await _bound_token(oauth, key)
        first, second = _app(oauth, Dpop(nonce=True), new_state()), _app(oauth, Dpop(nonce=True), new_state())
        async with in_process(first) as worker_a, in_process(second) as worker_b:
            asked = await _dpop_call(worker_a, token, key.proof("POST", RESOURCE, token=token))
            assert asked.status_code == 401 and challenge_params(asked)["error"] == "use_dpop_nonce"
            nonce = asked.headers["dpop-nonce"]
            proof = key.proof("POST", RESOURCE, token=token, nonce=nonce)
            assert (await _dpop_call(worker_b, token, proof)).status_code == 200  # minted by a, accepted by b
            forged = key.proof("POST", RESOURCE, token=token, nonce=nonce[:-2] + "AA")
            refused = await _dpop_call(worker_b, token, forged)
            assert refused.status_code == 401 and refused.headers["dpop-nonce"] != ""
        for app in (first, second):
            await app.aclose()

    run(body, timeout=30)
