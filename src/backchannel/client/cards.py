"""Reading a Server Card before connecting (``Client.discover_card``; ``types/server_card.py``).

The URL given is one of three things, told apart by its path: a card's own URL (ending in
``/server-card``), a Streamable HTTP endpoint (the card is then at ``<endpoint>/server-card``,
the recommended place), or a domain (no path: its AI Catalog at ``/.well-known/ai-catalog.json``
is read, and the first entry of type ``application/mcp-server-card+json`` followed, or its inline
``data`` taken). Each GET says the media type it wants in ``Accept``, as discovery.md asks.
"""

from __future__ import annotations

__all__ = ["discover_card"]

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from ..types.server_card import (
    CARD_MEDIA_TYPE,
    CARD_SUFFIX,
    CATALOG_MEDIA_TYPE,
    CATALOG_PATH,
    CardError,
    DiscoveredCard,
    check_card,
)


async def discover_card(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    httpx_client: Any = None,
    timeout: float = 10.0,
    etag: str | None = None,
) -> DiscoveredCard | None:
    """The Server Card ``url`` leads to (see the module docstring), checked (``check_card``).

    ``headers`` go on each request; ``httpx_client`` (an ``httpx2.AsyncClient``) is used instead
    of a client of its own; ``etag``, a card's earlier ``etag``: None is returned when the card has
    not changed since (304). ``CardError`` says in one line why no card could be read."""
    import httpx2 as httpx  # (loaded here: discovering is rare, connecting needs it anyway)

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise CardError(f"a Server Card is found from an http(s) URL, not {url!r}")
    own = httpx_client is None
    client = httpx.AsyncClient(timeout=timeout) if own else httpx_client
    try:
        path = parts.path.rstrip("/")
        if not path:
            catalog_url = f"{parts.scheme}://{parts.netloc}{CATALOG_PATH}"
            catalog, _ = await _get(client, catalog_url, CATALOG_MEDIA_TYPE, headers, None)
            entry = _card_entry(catalog, catalog_url)
            if "data" in entry:
                return DiscoveredCard(check_card(entry["data"]), catalog_url)
            card_url = entry.get("url")
            if not isinstance(card_url, str) or urlsplit(card_url).scheme not in ("http", "https"):
                raise CardError(f"{catalog_url}: its Server Card entry has no http(s) url or data")
        else:
            card_url = url if path.endswith(CARD_SUFFIX) else f"{url.rstrip('/')}{CARD_SUFFIX}"
        document, tag = await _get(client, card_url, CARD_MEDIA_TYPE, headers, etag)
        if document is None:
            return None
        return DiscoveredCard(check_card(document), card_url, tag)
    finally:
        if own:
            await client.aclose()


async def _get(
    client: Any, url: str, media: str, headers: Mapping[str, str] | None, etag: str | None
) -> tuple[Any, str | None]:
    import httpx2 as httpx

    sent = {**(headers or {}), "accept": f"{media}, application/json;q=0.9"}
    if etag is not None:
        sent["if-none-match"] = etag
    try:
        response = await client.get(url, headers=sent)
    except httpx.HTTPError as exc:
        raise CardError(f"{url}: {type(exc).__name__}: {exc}") from exc
    if response.status_code == 304 and etag is not None:
        return None, etag
    if response.status_code != 200:
        raise CardError(f"{url}: HTTP {response.status_code}")
    try:
        return response.json(), response.headers.get("etag")
    except ValueError as exc:
        raise CardError(f"{url}: the answer is not JSON") from exc


def _card_entry(catalog: Any, url: str) -> dict[str, Any]:
    entries = catalog.get("entries") if isinstance(catalog, dict) else None
    if not isinstance(entries, list):
        raise CardError(f"{url}: not an AI Catalog (no entries)")
    for entry in entries:
        if isinstance(entry, dict) and entry.get("type") == CARD_MEDIA_TYPE:
            return entry
    raise CardError(f"{url}: the AI Catalog names no Server Card ({CARD_MEDIA_TYPE})")
