"""Why a login did not happen: one tree, drawn once.

::

    httpx2.HTTPError
    └── AuthorizationFailed           no token for the request; the message says why and what to do
        ├── MetadataRefused           a discovery document is missing, malformed or not to be trusted
        ├── AuthorizationDenied       the authorization response: an error, a wrong ``state`` or ``iss``
        ├── TokenRequestFailed        the token endpoint said no (``error``, ``error_description``)
        ├── LoginNeeded               a person must log in, and this grant never asks one (``KeptLogin``)
        └── StoreLocked               another process held the token store's lock too long (``path``)

They are ``httpx2.HTTPError`` subclasses because they are raised inside the HTTP exchange (the
``httpx2.Auth`` flow of ``OAuth``): the transport answers the request with a JSON-RPC error that
carries the message, as it does for any exchange that failed, so no caller waits forever.
"""

from __future__ import annotations

__all__ = [
    "AuthorizationDenied",
    "AuthorizationFailed",
    "LoginNeeded",
    "MetadataRefused",
    "StoreLocked",
    "TokenRequestFailed",
]

import httpx2


class AuthorizationFailed(httpx2.HTTPError):
    """No access token could be had for the request (see the message)."""


class MetadataRefused(AuthorizationFailed):
    """A protected-resource or authorization-server metadata document was missing or not trusted."""


class AuthorizationDenied(AuthorizationFailed):
    """The authorization response refused, or was refused: an ``error``, or a ``state`` or ``iss``
    that does not match the request (RFC 9207), in which case nothing of it was acted on."""


class TokenRequestFailed(AuthorizationFailed):
    """The token endpoint refused a grant; ``error`` is its OAuth error code (``invalid_grant``...)."""

    def __init__(self, message: str, *, error: str | None = None, description: str | None = None) -> None:
        super().__init__(message)
        self.error = error
        self.description = description


class LoginNeeded(AuthorizationFailed):
    """The server wants tokens that only a person's login can give, and the grant (``KeptLogin``)
    never starts one: log in once with a grant that does (``backchannel connect URL``)."""


class StoreLocked(AuthorizationFailed):
    """Another process held the token store's lock (``path``) for longer than this one would wait:
    it is logging in (a person at a browser) or refreshing; try again once it is done."""

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path
