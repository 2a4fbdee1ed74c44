"""What the HTTP host needs of the server it serves.

The ASGI app, its sessions and its stateless entry are handed a server (``Server.http_app``
does it) and use three things of it: ``connect`` to run a connection over one of their
transports, the URL-elicitation pages served beside the endpoint, and a tool's definition
for the SEP-2243 header checks. A ``backchannel.Server`` is all three; so is any object
shaped like these protocols (a test double, or a server of another layout). The host sits
above the runtime and below the server: it drives a ``Connection`` the one way every
transport does (``feed``, ``finish``), and it never imports ``server/``.
"""

from __future__ import annotations

__all__ = ["HostedServer", "PageRoutes"]

from typing import Any, Protocol

from ..runtime.connection import Connection
from ..transports.base import Transport
from ..transports.http.asgi import Receive, Scope, Send


class PageRoutes(Protocol):
    """The URL-elicitation pages the app serves beside its endpoint."""

    def handles(self, path: str) -> bool: ...

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None: ...

    async def stop_pages(self) -> None: ...


class HostedServer(Protocol):
    """The server an ``HttpApp`` serves."""

    @property
    def url_elicitations(self) -> PageRoutes | None: ...

    def connect(self, transport: Transport, *, finish_grace: float | None = None) -> Connection: ...

    def tool_definition(self, name: str) -> dict[str, Any] | None: ...
