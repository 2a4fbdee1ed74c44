"""What a method route asks of ``Server``: ``RouteServer``, a protocol ``Server`` meets.

``routes.py`` and ``tasks/routes.py`` see this face: what a ``Context`` sees (``faces.py``'s
``ContextServer``) and what the server offers, its settings and its per-connection state. It
stands above ``Context`` and the registry, as the routes do, and below ``server.py``, which the
routes never import.
"""

from __future__ import annotations

__all__ = ["RouteServer"]

from typing import TYPE_CHECKING, Any, Protocol

from .faces import ContextServer

if TYPE_CHECKING:
    from ..runtime.connection import Connection
    from .completion_request import CompletionLimit
    from .connection_state import ConnectionState
    from .registry import Registry
    from .subscriptions import Subscriptions
    from .tasks.service import TaskService


class RouteServer(ContextServer, Protocol):
    """The server as a method route sees it: what it offers, its settings, its per-connection state."""

    @property
    def registry(self) -> Registry: ...
    @property
    def tasks(self) -> TaskService: ...
    @property
    def subscriptions(self) -> Subscriptions: ...
    @property
    def completion_limit(self) -> CompletionLimit: ...
    @property
    def instructions(self) -> str | None: ...
    @property
    def versions(self) -> tuple[str, ...]: ...
    @property
    def page_size(self) -> int | None: ...
    @property
    def cache_ttl_ms(self) -> int: ...
    @property
    def cache_scope(self) -> str: ...

    def capabilities(self) -> dict[str, Any]: ...
    def connection_state(self, connection: Connection) -> ConnectionState: ...
