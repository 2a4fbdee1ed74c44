"""What a ``Context`` asks of ``Server``: ``ContextServer``, a protocol ``Server`` meets.

A ``Context`` (and what it delegates to: forms, roots, logs, ``once``) sees this face; the
method routes see ``RouteServer`` (``route_face.py``), which is this and more. Neither imports
``server.py``: the facade stands above them and they know only the face it shows them. Each
member is read only here, so ``Server``'s plain attributes meet it; a new need is a new member
here first. What it names comes from modules that take no ``Context``, so this face closes no
circle through the ``Context`` that reads it.
"""

from __future__ import annotations

__all__ = ["ContextServer"]

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..http_host.url_flows.pages import UrlElicitations
    from ..protocol.events import RequestReceived
    from ..redaction.redaction import Redactor
    from ..runtime.connection import Connection
    from ..state.sealer import StateSealer
    from .options import ServerOptions
    from .roots import RootsCache
    from .state import StateStore


class ContextServer(Protocol):
    """The server as a ``Context`` (and what it delegates to: forms, roots, logs, ``once``) sees it."""

    #: Made by the first ``ctx.elicit_url`` (``UrlElicitations.of``).
    url_elicitations: UrlElicitations | None

    @property
    def name(self) -> str: ...
    @property
    def info(self) -> dict[str, Any]: ...
    @property
    def clock(self) -> Callable[[], float] | None: ...
    @property
    def options(self) -> ServerOptions: ...
    @property
    def state(self) -> StateStore: ...
    @property
    def state_sealer(self) -> StateSealer: ...
    @property
    def once_limit(self) -> int: ...
    @property
    def decline_ttl(self) -> float: ...
    @property
    def elicitation_timeout(self) -> float: ...
    @property
    def default_roots(self) -> list[str | os.PathLike[str]]: ...
    @property
    def log_redactor(self) -> Redactor | None: ...

    def connection_scope(self, connection: Connection) -> str | None: ...
    def log_level_for(self, connection: Connection) -> str | None: ...
    def roots_cache(self, connection: Connection) -> RootsCache | None: ...
    def send_log(
        self, connection: Connection, request: RequestReceived, level: str, data: Any, logger: str | None
    ) -> bool: ...
