"""MCP Apps (SEP-1865, ``io.modelcontextprotocol/ui``): what a server publishes and what a host checks.

A tool names a ``ui://`` resource in ``_meta.ui.resourceUri``; that resource is an HTML document
(``text/html;profile=mcp-app``) with its CSP domains and permissions in ``_meta.ui``; the host
renders it in a sandboxed iframe and speaks JSON-RPC with it over ``postMessage``. This package
is pure (no I/O, nothing of the server or the client):

- ``app.py``: ``App`` and ``AppCsp`` (the resource as published, built once), ``tool_meta`` (what
  a tool that shows an app adds to its ``_meta``), and the readers a host uses on a tool's
  definition (``app_uri_of``, ``app_visibility``);
- ``csp.py``: the Content Security Policy and iframe ``allow`` list a host builds from the
  metadata, the server's origins checked as untrusted input;
- ``view.py``: ``ViewSession``, the host's half of the protocol for one rendered app.

``Server.app(...)``, ``add_app`` and ``add_tool(app=..., visibility=...)`` publish (``server/``);
``backchannel connect`` renders them in the browser (``app_host/``). ``docs/extensions.md`` says how.
"""

from __future__ import annotations

__all__ = [
    "APPS_PROTOCOL_VERSIONS",
    "APP_MIME_TYPE",
    "PERMISSIONS",
    "UI_EXTENSION",
    "App",
    "AppCsp",
    "Forward",
    "Step",
    "ViewSession",
    "Visibility",
    "allow_attribute",
    "app_uri_of",
    "app_visibility",
    "content_security_policy",
    "supports_apps",
    "tool_meta",
    "with_policy",
]

from typing import TYPE_CHECKING

from .._lazy import lazy_names

#: Loaded on first use: a server that publishes apps imports ``app.py`` alone, not the host's parts.
_EXPORTS: dict[str, str] = {
    "APPS_PROTOCOL_VERSIONS": "view",
    "APP_MIME_TYPE": "app",
    "PERMISSIONS": "app",
    "UI_EXTENSION": "app",
    "App": "app",
    "AppCsp": "app",
    "Forward": "view",
    "Step": "view",
    "ViewSession": "view",
    "Visibility": "app",
    "allow_attribute": "csp",
    "app_uri_of": "app",
    "app_visibility": "app",
    "content_security_policy": "csp",
    "supports_apps": "app",
    "tool_meta": "app",
    "with_policy": "csp",
}

if TYPE_CHECKING:
    from .app import (
        APP_MIME_TYPE,
        PERMISSIONS,
        UI_EXTENSION,
        App,
        AppCsp,
        Visibility,
        app_uri_of,
        app_visibility,
        supports_apps,
        tool_meta,
    )
    from .csp import allow_attribute, content_security_policy, with_policy
    from .view import APPS_PROTOCOL_VERSIONS, Forward, Step, ViewSession


__getattr__ = lazy_names(__name__, _EXPORTS)
