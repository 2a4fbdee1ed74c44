"""What the HTTP host needs of the server it serves.

The ASGI app, its sessions and its stateless entry are handed a server (``Server.http_app``
does it) and use of it: ``connect`` to run a connection over one of their transports, the
URL-elicitation pages served beside the endpoint, a tool's definition for the SEP-2243
header checks, what it keeps per session (for a fleet's records), and what its Server Card says
of it. A
``backchannel.Server`` is all of these; so is any object shaped like these protocols. The
host sits above the runtime and below the server: it drives a ``Connection`` the one way
every transport does (``feed``, ``finish``), and it never imports ``server/``.
"""

from __future__ import annotations

__all__ = ["CardSource", "HostedServer", "PageRoutes"]

from collections.abc import Collection, Mapping, Sequence
from typing import Any, Protocol

from ..runtime.connection import Connection
from ..transports.base import Transport
from .asgi import Receive, Scope, Send


class PageRoutes(Protocol):
    """The URL-elicitation pages the app serves beside its endpoint."""

    def handles(self, path: str) -> bool: ...

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None: ...

    async def stop_pages(self) -> None: ...


class CardSource(Protocol):
    """What a Server Card says of the served server (``card.py``): its ``serverInfo`` and the
    protocol revisions it serves."""

    @property
    def info(self) -> Mapping[str, Any]: ...

    @property
    def versions(self) -> Sequence[str]: ...


class HostedServer(CardSource, Protocol):
    """The server an ``HttpApp`` serves."""

    @property
    def url_elicitations(self) -> PageRoutes | None: ...

    def connect(self, transport: Transport, *, finish_grace: float | None = None) -> Connection: ...

    def tool_definition(self, name: str) -> dict[str, Any] | None: ...

    async def aclose(self) -> None:
        """Stop what serving started beyond the sessions (a mount's or a proxy's upstream)."""
        ...

    def required_scopes(self, method: str, params: Any) -> Collection[str]:
        """The OAuth scopes a request (a tool's call, a prompt's get, a resource's read) needs."""
        ...

    def session_snapshot(self, connection: Connection) -> dict[str, Any]:
        """What the server keeps for a handshake-era session (JSON data), for the record
        another worker of a fleet takes the session up from."""
        ...

    async def start_sharing(self) -> None:
        """Join the fleet its state spans (hear the other workers' announcements); a server
        whose state spans no processes has nothing to do."""
        ...

    def restore_session(self, connection: Connection, kept: dict[str, Any]) -> None:
        """Take up what ``session_snapshot`` returned (on another worker, or after a change)."""
        ...
