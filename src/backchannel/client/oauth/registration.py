"""Who the client is at an authorization server: pre-registered, a metadata document, or registered now.

The spec's order (2026-07-28 client-registration.mdx): credentials given in advance; else a
client ID metadata document URL when the server says it fetches them
(``client_id_metadata_document_supported``); else dynamic registration (RFC 7591) when it has a
``registration_endpoint``. A registration belongs to the issuer that made it and is kept under
that issuer only: a new authorization server means a new registration, never the old one's
credentials.
"""

from __future__ import annotations

__all__ = ["RegisteredClient", "register", "registration_method", "validate_metadata_url"]

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx2

from .errors import AuthorizationFailed
from .metadata import ServerMetadata
from .tokens import ClientAuthentication

#: Ours to ask for, most wanted first: a native client keeps no secret ("none"), but takes one.
_METHODS = ("none", "client_secret_basic", "client_secret_post")


@dataclass(frozen=True, slots=True)
class RegisteredClient:
    """A client identity at one authorization server."""

    client_id: str
    client_secret: str | None = None
    method: str = "none"
    redirect_uris: tuple[str, ...] = ()
    #: The issuer it belongs to; None for credentials not yet bound to one.
    issuer: str | None = None

    def authentication(self) -> ClientAuthentication:
        return ClientAuthentication(self.client_id, self.method, self.client_secret)

    def to_dict(self) -> dict[str, Any]:
        value = asdict(self)
        value["redirect_uris"] = list(self.redirect_uris)
        return value

    @classmethod
    def from_dict(cls, value: dict[str, Any]) -> RegisteredClient | None:
        client_id = value.get("client_id")
        if not isinstance(client_id, str):
            return None
        secret = value.get("client_secret")
        uris = value.get("redirect_uris")
        return cls(
            client_id=client_id,
            client_secret=secret if isinstance(secret, str) else None,
            method=str(value.get("method") or "none"),
            redirect_uris=tuple(str(u) for u in uris) if isinstance(uris, list) else (),
            issuer=value.get("issuer") if isinstance(value.get("issuer"), str) else None,
        )


def validate_metadata_url(url: str) -> str:
    """``url``, if it can be a client ID metadata document URL: ``https``, with a path
    (draft-ietf-oauth-client-id-metadata-document); else ``ValueError``."""
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.netloc or parts.path in ("", "/") or parts.fragment:
        raise ValueError(f"a client ID metadata document URL must be https with a path and no fragment: {url!r}")
    return url


def registration_method(server: ServerMetadata, *, has_secret: bool) -> str:
    """The token endpoint authentication to use with ``server``: for a client with a secret,
    ``client_secret_basic`` unless the server takes only ``client_secret_post``."""
    if not has_secret:
        return "none"
    if server.supports_auth_method("client_secret_basic") or not server.supports_auth_method("client_secret_post"):
        return "client_secret_basic"
    return "client_secret_post"


async def register(
    http: httpx2.AsyncClient,
    server: ServerMetadata,
    *,
    client_name: str,
    redirect_uri: str,
    grant_types: Sequence[str],
    scopes: Sequence[str] | None = None,
) -> RegisteredClient:
    """Register with ``server`` (RFC 7591), as a native application when the redirect is a
    loopback one (OpenID registration; 2026-07-28 asks for an ``application_type``)."""
    if server.registration_endpoint is None:
        raise AuthorizationFailed(
            f"the authorization server {server.issuer} offers neither client ID metadata documents nor dynamic "
            "registration: register a client there and pass its client_id (and client_secret) to OAuth"
        )
    offered = server.auth_methods
    method = next((m for m in _METHODS if offered is None or m in offered), "client_secret_basic")
    host = (urlsplit(redirect_uri).hostname or "").lower()
    native = host in ("localhost", "127.0.0.1", "::1") or urlsplit(redirect_uri).scheme not in ("http", "https")
    body: dict[str, Any] = {
        "client_name": client_name,
        "redirect_uris": [redirect_uri],
        "grant_types": list(grant_types),
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
        "application_type": "native" if native else "web",
    }
    if scopes:
        body["scope"] = " ".join(scopes)
    try:
        response = await http.post(server.registration_endpoint, json=body, headers={"accept": "application/json"})
    except httpx2.HTTPError as exc:
        raise AuthorizationFailed(f"registering with {server.issuer} failed: {exc}") from exc
    try:
        answer = response.json()
    except ValueError:
        answer = None
    if response.status_code not in (200, 201) or not isinstance(answer, dict) or not answer.get("client_id"):
        said = answer.get("error_description") or answer.get("error") if isinstance(answer, dict) else None
        raise AuthorizationFailed(
            f"{server.issuer} refused to register this client (HTTP {response.status_code}"
            f"{': ' + str(said) if said else ''}); if it keeps refusing, register one there and pass its client_id"
        )
    secret = answer.get("client_secret")
    granted = answer.get("token_endpoint_auth_method")
    if not isinstance(granted, str):
        granted = registration_method(server, has_secret=True) if isinstance(secret, str) else "none"
    return RegisteredClient(
        client_id=str(answer["client_id"]),
        client_secret=secret if isinstance(secret, str) else None,
        method=granted,
        redirect_uris=(redirect_uri,),
        issuer=server.issuer,
    )
