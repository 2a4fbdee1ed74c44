"""Tokens and the token endpoint: what a grant brings back, and how a client asks for it.

``token_request`` POSTs one grant to an authorization server's token endpoint with the
client's authentication (``ClientAuthentication``: none, ``client_secret_basic``,
``client_secret_post`` or ``private_key_jwt``) and, for DPoP, a fresh proof; a
``use_dpop_nonce`` answer (RFC 9449 §8) is retried once with the nonce it names. A refusal
raises ``TokenRequestFailed`` with the server's ``error``; nothing else is retried.
"""

from __future__ import annotations

__all__ = ["ClientAuthentication", "TokenSet", "revoke", "token_request"]

import base64
import time
from collections.abc import Mapping, MutableMapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any
from urllib.parse import quote_plus, urlsplit

import httpx2

from .errors import TokenRequestFailed
from .signing import DpopKey, client_assertion

_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


@dataclass(frozen=True, slots=True)
class TokenSet:
    """An access token (and maybe a refresh token) from one issuer, for one resource."""

    access_token: str
    token_type: str = "Bearer"
    refresh_token: str | None = None
    #: Seconds since the epoch; None when the server did not say.
    expires_at: float | None = None
    #: Granted scopes: the response's ``scope``, else those asked for.
    scopes: tuple[str, ...] | None = None
    issuer: str = ""
    resource: str = ""
    #: The private JWK a DPoP-bound token is bound to (``DpopKey.to_dict``).
    dpop_key: dict[str, Any] | None = field(default=None, repr=False)

    def expiring(self, margin: float, now: float | None = None) -> bool:
        """Whether it expires within ``margin`` seconds (or already has)."""
        return self.expires_at is not None and self.expires_at - margin <= (time.time() if now is None else now)

    @property
    def bound(self) -> bool:
        """A DPoP-bound token, presented with the ``DPoP`` scheme and a proof."""
        return self.token_type.lower() == "dpop" and self.dpop_key is not None

    def to_dict(self) -> dict[str, Any]:
        """The token set as plain JSON data, for a ``TokenStore``; ``from_dict`` reads it back."""
        value = asdict(self)
        value["scopes"] = list(self.scopes) if self.scopes is not None else None
        return value

    @classmethod
    def from_dict(cls, value: Mapping[str, Any]) -> TokenSet | None:
        """A stored token set; None when the record is not one."""
        token = value.get("access_token")
        if not isinstance(token, str):
            return None
        scopes = value.get("scopes")
        expires = value.get("expires_at")
        return cls(
            access_token=token,
            token_type=str(value.get("token_type") or "Bearer"),
            refresh_token=value.get("refresh_token") if isinstance(value.get("refresh_token"), str) else None,
            expires_at=float(expires) if isinstance(expires, int | float) else None,
            scopes=tuple(str(s) for s in scopes) if isinstance(scopes, list) else None,
            issuer=str(value.get("issuer") or ""),
            resource=str(value.get("resource") or ""),
            dpop_key=value.get("dpop_key") if isinstance(value.get("dpop_key"), dict) else None,
        )

    def refreshed(self, newer: TokenSet) -> TokenSet:
        """``newer`` from a refresh: the old refresh token and scopes stand where it names none."""
        return replace(
            newer,
            refresh_token=newer.refresh_token or self.refresh_token,
            scopes=newer.scopes if newer.scopes is not None else self.scopes,
        )


@dataclass(frozen=True, slots=True)
class ClientAuthentication:
    """How a client proves who it is at the token endpoint (RFC 6749 §2.3, RFC 7523 §2.2)."""

    client_id: str
    method: str = "none"
    secret: str | None = field(default=None, repr=False)
    #: For ``private_key_jwt``: a PEM text or a private JWK.
    private_key: str | dict[str, Any] | None = field(default=None, repr=False)
    algorithm: str = "ES256"

    def apply(self, form: MutableMapping[str, str], headers: MutableMapping[str, str], issuer: str) -> None:
        """Add the credentials to a token request whose server's issuer is ``issuer``."""
        if self.method == "client_secret_basic":
            # RFC 6749 §2.3.1: both parts form-encoded before the Basic encoding.
            pair = f"{quote_plus(self.client_id)}:{quote_plus(self.secret or '')}"
            headers["authorization"] = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
            return
        form["client_id"] = self.client_id
        if self.method == "client_secret_post":
            form["client_secret"] = self.secret or ""
        elif self.method == "private_key_jwt":
            if self.private_key is None:
                raise ValueError("private_key_jwt needs a private key")
            form["client_assertion_type"] = _ASSERTION_TYPE
            form["client_assertion"] = client_assertion(self.private_key, self.algorithm, self.client_id, issuer)


async def token_request(
    http: httpx2.AsyncClient,
    token_endpoint: str,
    issuer: str,
    form: Mapping[str, str],
    client: ClientAuthentication | None,
    *,
    dpop: DpopKey | None = None,
    nonces: MutableMapping[str, str] | None = None,
    resource: str = "",
    requested: tuple[str, ...] | None = None,
) -> TokenSet:
    """POST ``form`` to ``token_endpoint``; the tokens, or ``TokenRequestFailed``."""
    nonces = nonces if nonces is not None else {}
    origin = _origin(token_endpoint)
    for attempt in range(2):
        body = {key: value for key, value in form.items() if value is not None}
        headers = {"accept": "application/json"}
        if client is not None:
            client.apply(body, headers, issuer)
        if dpop is not None:
            headers["dpop"] = dpop.proof("POST", token_endpoint, nonce=nonces.get(origin))
        try:
            response = await http.post(token_endpoint, data=body, headers=headers)
        except httpx2.HTTPError as exc:
            raise TokenRequestFailed(f"the token endpoint {token_endpoint} cannot be reached: {exc}") from exc
        if nonce := response.headers.get("dpop-nonce"):
            nonces[origin] = nonce
        answer = _json(response)
        if response.status_code == 400 and answer.get("error") == "use_dpop_nonce" and dpop and nonce and not attempt:
            continue  # RFC 9449 §8: once more, with the nonce the server just named
        break
    grant = form.get("grant_type", "a token")
    error, description = answer.get("error"), answer.get("error_description")
    token = answer.get("access_token")
    if response.status_code != 200 or not isinstance(token, str) or not token:
        said = f"{error}: {description}" if description else str(error or f"HTTP {response.status_code}")
        raise TokenRequestFailed(
            f"the authorization server {issuer} refused the {grant} request: {said}",
            error=error if isinstance(error, str) else None,
            description=description if isinstance(description, str) else None,
        )
    token_type = str(answer.get("token_type") or "Bearer")
    lifetime = answer.get("expires_in")
    scope = answer.get("scope")
    return TokenSet(
        access_token=token,
        token_type=token_type,
        refresh_token=answer.get("refresh_token") if isinstance(answer.get("refresh_token"), str) else None,
        expires_at=time.time() + float(lifetime) if isinstance(lifetime, int | float) and lifetime > 0 else None,
        scopes=tuple(scope.split()) if isinstance(scope, str) else requested,
        issuer=issuer,
        resource=resource,
        dpop_key=dpop.to_dict() if dpop is not None and token_type.lower() == "dpop" else None,
    )


async def revoke(
    http: httpx2.AsyncClient, endpoint: str | None, issuer: str, token: str, client: ClientAuthentication | None
) -> None:
    """Ask the server to revoke a refresh token (RFC 7009), where it has a revocation endpoint."""
    if endpoint is None:
        return
    form = {"token": token, "token_type_hint": "refresh_token"}
    headers: dict[str, str] = {}
    if client is not None:
        client.apply(form, headers, issuer)
    await http.post(endpoint, data=form, headers=headers)


def _json(response: httpx2.Response) -> dict[str, Any]:
    try:
        value = response.json()
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()
