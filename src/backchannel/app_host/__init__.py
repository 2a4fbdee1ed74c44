"""The terminal client's host of MCP Apps (SEP-1865): a page in the browser that renders the apps
of the tools ``backchannel connect`` calls, and speaks the Apps protocol with them.

``AppHost`` (``host.py``) keeps the apps shown in one session and serves their page on loopback
(``static/``: the page, and the sandbox proxy each app is loaded in); the protocol's rules are
``backchannel.apps.ViewSession``'s. It needs of the session only a way to send requests
(``AppConnection``, which a ``Client`` is), so it imports nothing of ``client/`` or ``server/``;
its pages are served by ``http_host``'s loopback listener. ``docs/extensions.md`` says how it is used.
"""

from __future__ import annotations

__all__ = ["AppConnection", "AppHost", "ShownApp"]

from .host import AppConnection, AppHost, ShownApp
