"""URLs as the auth checks compare them (no JOSE here, so the HTTP app loads it for free)."""

from __future__ import annotations

__all__ = ["audience_form", "normalized_url"]


def _normalized(url: str, *, as_audience: bool) -> str:
    # RFC 3986 §6.2.2-6.2.3: scheme and host lowercase, no default port, an empty path as "/".
    # The user information is kept: ``https://user@host/`` is not ``https://host/``.
    from urllib.parse import urlsplit  # (0.5 MiB with ipaddress: not loaded by a server without auth)

    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port  # ValueError for a port that is not one (":abc", ":99999")
    if port is not None and (scheme, port) not in (("http", 80), ("https", 443)):
        host = f"{host}:{port}"
    userinfo, at, _ = parts.netloc.rpartition("@")
    if not as_audience:
        return f"{scheme}://{userinfo}{at}{host}{parts.path or '/'}"
    normal = f"{scheme}://{userinfo}{at}{host}{parts.path.rstrip('/')}"
    rest, hashed, _ = url.partition("#")
    if "?" in rest:  # an empty query ("...mcp?") is still a query (RFC 3986 §6.2.3)
        normal += f"?{parts.query}"
    if hashed:
        normal += f"#{parts.fragment}"
    return normal


def normalized_url(url: str) -> str:
    """``url`` as a DPoP ``htu`` compares (RFC 9449 §4.3 step 9): no query or fragment, scheme
    and host lowercase, no default port, an empty path as ``/``, user information kept. Raises
    ``ValueError`` for a malformed URL (a port that is none)."""
    return _normalized(url, as_audience=False)


def audience_form(value: str) -> str:
    """An audience as compared: a URI in the canonical form of RFC 8707 §2 and the MCP
    authorization spec's "Canonical Server URI" (scheme and host lowercase, the spec asking
    servers to accept upper-case ones; no default port; no trailing slash, the form the spec
    asks for), with everything else that names a resource kept: user information, query and
    fragment, so ``https://user@host/mcp`` and ``https://host/mcp?x=1`` are not
    ``https://host/mcp``. Anything that is not a URI (an API identifier) is compared as it is."""
    if "://" not in value:
        return value
    try:
        return _normalized(value, as_audience=True)
    except ValueError:  # not a URI after all: compared as it is
        return value
