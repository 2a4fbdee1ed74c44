"""What the HTTP app needs of the server it serves, declared here so the transport imports
nothing above it.

The ASGI app, its sessions and its stateless entry are handed a server (``Server.http_app``
does it) and use three things of it: ``connect`` to run a connection over one of their
transports, the URL-elicitation pages served beside the endpoint, and a tool's definition
for the SEP-2243 header checks. A ``backchannel.Server`` is all three; so is any object
shaped like these protocols (a test double, or a server of another layout).
"""

from __future__ import annotations

__all__ = ["HostedConnection", "HostedServer", "PageRoutes"]

from collections.abc import Coroutine
from typing import Any, Protocol

from ...protocol.events import RequestId
from ...protocol.session import Session
from ..base import Transport
from .asgi import Receive, Scope, Send


class HostedConnection(Protocol):
    """The push-fed connection an HTTP session or a stateless POST drives."""

    session: Session

    @property
    def active_handlers(self) -> int: ...

    def feed(
        self, batch: list[Any], *, serve_in_caller_task: RequestId | None = None
    ) -> Coroutine[Any, Any, None] | None: ...

    def abort(self, request_id: RequestId, reason: str = ...) -> None: ...

    def finish(self, reason: str) -> None: ...

    async def close(self) -> None: ...


class PageRoutes(Protocol):
    """The URL-elicitation pages the app serves beside its endpoint."""

    def handles(self, path: str) -> bool: ...

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None: ...

    async def stop_pages(self) -> None: ...


class HostedServer(Protocol):
    """The server an ``HttpApp`` serves."""

    @property
    def url_elicitations(self) -> PageRoutes | None: ...

    def connect(self, transport: Transport, *, finish_grace: float | None = None) -> HostedConnection: ...

    def tool_definition(self, name: str) -> dict[str, Any] | None: ...
