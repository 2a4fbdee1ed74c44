"""An MCP App as a server publishes it (SEP-1865, ``io.modelcontextprotocol/ui``).

A tool names a ``ui://`` resource in ``_meta.ui.resourceUri``; the resource is one HTML
document served as ``text/html;profile=mcp-app``, with what the host must allow it (its CSP
domains, the browser permissions it asks for) in ``_meta.ui``. ``App`` is that resource, built
once: the server registers it as a static resource, so every worker of a fleet serves the same
bytes and nothing is kept per process or per session. ``tool_meta`` is what a tool that shows it
adds to its ``_meta``.
"""

from __future__ import annotations

__all__ = [
    "APP_MIME_TYPE",
    "LEGACY_RESOURCE_URI_KEY",
    "PERMISSIONS",
    "UI_EXTENSION",
    "App",
    "AppCsp",
    "Visibility",
    "app_uri_of",
    "app_visibility",
    "supports_apps",
    "tool_meta",
]

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .csp import check_source

#: The extension's identifier, declared by a server with apps and a host that renders them.
UI_EXTENSION = "io.modelcontextprotocol/ui"
#: The MIME type of an app's HTML (SEP-1865: "MUST be text/html;profile=mcp-app").
APP_MIME_TYPE = "text/html;profile=mcp-app"
#: The flat key the spec deprecates for ``_meta.ui.resourceUri``; written too, for older hosts.
LEGACY_RESOURCE_URI_KEY = "ui/resourceUri"
#: The browser permissions an app may ask for (``_meta.ui.permissions``), by their wire names.
PERMISSIONS = ("camera", "microphone", "geolocation", "clipboardWrite")

#: Who may call a tool: the model (the agent's tool list) and/or the app (through the host).
Visibility = Literal["model", "app"]
_VISIBILITIES = ("model", "app")
_DOCUMENT = re.compile(r"<!doctype\s+html|<html[\s>]", re.IGNORECASE)


@dataclass(frozen=True, slots=True, kw_only=True)
class AppCsp:
    """The origins an app needs beyond itself (``_meta.ui.csp``); the host allows nothing else.

    Each is an origin such as ``"https://api.example.com"``, ``"wss://live.example.com"`` or
    ``"https://*.example.com"`` (a path may follow). ``connect_domains``: fetch, XHR and
    WebSocket (``connect-src``); ``resource_domains``: scripts, styles, images, fonts and media;
    ``frame_domains``: nested iframes (``frame-src``); ``base_uri_domains``: ``<base href>``.
    A source that is not an origin raises ``ValueError`` here."""

    connect_domains: Collection[str] = ()
    resource_domains: Collection[str] = ()
    frame_domains: Collection[str] = ()
    base_uri_domains: Collection[str] = ()

    def __post_init__(self) -> None:
        for name in ("connect_domains", "resource_domains", "frame_domains", "base_uri_domains"):
            sources = getattr(self, name)
            if isinstance(sources, str):
                raise ValueError(f"AppCsp.{name} is a list of origins, not one string: [{sources!r}]")
            object.__setattr__(self, name, tuple(check_source(source) for source in sources))

    def to_meta(self) -> dict[str, list[str]]:
        """The ``csp`` object of ``_meta.ui``: only the lists that are not empty."""
        pairs = (
            ("connectDomains", self.connect_domains),
            ("resourceDomains", self.resource_domains),
            ("frameDomains", self.frame_domains),
            ("baseUriDomains", self.base_uri_domains),
        )
        return {key: list(sources) for key, sources in pairs if sources}


@dataclass(frozen=True, slots=True, kw_only=True)
class App:
    """One app: a ``ui://`` resource holding an HTML document, and what the host must allow it.

    ``html`` is the whole document (the host renders it in a sandboxed iframe; it reaches the
    server only through the host). ``csp``: the origins it needs (default: none, the host's
    restrictive policy); ``permissions``: browser features it asks for, from ``PERMISSIONS``
    (hosts may refuse them); ``domain``: a dedicated sandbox origin, in the format the host
    documents; ``prefers_border``: whether the host should draw a border and background.
    ``name``, ``title`` and ``description`` describe the resource in ``resources/list``.
    Checked when made: a URI that is not ``ui://``, a document that is not HTML, or an unknown
    permission raises ``ValueError``. ``App.from_file`` reads the document from a file."""

    uri: str
    html: str
    name: str | None = None
    title: str | None = None
    description: str | None = None
    csp: AppCsp | None = None
    permissions: Collection[str] = ()
    domain: str | None = None
    prefers_border: bool | None = None
    #: ``_meta.ui`` of the resource and of its contents, built once.
    ui_meta: dict[str, Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.uri, str) or not self.uri.startswith("ui://") or len(self.uri) <= len("ui://"):
            raise ValueError(f"an app's URI must use the ui:// scheme (SEP-1865), not {self.uri!r}")
        if not isinstance(self.html, str) or _DOCUMENT.search(self.html) is None:
            raise ValueError(
                f"app {self.uri}: html must be a whole HTML5 document (<!DOCTYPE html> or <html>), as SEP-1865 requires"
            )
        unknown = sorted(set(self.permissions) - set(PERMISSIONS))
        if unknown or isinstance(self.permissions, str):
            raise ValueError(f"app {self.uri}: unknown permissions {unknown or [self.permissions]}; use {PERMISSIONS}")
        object.__setattr__(self, "permissions", tuple(p for p in PERMISSIONS if p in self.permissions))
        ui: dict[str, Any] = {}
        if self.csp is not None and (csp := self.csp.to_meta()):
            ui["csp"] = csp
        if self.permissions:
            ui["permissions"] = {permission: {} for permission in self.permissions}
        if self.domain is not None:
            ui["domain"] = self.domain
        if self.prefers_border is not None:
            ui["prefersBorder"] = self.prefers_border
        object.__setattr__(self, "ui_meta", ui)

    @classmethod
    def from_file(cls, uri: str, path: str | Any, **options: Any) -> App:
        """The app whose document is the UTF-8 file at ``path``, read now, once."""
        with open(path, encoding="utf-8") as file:
            return cls(uri=uri, html=file.read(), **options)

    @property
    def meta(self) -> dict[str, Any] | None:
        """The resource's ``_meta`` (``{"ui": {...}}``), or None when the app asks for nothing."""
        return {"ui": self.ui_meta} if self.ui_meta else None

    def contents(self) -> dict[str, Any]:
        """Its ``resources/read`` contents (the server adds the URI): the document, its MIME type,
        and ``_meta.ui``, where hosts read the CSP and permissions from."""
        contents: dict[str, Any] = {"mimeType": APP_MIME_TYPE, "text": self.html}
        if self.meta is not None:
            contents["_meta"] = self.meta
        return contents


def tool_meta(
    meta: Mapping[str, Any] | None, app: App | str | None, visibility: Collection[Visibility] | None
) -> dict[str, Any] | None:
    """A tool's ``_meta`` with ``ui`` set: ``resourceUri`` (and the deprecated flat key, for hosts
    that read only that) when it shows ``app``, ``visibility`` when given. ``meta`` unchanged when
    both are None; ``ValueError`` for a bad visibility or a ``meta`` that sets ``ui`` itself."""
    if app is None and visibility is None:
        return dict(meta) if meta is not None else None
    if meta is not None and ("ui" in meta or LEGACY_RESOURCE_URI_KEY in meta):
        raise ValueError("pass app= and visibility= rather than a 'ui' key in meta: they write _meta.ui")
    ui: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    if app is not None:
        uri = app.uri if isinstance(app, App) else app
        if not isinstance(uri, str) or not uri.startswith("ui://"):
            raise ValueError(f"app= names a ui:// resource (or is an App), not {uri!r}")
        ui["resourceUri"] = uri
        extra[LEGACY_RESOURCE_URI_KEY] = uri
    if visibility is not None:
        if isinstance(visibility, str) or not set(visibility) <= set(_VISIBILITIES) or not visibility:
            raise ValueError(f"visibility is a non-empty list of 'model' and 'app', not {visibility!r}")
        ui["visibility"] = [v for v in _VISIBILITIES if v in visibility]
    return {**(meta or {}), "ui": ui, **extra}


def app_uri_of(tool: Mapping[str, Any]) -> str | None:
    """The ``ui://`` URI of the app a tool definition (a ``tools/list`` entry) shows, or None:
    ``_meta.ui.resourceUri``, else the deprecated ``_meta["ui/resourceUri"]``."""
    meta = tool.get("_meta")
    if not isinstance(meta, Mapping):
        return None
    ui = meta.get("ui")
    uri = ui.get("resourceUri") if isinstance(ui, Mapping) else None
    if uri is None:
        uri = meta.get(LEGACY_RESOURCE_URI_KEY)
    return uri if isinstance(uri, str) and uri.startswith("ui://") else None


def app_visibility(tool: Mapping[str, Any]) -> frozenset[str]:
    """Who may call a tool, from its definition: ``_meta.ui.visibility``, default model and app.
    A malformed value counts as the default (an app may call the tool; the host still checks)."""
    meta = tool.get("_meta")
    ui = meta.get("ui") if isinstance(meta, Mapping) else None
    visibility = ui.get("visibility") if isinstance(ui, Mapping) else None
    if not isinstance(visibility, list) or not all(isinstance(v, str) for v in visibility):
        return frozenset(_VISIBILITIES)
    return frozenset(visibility)


def supports_apps(capabilities: Mapping[str, Any] | None) -> bool:
    """Whether a client renders apps: it declared the extension with ``text/html;profile=mcp-app``
    among its ``mimeTypes``. Pass ``ctx.client_capabilities``; a tool can answer with text alone
    otherwise (its result must stand on its own anyway)."""
    extensions = capabilities.get("extensions") if capabilities else None
    settings = extensions.get(UI_EXTENSION) if isinstance(extensions, Mapping) else None
    mime_types = settings.get("mimeTypes") if isinstance(settings, Mapping) else None
    return isinstance(mime_types, list) and APP_MIME_TYPE in mime_types
