"""The Server Card served beside the endpoint, and the AI Catalog that names it.

``GET <endpoint>/server-card`` answers the card (``application/mcp-server-card+json``) and
``GET /.well-known/ai-catalog.json`` the catalog (``application/ai-catalog+json``), as the
extension's docs/discovery.md asks: CORS open to any origin (a card is public and read-only),
``Cache-Control: public, max-age=3600``, an ``ETag`` and ``304 Not Modified`` for a matching
``If-None-Match``; ``OPTIONS`` answers a browser's preflight. Other methods get 405. The card is
built from ``types.server_card.ServerCard`` and what the served server says of itself
(``CardSource``) when asked: the endpoint's URL comes from the request (its ``Host``, already one
of the app's allowed hosts) unless the card names it.
"""

from __future__ import annotations

__all__ = ["CardRoutes"]

import hashlib
import json
from collections.abc import Collection, Mapping
from typing import Any
from urllib.parse import urlsplit

from ..framing import http as H
from ..types.errors import InvalidRequest
from ..types.server_card import (
    CARD_MEDIA_TYPE,
    CARD_SUFFIX,
    CATALOG_MEDIA_TYPE,
    CATALOG_PATH,
    ServerCard,
    card_document,
    catalog_document,
)
from .asgi import Scope, Send, encode_headers, send_bytes
from .responses import send_rejection
from .served import CardSource

_CORS = {
    "access-control-allow-origin": "*",
    "access-control-allow-methods": "GET",
    "access-control-allow-headers": "Content-Type, If-None-Match",
    "access-control-expose-headers": "ETag",
}
_CACHE = {"cache-control": "public, max-age=3600"}


class CardRoutes:
    """The card's two paths for an app whose endpoint is at ``path``: ``handles`` says whether a
    request is one of them, ``serve`` answers it. ``oauth``: the endpoint is an OAuth protected
    resource (the card then asks for an ``Authorization`` header); ``sse``: the deprecated
    HTTP+SSE transport is served too, at ``/sse``."""

    def __init__(
        self,
        card: ServerCard,
        source: CardSource,
        *,
        path: str,
        oauth: bool,
        sse: bool,
    ) -> None:
        self.card = card
        self.source = source
        self.path = path
        self.oauth = oauth
        self.sse = sse

    def handles(self, path: str, root: str) -> bool:
        """``path`` is relative to where the app is mounted (``root``), without a trailing slash."""
        at_endpoint = path == f"{self.path.rstrip('/')}{CARD_SUFFIX}" or (
            path == CARD_SUFFIX and root.rstrip("/").endswith(self.path)
        )
        return at_endpoint or (path == CATALOG_PATH and not root and self.card.catalog)

    async def serve(
        self, scope: Scope, path: str, headers: Mapping[str, str], send: Send, allowed_hosts: Collection[str]
    ) -> None:
        """Answer a request ``handles`` said is ours, if its ``Host`` is one of ``allowed_hosts``."""
        rejection = H.check_host_and_origin(headers, allowed_hosts=allowed_hosts, allowed_origins=("*",))
        if rejection is not None:  # (DNS rebinding: the card names the endpoint by the Host it was asked for)
            await send_rejection(send, rejection)
            return
        method = scope.get("method")
        if method == "OPTIONS":
            await send_bytes(send, 204, b"", {**_CORS, "access-control-max-age": "86400"})
            return
        if method not in ("GET", "HEAD"):
            allow = {"allow": "GET, HEAD, OPTIONS", **_CORS}
            await send_rejection(send, H.Rejection(405, InvalidRequest(f"{method} is not allowed here"), allow))
            return
        card, card_url = self._card(scope, path, headers)
        if path == CATALOG_PATH:
            publisher = urlsplit(card_url).hostname or "localhost"
            body, media = _json(catalog_document(card, card_url, publisher)), CATALOG_MEDIA_TYPE
        else:
            body, media = _json(card), CARD_MEDIA_TYPE
        etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
        common = {"etag": etag, **_CACHE, **_CORS, "vary": "Host"}
        if etag in [tag.strip() for tag in headers.get("if-none-match", "").split(",")]:
            await send({"type": "http.response.start", "status": 304, "headers": encode_headers(common)})
            await send({"type": "http.response.body", "body": b""})
            return
        await send_bytes(send, 200, b"" if method == "HEAD" else body, {"content-type": media, **common})

    def _card(self, scope: Scope, path: str, headers: Mapping[str, str]) -> tuple[dict[str, Any], str]:
        """The card and its URL, for this request."""
        root = scope.get("root_path", "").rstrip("/")
        if self.card.url is not None:
            endpoint = self.card.url.rstrip("/")
        else:
            scheme = "https" if scope.get("scheme") in ("https", "wss") else "http"
            endpoint_path = root if path == CARD_SUFFIX and root.endswith(self.path) else f"{root}{self.path}"
            endpoint = f"{scheme}://{headers.get('host', 'localhost')}{endpoint_path}"
        parts = urlsplit(endpoint)
        origin = f"{parts.scheme}://{parts.netloc}"
        base = endpoint[: len(endpoint) - len(self.path)] if endpoint.endswith(self.path) else origin
        document = card_document(
            self.card,
            info=self.source.info,
            versions=self.source.versions,
            endpoint=endpoint,
            oauth=self.oauth,
            sse_url=f"{base}/sse" if self.sse else None,
        )
        return document, f"{endpoint}{CARD_SUFFIX}"


def _json(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
