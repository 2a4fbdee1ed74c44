"""Authorization for the HTTP server: the MCP endpoint as an OAuth 2.1 protected resource.

Protect a server in one argument::

    from backchannel.auth import JwtVerifier, ResourceAuth

    auth = ResourceAuth(
        resource="https://mcp.example.com/mcp",             # this endpoint's canonical URI
        issuer="https://auth.example.com",                  # the authorization server
        verifier=JwtVerifier("https://auth.example.com/jwks"),
        scopes_required=["mcp"],
    )
    server.run_http(auth=auth)                              # or server.http_app(auth=auth)

and ``@server.tool(scopes=["files:write"])`` for what needs more. ``resource.py`` says what is
checked and how refusals look; ``verifiers.py`` the verifiers (JWT + JWKS, introspection, a
fixed table, or your own ``TokenVerifier``); ``dpop.py`` sender-constrained tokens. Inside a
handler, ``current_principal()`` is the caller (issuer, subject, client id, scopes).

JOSE (JWS, JWK, JWT, thumbprints) is joserfc's (``pip install 'backchannel[auth]'``), loaded
only when a verifier or ``Dpop`` is first named here: the HTTP app and the server import this
package's plain parts (the principal, the challenges) without it.
"""

from __future__ import annotations

__all__ = [
    "AuthError",
    "Dpop",
    "InsufficientScope",
    "IntrospectionVerifier",
    "InvalidDpopProof",
    "InvalidToken",
    "JwtVerifier",
    "Principal",
    "ResourceAuth",
    "StaticTokens",
    "TokenVerifier",
    "UseDpopNonce",
    "VerifierUnavailable",
    "current_principal",
]

from typing import TYPE_CHECKING

from .._lazy import lazy_names
from ..types.errors import (
    AuthError,
    InsufficientScope,
    InvalidDpopProof,
    InvalidToken,
    UseDpopNonce,
    VerifierUnavailable,
)
from .principal import Principal, TokenVerifier, current_principal
from .resource import ResourceAuth

if TYPE_CHECKING:
    from .dpop import Dpop
    from .verifiers import IntrospectionVerifier, JwtVerifier, StaticTokens

_NEEDING_JOSERFC = {
    "Dpop": "dpop",
    "IntrospectionVerifier": "verifiers",
    "JwtVerifier": "verifiers",
    "StaticTokens": "verifiers",
}


# PEP 562: joserfc (and httpx2's client) load only for a server that verifies tokens.
__getattr__ = lazy_names(__name__, _NEEDING_JOSERFC)
