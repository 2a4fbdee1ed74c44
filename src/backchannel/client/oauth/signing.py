"""The client's JOSE: DPoP proofs (RFC 9449) and ``private_key_jwt`` client assertions (RFC 7523).

Everything cryptographic is joserfc's (``pip install 'backchannel[auth]'``), imported when a
proof or an assertion is first made, so a client that uses neither does not need it. Keys are
ES256 (P-256) unless a private key of another type is handed in.
"""

from __future__ import annotations

__all__ = ["DpopKey", "client_assertion", "htu"]

import base64
import hashlib
import secrets
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

_ASSERTION_SECONDS = 60


def _joserfc() -> Any:
    try:
        import joserfc.jwk
        import joserfc.jwt
    except ImportError as exc:  # pragma: no cover - the extra is a declared dependency
        raise ImportError("DPoP and private_key_jwt need joserfc: pip install 'backchannel[auth]'") from exc
    return joserfc


def htu(url: str) -> str:
    """The ``htu`` of a proof: the request URL without its query and fragment (RFC 9449 §4.2)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path or "/", "", ""))


class DpopKey:
    """The key a client proves possession of. Keep ``to_dict()`` with the tokens bound to it
    (it holds the private key): a refreshed or reused token needs the same key."""

    algorithm = "ES256"

    def __init__(self, jwk: dict[str, Any] | None = None) -> None:
        joserfc = _joserfc()
        if jwk is None:
            self._key = joserfc.jwk.ECKey.generate_key("P-256")
        else:
            self._key = joserfc.jwk.ECKey.import_key(jwk)
        self._public = self._key.as_dict(private=False)

    def to_dict(self) -> dict[str, Any]:
        return dict(self._key.as_dict(private=True))

    def thumbprint(self) -> str:
        """The JWK SHA-256 thumbprint (RFC 7638): the ``jkt`` a bound token carries."""
        return str(self._key.thumbprint())

    def proof(self, method: str, url: str, *, nonce: str | None = None, access_token: str | None = None) -> str:
        """A fresh proof for one HTTP request: a new ``jti`` every time, ``ath`` for a resource request."""
        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(24),
            "htm": method.upper(),
            "htu": htu(url),
            "iat": int(time.time()),
        }
        if nonce is not None:
            claims["nonce"] = nonce
        if access_token is not None:
            digest = hashlib.sha256(access_token.encode("ascii")).digest()
            claims["ath"] = base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")
        header = {"typ": "dpop+jwt", "alg": self.algorithm, "jwk": self._public}
        return str(_joserfc().jwt.encode(header, claims, self._key))


def client_assertion(private_key: str | dict[str, Any], algorithm: str, client_id: str, audience: str) -> str:
    """A ``private_key_jwt`` client assertion (RFC 7523 §2.2): ``iss`` and ``sub`` the client,
    ``aud`` the authorization server's issuer identifier, valid for a minute, used once."""
    joserfc = _joserfc()
    kind = {"ES": joserfc.jwk.ECKey, "RS": joserfc.jwk.RSAKey, "PS": joserfc.jwk.RSAKey}.get(
        algorithm[:2], joserfc.jwk.OKPKey
    )
    key = kind.import_key(private_key)
    now = int(time.time())
    claims = {
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": now,
        "exp": now + _ASSERTION_SECONDS,
        "jti": secrets.token_urlsafe(24),
    }
    return str(joserfc.jwt.encode({"alg": algorithm, "typ": "JWT"}, claims, key, algorithms=[algorithm]))
