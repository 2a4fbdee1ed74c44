"""URLs as the auth checks compare them (no JOSE here, so the HTTP app loads it for free)."""

from __future__ import annotations

__all__ = ["audience_form", "normalized_url"]


def normalized_url(url: str) -> str:
    """``url`` as a DPoP ``htu`` compares (RFC 9449 §4.3 step 9): no query or fragment, scheme
    and host lowercase, no default port, an empty path as ``/``. Raises ``ValueError`` for a
    malformed URL (a bad port)."""
    from urllib.parse import urlsplit  # (0.5 MiB with ipaddress: not loaded by a server without auth)

    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    if port is not None and (scheme, port) not in (("http", 80), ("https", 443)):
        host = f"{host}:{port}"
    return f"{scheme}://{host}{parts.path or '/'}"


def audience_form(value: str) -> str:
    """An audience as compared: a URI normalised as ``htu`` is, and without a trailing slash
    (RFC 8707 canonical URIs; the spec asks servers to accept upper-case schemes and hosts);
    anything else (an API identifier) as it is."""
    if "://" not in value:
        return value
    try:
        return normalized_url(value).rstrip("/")
    except ValueError:  # not a URI after all: compared as it is
        return value
