"""Who is calling: a pluggable authenticator turns request headers into a principal.

Sessions are bound to the principal that created them; another principal that
presents the same session id is told the session does not exist.
"""

from __future__ import annotations

__all__ = ["Authenticator", "BearerTokens", "Principal"]

import hmac
from collections.abc import Awaitable, Callable, Mapping

#: Any hashable value that identifies a caller (a user id, a client id...).
Principal = str

#: ``await authenticator(headers)`` with lowercase header names: the principal, or
#: None to refuse the request with 401.
Authenticator = Callable[[Mapping[str, str]], Awaitable[Principal | None]]


class BearerTokens:
    """An authenticator for a fixed table of bearer tokens: ``{token: principal}``."""

    def __init__(self, tokens: Mapping[str, Principal]) -> None:
        self._tokens = dict(tokens)

    async def __call__(self, headers: Mapping[str, str]) -> Principal | None:
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token:
            return None
        for known, principal in self._tokens.items():
            if hmac.compare_digest(known.encode(), token.strip().encode()):
                return principal
        return None
