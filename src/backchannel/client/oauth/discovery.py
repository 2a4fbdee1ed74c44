"""Fetching the discovery documents: the resource's metadata, then its authorization server's.

``find_resource`` reads the protected-resource metadata the 401 named, or else the well-known
URLs in order; a server with none at all is one of 2025-03-26, whose authorization server is
found at its own origin (``find_legacy_server``), down to the default endpoints when even that
has no metadata. ``find_server`` tries each well-known URL of an issuer and uses the first
document whose ``issuer`` is that issuer exactly; one that names another is passed over.
"""

from __future__ import annotations

__all__ = ["find_legacy_server", "find_resource", "find_server"]

import logging
from typing import Any
from urllib.parse import urlsplit

import httpx2

from .errors import MetadataRefused
from .metadata import ResourceMetadata, ServerMetadata, resource_candidates, secure, server_candidates

logger = logging.getLogger("backchannel.oauth")
_ACCEPT = {"accept": "application/json"}


async def find_resource(
    http: httpx2.AsyncClient, server_url: str, named: str | None, *, allow_http: bool = False
) -> ResourceMetadata | None:
    """The resource metadata for ``server_url`` (RFC 9728): at ``named`` (from the challenge) if
    that serves one, else at the well-known URLs; None when there is none anywhere."""
    candidates = resource_candidates(server_url)
    if named is not None:
        if not secure(named, allow_http=allow_http):
            raise MetadataRefused(f"the server named its resource metadata at an insecure URL: {named}")
        candidates = [named, *(url for url in candidates if url != named)]
    for url in candidates:
        document = await _get_json(http, url)
        if document is not None:
            return ResourceMetadata.parse(document, url=url, server_url=server_url)
    return None


async def find_server(http: httpx2.AsyncClient, issuer: str, *, allow_http: bool = False) -> ServerMetadata:
    """The metadata of the authorization server ``issuer`` (RFC 8414 / OpenID Discovery), or ``MetadataRefused``."""
    found, refusals = await _server_documents(http, issuer, allow_http=allow_http)
    if found is not None:
        return found
    tried = ", ".join(server_candidates(issuer))
    why = "; ".join(refusals) if refusals else f"none of {tried} serves it"
    raise MetadataRefused(f"no usable metadata for the authorization server {issuer}: {why}")


async def find_legacy_server(http: httpx2.AsyncClient, server_url: str, *, allow_http: bool = False) -> ServerMetadata:
    """A 2025-03-26 server (no resource metadata): its origin is the authorization server, with
    its metadata if it serves some, else the default endpoints ``/authorize``, ``/token``, ``/register``."""
    parts = urlsplit(server_url)
    origin = f"{parts.scheme}://{parts.netloc}"
    if not secure(origin, allow_http=allow_http):
        raise MetadataRefused(f"{server_url} is not https: no login is attempted over plain HTTP")
    found, refusals = await _server_documents(http, origin, allow_http=allow_http)
    if found is not None:
        return found
    if refusals:
        raise MetadataRefused(f"no usable metadata for the authorization server {origin}: {'; '.join(refusals)}")
    logger.info("%s publishes no authorization metadata: using the default endpoints at %s", server_url, origin)
    return ServerMetadata.defaults(server_url)


async def _server_documents(
    http: httpx2.AsyncClient, issuer: str, *, allow_http: bool
) -> tuple[ServerMetadata | None, list[str]]:
    if not secure(issuer, allow_http=allow_http):
        raise MetadataRefused(f"the authorization server {issuer} is not https: no login is attempted over plain HTTP")
    refusals: list[str] = []
    for url in server_candidates(issuer):
        document = await _get_json(http, url)
        if document is None:
            continue
        try:
            return ServerMetadata.parse(document, url=url, issuer=issuer, allow_http=allow_http), refusals
        except MetadataRefused as exc:
            logger.warning("%s", exc)
            refusals.append(str(exc))
    return None, refusals


async def _get_json(http: httpx2.AsyncClient, url: str) -> Any:
    """The JSON document at ``url``; None when there is none (an error status, or not JSON)."""
    try:
        response = await http.get(url, headers=_ACCEPT, follow_redirects=False)
    except httpx2.HTTPError as exc:
        raise MetadataRefused(f"{url} cannot be fetched: {exc}") from exc
    if response.status_code != 200:
        return None
    try:
        return response.json()
    except ValueError:
        return None
