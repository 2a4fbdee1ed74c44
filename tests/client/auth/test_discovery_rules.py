"""The pure rules of discovery and of the authorization response, each named after its spec text:
``WWW-Authenticate`` challenges (RFC 9110 §11.6.1, RFC 6750 §3, RFC 9449 §7.1), the well-known URLs
in the spec's order (RFC 9728 §3.1, RFC 8414 §3.1 and §5), the metadata's own ``issuer`` and
``resource`` checks (RFC 8414 §3.3, RFC 9728 §3.3), PKCE S256 required, and RFC 9207's table for
``iss`` in the authorization response (2026-07-28 authorization "Authorization Response Validation")."""

from __future__ import annotations

import base64
import hashlib
from urllib.parse import parse_qsl, urlsplit

import pytest

from backchannel.client.oauth import AuthorizationDenied, MetadataRefused
from backchannel.client.oauth.authorize import AuthorizationRequest
from backchannel.client.oauth.challenge import parse_challenges
from backchannel.client.oauth.metadata import (
    ResourceMetadata,
    ServerMetadata,
    canonical_resource,
    resource_candidates,
    secure,
    server_candidates,
)

ISSUER = "https://auth.example.com"


def server(**fields: object) -> ServerMetadata:
    document = {
        "issuer": ISSUER,
        "authorization_endpoint": f"{ISSUER}/authorize",
        "token_endpoint": f"{ISSUER}/token",
        "code_challenge_methods_supported": ["S256"],
        **fields,
    }
    return ServerMetadata.parse(document, url=f"{ISSUER}/.well-known/oauth-authorization-server", issuer=ISSUER)


def test_challenges_with_quoted_commas_several_schemes_and_a_token68() -> None:
    header = 'Bearer error="insufficient_scope", scope="files:read files:write", error_description="a, b"'
    (bearer,) = parse_challenges([header])
    assert bearer.error == "insufficient_scope" and bearer.scopes == ["files:read", "files:write"]
    assert bearer.params["error_description"] == "a, b"
    basic, dpop = parse_challenges(['Basic dXNlcjpwYXNz==, DPoP algs="ES256 PS256", error="use_dpop_nonce"'])
    assert (basic.scheme, basic.token68, basic.params) == ("Basic", "dXNlcjpwYXNz==", {})
    assert dpop.is_scheme("dpop") and dpop.params == {"algs": "ES256 PS256", "error": "use_dpop_nonce"}
    (bare,) = parse_challenges(["Bearer"])
    assert bare.scopes is None and bare.resource_metadata is None


def test_protected_resource_metadata_is_looked_for_path_first_then_at_the_root() -> None:
    assert resource_candidates("https://example.com/public/mcp") == [
        "https://example.com/.well-known/oauth-protected-resource/public/mcp",
        "https://example.com/.well-known/oauth-protected-resource",
    ]
    assert resource_candidates("https://example.com") == ["https://example.com/.well-known/oauth-protected-resource"]


def test_authorization_server_metadata_urls_for_an_issuer_with_and_without_a_path() -> None:
    assert server_candidates("https://auth.example.com/tenant1") == [
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        "https://auth.example.com/tenant1/.well-known/openid-configuration",
    ]
    assert server_candidates("https://auth.example.com") == [
        "https://auth.example.com/.well-known/oauth-authorization-server",
        "https://auth.example.com/.well-known/openid-configuration",
    ]


def test_metadata_naming_another_issuer_is_not_used() -> None:
    document = {"issuer": "https://honest.example", "token_endpoint": "https://honest.example/token"}
    with pytest.raises(MetadataRefused, match="not used"):
        ServerMetadata.parse(document, url="https://attacker.example/.well-known/x", issuer="https://attacker.example")
    with pytest.raises(MetadataRefused):  # a trailing slash is another string (RFC 8414 §3.3: identical)
        ServerMetadata.parse(
            {**document, "issuer": "https://honest.example/"}, url="u", issuer="https://honest.example"
        )


def test_resource_metadata_for_another_resource_is_refused() -> None:
    ok = ResourceMetadata.parse(
        {"resource": "http://localhost:9/", "authorization_servers": [ISSUER]},
        url="u",
        server_url="http://localhost:9/mcp",
    )
    assert ok.resource == "http://localhost:9/"  # a parent path covers the endpoint; kept exactly as written
    for resource in ("https://evil.example.com/mcp", "http://localhost:9/mc", "http://localhost:10/mcp"):
        with pytest.raises(MetadataRefused, match="another resource"):
            ResourceMetadata.parse(
                {"resource": resource, "authorization_servers": [ISSUER]}, url="u", server_url="http://localhost:9/mcp"
            )


def test_endpoints_must_be_https_unless_on_a_loopback_host() -> None:
    assert secure("https://auth.example.com/token") and secure("http://127.0.0.1:8/t") and secure("http://[::1]/t")
    assert secure("http://localhost:3000/t") and not secure("http://auth.example.com/token")
    assert secure("http://auth.example.com/token", allow_http=True)
    with pytest.raises(MetadataRefused, match="token_endpoint"):
        server(token_endpoint="http://auth.example.com/token")


def test_the_canonical_resource_has_no_trailing_slash_added() -> None:
    assert canonical_resource("https://mcp.example.com") == "https://mcp.example.com"
    assert canonical_resource("https://mcp.example.com/") == "https://mcp.example.com"
    assert canonical_resource("https://mcp.example.com/mcp?x=1#f") == "https://mcp.example.com/mcp"


def test_the_authorization_request_carries_pkce_s256_state_and_the_resource() -> None:
    request = AuthorizationRequest.start(
        server(), client_id="c", redirect_uri="http://127.0.0.1:5/cb", resource="https://mcp.example.com", scopes=None
    )
    query = dict(parse_qsl(urlsplit(request.url).query))
    digest = hashlib.sha256(request.verifier.encode()).digest()
    assert query["code_challenge"] == base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    assert query["code_challenge_method"] == "S256" and query["state"] == request.state
    assert query["resource"] == "https://mcp.example.com" and "scope" not in query  # no scopes: no parameter
    assert 43 <= len(request.verifier) <= 128


def test_a_server_without_pkce_s256_is_not_logged_in_to() -> None:
    for methods in (None, ["plain"]):
        without = server(code_challenge_methods_supported=methods)
        with pytest.raises(MetadataRefused, match="S256"):
            AuthorizationRequest.start(without, client_id="c", redirect_uri="r", resource="x", scopes=None)


@pytest.mark.parametrize(
    ("advertised", "iss", "accepted"),
    [
        (True, ISSUER, True),  # advertised, present: compared, equal
        (True, None, False),  # advertised, absent: rejected
        (False, ISSUER, True),  # not advertised, present: compared all the same
        (False, "https://evil.example.com", False),
        (False, None, True),  # neither: proceed
        (True, ISSUER + "/", False),  # equal only after normalisation: a mismatch
        (True, ISSUER.upper(), False),
    ],
)
def test_the_rfc_9207_table(advertised: bool, iss: str | None, accepted: bool) -> None:
    request = AuthorizationRequest.start(
        server(authorization_response_iss_parameter_supported=advertised),
        client_id="c",
        redirect_uri="r",
        resource="x",
        scopes=["a"],
    )
    params = {"code": "the-code", "state": request.state, **({"iss": iss} if iss is not None else {})}
    if accepted:
        assert request.code(params) == "the-code"
    else:
        with pytest.raises(AuthorizationDenied, match="RFC 9207"):
            request.code(params)


def test_an_error_from_the_wrong_issuer_is_not_acted_on_nor_shown() -> None:
    request = AuthorizationRequest.start(server(), client_id="c", redirect_uri="r", resource="x", scopes=None)
    params = {"error": "access_denied", "error_description": "CLICK evil.example", "state": request.state}
    with pytest.raises(AuthorizationDenied) as refused:
        request.code({**params, "iss": "https://evil.example.com"})
    assert "CLICK" not in str(refused.value) and "access_denied" not in str(refused.value)
    with pytest.raises(AuthorizationDenied, match="state"):
        request.code({"code": "c", "state": "another", "iss": ISSUER})
    with pytest.raises(AuthorizationDenied, match="access_denied"):
        request.code({**params, "iss": ISSUER})
