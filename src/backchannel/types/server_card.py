"""Server Cards (the ``experimental-ext-server-card`` extension track, SEP-2127): a static JSON
document that describes a remote server enough to connect to it, before connecting.

The card (``application/mcp-server-card+json``) gives the server's identity (``name`` in
reverse-DNS form with one slash, ``version``, ``description``, and optionally ``title``,
``websiteUrl``, ``repository``, ``icons``), its ``remotes`` (each transport's URL, the headers it
needs, such as an ``Authorization`` to supply, and the protocol versions it speaks) and a
namespaced ``_meta``. It does not list tools, resources or prompts: "Server Cards intentionally
omit primitive listings" (the extension's README; docs/discovery.md: "Server Cards do not
enumerate primitives"). Its recommended place is ``GET <streamable-http-url>/server-card``; an AI
Catalog (``application/ai-catalog+json``) at ``/.well-known/ai-catalog.json`` points to it.

``ServerCard`` is what a server says of itself (``server.http_app(card=ServerCard(...))``);
``card_document`` and ``catalog_document`` build what is served; ``check_card`` is what a client
checks a card it read against (``CardError`` says why, in one line). A card is advisory: a client
verifies it against the connection and never bases a security decision on it.
"""

from __future__ import annotations

__all__ = [
    "CARD_MEDIA_TYPE",
    "CARD_SCHEMA",
    "CARD_SUFFIX",
    "CATALOG_MEDIA_TYPE",
    "CATALOG_PATH",
    "CardError",
    "DiscoveredCard",
    "ServerCard",
    "card_document",
    "catalog_document",
    "check_card",
]

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .versions import HANDSHAKE_VERSIONS

CARD_MEDIA_TYPE = "application/mcp-server-card+json"
CATALOG_MEDIA_TYPE = "application/ai-catalog+json"
CARD_SCHEMA = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"
#: Appended to the Streamable HTTP endpoint's URL: where the card is served.
CARD_SUFFIX = "/server-card"
#: Where a domain's AI Catalog is looked for.
CATALOG_PATH = "/.well-known/ai-catalog.json"

_NAME = re.compile(r"[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+")
_RANGE = re.compile(r"^[\^~<>=]|\*|(?:^|\.)[xX](?:\.|$)")
_REMOTE_URL = re.compile(r"(?:https?://\S+|\{[a-zA-Z_][a-zA-Z0-9_]*\}\S*)")
_TRANSPORTS = ("streamable-http", "sse")


class CardError(ValueError):
    """A Server Card (or the catalog that names it) that cannot be used: the reason, in one line."""


def _text(value: object, what: str, longest: int, *, shortest: int = 1) -> str:
    if not isinstance(value, str) or not shortest <= len(value) <= longest:
        raise CardError(f"a Server Card's {what} is a string of {shortest} to {longest} characters, not {value!r}")
    return value


def _name(value: object) -> str:
    if not isinstance(value, str) or not 3 <= len(value) <= 200 or _NAME.fullmatch(value) is None:
        raise CardError(
            f"a Server Card's name is reverse-DNS with one slash (com.example/weather), 3 to 200 characters, "
            f"not {value!r}"
        )
    return value


def _version(value: object) -> str:
    if not isinstance(value, str) or not value or len(value) > 255 or _RANGE.search(value):
        raise CardError(f"a Server Card's version is one version (1.0.2), not a range or {value!r}")
    return value


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerCard:
    """What a server publishes in its card (``HttpApp(card=...)``, ``server.http_app(card=...)``,
    ``run_http(card=...)``); the rest comes from the server: its version, title and website
    (``Server(..., title=, website_url=)``), the protocol versions it serves, the transports it
    is served on, and an ``Authorization`` header to supply when it is an OAuth protected resource.

    ``name``: reverse-DNS with one slash (``"com.example/weather"``); ``description``: 1 to 100
    characters, what it does. ``url``: the endpoint's public URL (default: the URL the card was
    asked for, less ``/server-card``; set it behind a proxy). ``headers``: more headers a client
    must or may send (``KeyValueInput`` objects of the schema). ``repository``, ``icons``,
    ``meta``: as the schema has them. ``catalog``: also serve ``/.well-known/ai-catalog.json``
    naming this card (when the app is at the root of its origin). Checked when made (``CardError``).
    """

    name: str
    description: str
    version: str | None = None
    title: str | None = None
    website_url: str | None = None
    url: str | None = None
    repository: Mapping[str, Any] | None = None
    icons: Sequence[Mapping[str, Any]] = ()
    headers: Sequence[Mapping[str, Any]] = ()
    meta: Mapping[str, Any] | None = None
    catalog: bool = True

    def __post_init__(self) -> None:
        _name(self.name)
        _text(self.description, "description", 100)
        if self.title is not None:
            _text(self.title, "title", 100)
        if self.version is not None:
            _version(self.version)
        if self.url is not None and not re.fullmatch(r"https?://\S+", self.url):
            raise CardError(f"a Server Card's url is the endpoint's http(s) URL, not {self.url!r}")


@dataclass(frozen=True, slots=True)
class DiscoveredCard:
    """A Server Card a client read (``Client.discover_card``): the ``card`` as served (checked),
    the ``url`` it was read from, and its ``etag`` (send it back as ``If-None-Match``). Advisory:
    verify it against the connection (``serverInfo``, the versions spoken) before relying on it."""

    card: dict[str, Any]
    url: str
    etag: str | None = None

    @property
    def name(self) -> str:
        return str(self.card["name"])

    @property
    def version(self) -> str:
        return str(self.card["version"])

    @property
    def description(self) -> str:
        return str(self.card["description"])

    @property
    def title(self) -> str | None:
        title = self.card.get("title")
        return title if isinstance(title, str) else None

    @property
    def endpoint(self) -> str | None:
        """The first Streamable HTTP endpoint whose URL needs no variable filled in, or None."""
        for remote in self.card.get("remotes", []):
            if remote.get("type") == "streamable-http" and "{" not in remote["url"]:
                return str(remote["url"])
        return None

    @property
    def supported_versions(self) -> list[str]:
        """The protocol versions that endpoint speaks, newest last, as the card lists them."""
        for remote in self.card.get("remotes", []):
            if remote.get("type") == "streamable-http" and remote["url"] == self.endpoint:
                return list(remote.get("supportedProtocolVersions", []))
        return []


def card_document(
    card: ServerCard,
    *,
    info: Mapping[str, Any],
    versions: Sequence[str],
    endpoint: str,
    oauth: bool = False,
    sse_url: str | None = None,
) -> dict[str, Any]:
    """The card a server serves: ``card`` with what the server says of itself (``info``: its
    ``serverInfo``; ``versions``: those it serves), its ``endpoint`` URL, an ``Authorization``
    header when it is an OAuth protected resource (``oauth``), and the deprecated HTTP+SSE
    transport's URL when it serves it (``sse_url``)."""
    document: dict[str, Any] = {
        "$schema": CARD_SCHEMA,
        "name": card.name,
        "version": card.version or str(info.get("version", "0.0.0")),
        "description": card.description,
    }
    title = card.title or info.get("title")
    if isinstance(title, str) and 0 < len(title) <= 100:
        document["title"] = title
    website = card.website_url or info.get("websiteUrl")
    if isinstance(website, str) and website:
        document["websiteUrl"] = website
    if card.repository is not None:
        document["repository"] = dict(card.repository)
    if card.icons:
        document["icons"] = [dict(icon) for icon in card.icons]
    headers = [dict(header) for header in card.headers]
    if oauth and not any(str(h.get("name", "")).lower() == "authorization" for h in headers):
        token = {"description": "an OAuth 2.0 access token for this server", "isRequired": True, "isSecret": True}
        headers.insert(
            0,
            {
                "name": "Authorization",
                "description": "OAuth 2.0 bearer token; the server's protected resource metadata (RFC 9728) "
                "names the authorization server that issues it",
                "isRequired": True,
                "isSecret": True,
                "value": "Bearer {token}",
                "variables": {"token": token},
            },
        )
    remote: dict[str, Any] = {"type": "streamable-http", "url": endpoint}
    if headers:
        remote["headers"] = headers
    remote["supportedProtocolVersions"] = list(versions)
    document["remotes"] = [remote]
    if sse_url is not None:
        legacy: dict[str, Any] = {"type": "sse", "url": sse_url, **({"headers": headers} if headers else {})}
        legacy["supportedProtocolVersions"] = [v for v in versions if v in HANDSHAKE_VERSIONS]  # (no stateless era)
        document["remotes"].append(legacy)
    if card.meta:
        document["_meta"] = dict(card.meta)
    return document


def catalog_document(card: Mapping[str, Any], card_url: str, publisher: str) -> dict[str, Any]:
    """An AI Catalog naming one Server Card, at ``card_url``; ``publisher`` is the domain in its
    ``urn:air:{publisher}:mcp:{name}`` identifier."""
    name = str(card["name"]).split("/", 1)[1]
    entry = {"identifier": f"urn:air:{publisher}:mcp:{name}", "type": CARD_MEDIA_TYPE, "url": card_url}
    return {"specVersion": "1.0", "entries": [entry]}


def check_card(document: object) -> dict[str, Any]:
    """``document`` if it is a Server Card a client may use (the schema's required fields and
    the shapes of ``remotes``); else ``CardError`` saying what is wrong. Unknown fields are kept:
    the card is an open object."""
    if not isinstance(document, dict):
        raise CardError(f"a Server Card is a JSON object, not {type(document).__name__}")
    if document.get("$schema") != CARD_SCHEMA:
        raise CardError(f"a Server Card's $schema is {CARD_SCHEMA}, not {document.get('$schema')!r}")
    _name(document.get("name"))
    _version(document.get("version"))
    _text(document.get("description"), "description", 100)
    if "title" in document:
        _text(document["title"], "title", 100)
    remotes = document.get("remotes", [])
    if not isinstance(remotes, list):
        raise CardError("a Server Card's remotes is a list")
    for remote in remotes:
        if not isinstance(remote, dict) or remote.get("type") not in _TRANSPORTS:
            raise CardError(f"a remote's type is one of {_TRANSPORTS}, not {remote!r:.100}")
        url = remote.get("url")
        if not isinstance(url, str) or _REMOTE_URL.fullmatch(url) is None:
            raise CardError(f"a remote's url is an http(s) URL or starts with a {{variable}}, not {url!r:.100}")
        versions = remote.get("supportedProtocolVersions", [])
        if not isinstance(versions, list) or not all(isinstance(v, str) for v in versions):
            raise CardError("a remote's supportedProtocolVersions is a list of strings")
        headers = remote.get("headers", [])
        if not isinstance(headers, list) or not all(
            isinstance(h, dict) and isinstance(h.get("name"), str) for h in headers
        ):
            raise CardError("a remote's headers are objects with a name")
    return document
