"""The discovery documents and the URLs they are found at (RFC 9728, RFC 8414, OpenID Discovery).

Pure: what to fetch, in which order, and what makes a document trustworthy. ``discovery.py``
does the fetching.

- A protected resource's metadata is at the path-aware well-known URL first, then at the root
  (``resource_candidates``), unless the 401 named it (``resource_metadata``).
- An authorization server's metadata is at the RFC 8414 URL, then the OpenID ones, with the
  issuer's path inserted or appended (``server_candidates``); the document's ``issuer`` must be
  exactly the identifier the URL was built from, or it is not used (``ServerMetadata.parse``).
- Endpoints must be ``https``, or ``http`` on a loopback host (``secure``).
"""

from __future__ import annotations

__all__ = [
    "ResourceMetadata",
    "ServerMetadata",
    "canonical_resource",
    "resource_candidates",
    "resource_covers",
    "secure",
    "server_candidates",
]

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from .errors import MetadataRefused

_PRM = "/.well-known/oauth-protected-resource"
_RFC8414 = "/.well-known/oauth-authorization-server"
_OPENID = "/.well-known/openid-configuration"


def canonical_resource(url: str) -> str:
    """The resource identifier of an endpoint when no metadata names one (RFC 8707 §2): the URL
    without its fragment or query, and without the lone ``/`` of an empty path."""
    parts = urlsplit(url)
    path = "" if parts.path == "/" else parts.path
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def resource_candidates(server_url: str) -> list[str]:
    """Where a server's protected-resource metadata may be, in the order the spec tries them."""
    parts = urlsplit(server_url)
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    return [f"{origin}{_PRM}{path}", f"{origin}{_PRM}"] if path else [f"{origin}{_PRM}"]


def server_candidates(issuer: str) -> list[str]:
    """Where an authorization server's metadata may be, in the spec's order (RFC 8414 §3.1, §5)."""
    parts = urlsplit(issuer)
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    if not path:
        return [f"{origin}{_RFC8414}", f"{origin}{_OPENID}"]
    return [f"{origin}{_RFC8414}{path}", f"{origin}{_OPENID}{path}", f"{origin}{path}{_OPENID}"]


def resource_covers(resource: str, server_url: str) -> bool:
    """Whether the resource a metadata document names is the server we asked, or contains it:
    the same origin, and a path that is the server's or one of its parent paths."""
    named, asked = urlsplit(resource), urlsplit(server_url)
    if _origin(resource) is None or _origin(resource) != _origin(server_url):
        return False
    prefix = named.path.rstrip("/")
    return asked.path == prefix or asked.path.startswith(prefix + "/") or not prefix


def secure(url: str, *, allow_http: bool = False) -> bool:
    """``https``, or ``http`` on a loopback host (or anywhere, with ``allow_http``)."""
    parts = urlsplit(url)
    if parts.scheme == "https":
        return True
    if parts.scheme != "http" or not parts.hostname:
        return False
    return allow_http or _loopback(parts.hostname)


def _loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _origin(url: str) -> tuple[str, str, int | None] | None:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port or {"http": 80, "https": 443}.get(scheme)
    except ValueError:
        return None
    return scheme, (parts.hostname or "").lower(), port


def _strings(value: Any) -> tuple[str, ...] | None:
    if not isinstance(value, list):
        return None
    return tuple(item for item in value if isinstance(item, str))


@dataclass(frozen=True, slots=True)
class ResourceMetadata:
    """A protected resource's metadata (RFC 9728 §2), as far as a client uses it."""

    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None = None
    dpop_algs: tuple[str, ...] | None = None
    dpop_required: bool = False
    url: str = ""

    @classmethod
    def parse(cls, document: Any, *, url: str, server_url: str) -> ResourceMetadata:
        """Read a fetched document; ``MetadataRefused`` unless it names ``server_url`` (or a parent)
        and at least one authorization server."""
        if not isinstance(document, Mapping):
            raise MetadataRefused(f"the protected resource metadata at {url} is not a JSON object")
        resource = document.get("resource")
        if not isinstance(resource, str) or not resource:
            raise MetadataRefused(f"the protected resource metadata at {url} names no resource")
        if not resource_covers(resource, server_url):
            raise MetadataRefused(
                f"the protected resource metadata at {url} is for {resource}, not {server_url}: "
                "refusing to authorize for another resource"
            )
        servers = _strings(document.get("authorization_servers")) or ()
        if not servers:
            raise MetadataRefused(f"the protected resource metadata at {url} lists no authorization server")
        return cls(
            resource=resource,
            authorization_servers=servers,
            scopes_supported=_strings(document.get("scopes_supported")),
            dpop_algs=_strings(document.get("dpop_signing_alg_values_supported")),
            dpop_required=document.get("dpop_bound_access_tokens_required") is True,
            url=url,
        )


@dataclass(frozen=True, slots=True)
class ServerMetadata:
    """An authorization server's metadata (RFC 8414 §2), as far as a client uses it."""

    issuer: str
    authorization_endpoint: str | None
    token_endpoint: str
    registration_endpoint: str | None = None
    revocation_endpoint: str | None = None
    scopes_supported: tuple[str, ...] | None = None
    code_challenge_methods: tuple[str, ...] | None = None
    auth_methods: tuple[str, ...] | None = None
    grant_types: tuple[str, ...] | None = None
    iss_parameter: bool = False
    cimd: bool = False
    dpop_algs: tuple[str, ...] | None = None
    #: False when no document was found and the 2025-03-26 default endpoints are used.
    discovered: bool = True
    raw: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, document: Any, *, url: str, issuer: str, allow_http: bool = False) -> ServerMetadata:
        """Read a fetched document; ``MetadataRefused`` when its ``issuer`` is not exactly ``issuer``
        (RFC 8414 §3.3: a simple string comparison) or an endpoint is missing or insecure."""
        if not isinstance(document, Mapping):
            raise MetadataRefused(f"the authorization server metadata at {url} is not a JSON object")
        named = document.get("issuer")
        if named != issuer:
            raise MetadataRefused(
                f"the authorization server metadata at {url} names issuer {named!r}, not {issuer!r}: not used"
            )
        endpoints: dict[str, str | None] = {}
        for key in ("authorization_endpoint", "token_endpoint", "registration_endpoint", "revocation_endpoint"):
            value = document.get(key)
            if value is not None and (not isinstance(value, str) or not secure(value, allow_http=allow_http)):
                raise MetadataRefused(f"the authorization server metadata at {url} has an unusable {key}: {value!r}")
            endpoints[key] = value
        token_endpoint = endpoints["token_endpoint"]
        if token_endpoint is None:
            raise MetadataRefused(f"the authorization server metadata at {url} has no token_endpoint")
        return cls(
            issuer=issuer,
            authorization_endpoint=endpoints["authorization_endpoint"],
            token_endpoint=token_endpoint,
            registration_endpoint=endpoints["registration_endpoint"],
            revocation_endpoint=endpoints["revocation_endpoint"],
            scopes_supported=_strings(document.get("scopes_supported")),
            code_challenge_methods=_strings(document.get("code_challenge_methods_supported")),
            auth_methods=_strings(document.get("token_endpoint_auth_methods_supported")),
            grant_types=_strings(document.get("grant_types_supported")),
            iss_parameter=document.get("authorization_response_iss_parameter_supported") is True,
            cimd=document.get("client_id_metadata_document_supported") is True,
            dpop_algs=_strings(document.get("dpop_signing_alg_values_supported")),
            raw=dict(document),
        )

    @classmethod
    def defaults(cls, server_url: str) -> ServerMetadata:
        """The 2025-03-26 fallback for a server with no metadata at all: ``/authorize``,
        ``/token`` and ``/register`` at the MCP server's origin, the origin as issuer."""
        parts = urlsplit(server_url)
        origin = f"{parts.scheme}://{parts.netloc}"
        return cls(
            issuer=origin,
            authorization_endpoint=f"{origin}/authorize",
            token_endpoint=f"{origin}/token",
            registration_endpoint=f"{origin}/register",
            discovered=False,
        )

    def supports_auth_method(self, method: str) -> bool:
        # RFC 8414 §2: when the list is absent, client_secret_basic is the default.
        return method in (self.auth_methods if self.auth_methods is not None else ("client_secret_basic",))
