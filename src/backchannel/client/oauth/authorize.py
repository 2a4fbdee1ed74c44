"""The authorization request and its response: PKCE S256, ``state``, ``resource``, and RFC 9207.

Pure. ``AuthorizationRequest.start`` builds the URL the person's browser opens and records
what the response is checked against: the code verifier, the ``state``, and the issuer of
the validated metadata. ``AuthorizationRequest.code`` reads the parameters that came back to
the redirect URI and returns the code, or raises ``AuthorizationDenied`` without acting on
anything else in them (an ``iss`` that is not the recorded issuer, compared as plain strings,
makes even an ``error`` unreadable).
"""

from __future__ import annotations

__all__ = ["AuthorizationRequest", "pkce_pair"]

import base64
import hashlib
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlencode, urlsplit, urlunsplit

from .errors import AuthorizationDenied, MetadataRefused
from .metadata import ServerMetadata


def pkce_pair() -> tuple[str, str]:
    """A code verifier (RFC 7636 §4.1: 43 to 128 unreserved characters) and its S256 challenge."""
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


@dataclass(frozen=True, slots=True)
class AuthorizationRequest:
    """One authorization request in flight, and what its response must match."""

    url: str
    redirect_uri: str
    state: str
    verifier: str = field(repr=False)
    #: The issuer of the metadata the request was built from (RFC 9207 compares ``iss`` with it).
    issuer: str
    #: The server said it always sends ``iss`` (``authorization_response_iss_parameter_supported``).
    iss_required: bool

    @classmethod
    def start(
        cls,
        server: ServerMetadata,
        *,
        client_id: str,
        redirect_uri: str,
        resource: str,
        scopes: Sequence[str] | None,
    ) -> AuthorizationRequest:
        """The request for ``scopes`` (no ``scope`` parameter when None or empty).

        ``MetadataRefused`` when the server does not support PKCE with S256, which a client
        must check in the metadata before going on (2026-07-28 security considerations)."""
        if server.authorization_endpoint is None:
            raise MetadataRefused(f"the authorization server {server.issuer} has no authorization_endpoint")
        if server.discovered and "S256" not in (server.code_challenge_methods or ()):
            raise MetadataRefused(
                f"the authorization server {server.issuer} does not list S256 in code_challenge_methods_supported: "
                "without PKCE the login would not be protected, so it is not attempted"
            )
        verifier, challenge = pkce_pair()
        state = secrets.token_urlsafe(24)
        query = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": redirect_uri,
            "state": state,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "resource": resource,
        }
        if scopes:
            query["scope"] = " ".join(scopes)
        parts = urlsplit(server.authorization_endpoint)
        joined = f"{parts.query}&{urlencode(query)}" if parts.query else urlencode(query)
        url = urlunsplit((parts.scheme, parts.netloc, parts.path, joined, ""))
        return cls(url, redirect_uri, state, verifier, server.issuer, server.iss_parameter)

    def code(self, params: Mapping[str, str]) -> str:
        """The authorization code in the response ``params``, once they pass every check."""
        iss = params.get("iss")
        if iss is not None and iss != self.issuer:
            raise AuthorizationDenied(
                f"the authorization response came from issuer {iss!r}, not {self.issuer!r} (RFC 9207): "
                "refused, and nothing in it was used"
            )
        if iss is None and self.iss_required:
            raise AuthorizationDenied(
                f"the authorization response carries no iss although {self.issuer} says it always sends one "
                "(RFC 9207): refused, and nothing in it was used"
            )
        if params.get("state") != self.state:
            raise AuthorizationDenied("the authorization response does not carry this login's state: refused")
        error = params.get("error")
        if error is not None:
            description = params.get("error_description")
            said = f"{error}: {description}" if description else error
            raise AuthorizationDenied(f"the authorization server {self.issuer} refused the login: {said}")
        code = params.get("code")
        if not code:
            raise AuthorizationDenied("the authorization response carries no code")
        return code
