"""Why a request's credentials were refused, each with the HTTP answer it gets.

    AuthError                   the request is refused; ``status`` and the RFC 6750 ``error``
    ├── InvalidToken            401 invalid_token: unverifiable, expired, another resource's...
    ├── InvalidRequest          400 invalid_request: two credentials, a token in the URL...
    ├── InsufficientScope       403 insufficient_scope: ``scopes`` lists what the request needs
    ├── InvalidDpopProof        401 invalid_dpop_proof (RFC 9449 §7.1)
    │   └── UseDpopNonce        401 use_dpop_nonce, with a fresh ``DPoP-Nonce``
    └── VerifierUnavailable     503: the authorization server could not be asked (JWKS, introspection)

A verifier raises ``InvalidToken`` (or ``VerifierUnavailable``); ``ResourceAuth`` turns every
one of them into a response with its ``WWW-Authenticate`` challenge, in one place.
"""

from __future__ import annotations

__all__ = [
    "AuthError",
    "InsufficientScope",
    "InvalidDpopProof",
    "InvalidRequest",
    "InvalidToken",
    "UseDpopNonce",
    "VerifierUnavailable",
]

from collections.abc import Sequence


class AuthError(Exception):
    """A refusal; ``description`` is safe to show the client (``error_description``)."""

    status = 401
    error: str | None = None

    def __init__(self, description: str) -> None:
        super().__init__(description)
        self.description = description


class InvalidToken(AuthError):
    error = "invalid_token"


class InvalidRequest(AuthError):
    status = 400
    error = "invalid_request"


class InsufficientScope(AuthError):
    status = 403
    error = "insufficient_scope"

    def __init__(self, description: str, scopes: Sequence[str]) -> None:
        super().__init__(description)
        #: Every scope the request needs, held or not (one challenge, never one scope at a time).
        self.scopes = tuple(scopes)


class InvalidDpopProof(AuthError):
    error = "invalid_dpop_proof"


class UseDpopNonce(InvalidDpopProof):
    error = "use_dpop_nonce"

    def __init__(self, description: str, nonce: str) -> None:
        super().__init__(description)
        self.nonce = nonce


class VerifierUnavailable(AuthError):
    status = 503
