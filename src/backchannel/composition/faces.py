"""What composition needs of the servers it composes: protocols a ``backchannel.Server`` meets.

A mount answers with a ``MountedServer`` and is reached from its ``MountingServer``, whose own
items (``OwnItems``: the registry) come first; ``Transforms`` tells a session's listen streams
(``ListenStreams``) that a list changed. Each member is read only here, so ``Server``'s plain
attributes meet it; nothing here imports ``server/``.
"""

from __future__ import annotations

__all__ = [
    "CallerHolds",
    "ListenStreams",
    "MountedServer",
    "MountingServer",
    "OwnItems",
    "OwnTemplate",
    "Paginate",
    "Subscribed",
]

from collections.abc import Callable, Collection, Container, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..protocol.events import RequestReceived
    from ..runtime.connection import Connection
    from ..types.uri_template import UriTemplate

#: ``paginate(kind, items, cursor, page_size)``: one page of ``items`` and the next page's cursor.
Paginate = Callable[[str, Sequence[Any], Any, int | None], tuple[Sequence[Any], str | None]]
#: ``caller_holds(scopes)``: whether the caller of the request being served may use what needs ``scopes``.
CallerHolds = Callable[[Collection[str]], bool]


class MountedServer(Protocol):
    """A server served under a prefix: it answers requests on its mounting server's connections,
    and watches a resource while a mounting server's client listens for it."""

    async def handle_request(self, request: RequestReceived, connection: Connection) -> dict[str, Any]: ...

    async def watch_resource(self, uri: str) -> None: ...

    def unwatch_resource(self, uri: str) -> None: ...


class OwnTemplate(Protocol):
    """A resource template the mounting server has itself."""

    @property
    def template(self) -> UriTemplate: ...


class OwnItems(Protocol):
    """The mounting server's own tools, prompts, resources (by name or URI) and templates."""

    @property
    def tools(self) -> Container[str]: ...
    @property
    def prompts(self) -> Container[str]: ...
    @property
    def resources(self) -> Container[str]: ...
    @property
    def templates(self) -> Iterable[OwnTemplate]: ...


class MountingServer(Protocol):
    """The server mounts are served by: its own items first, its pages, its page size."""

    @property
    def registry(self) -> OwnItems: ...
    @property
    def page_size(self) -> int | None: ...

    async def own_list(self, request: RequestReceived, connection: Connection) -> dict[str, Any]:
        """A page of the server's own items of a list (without its mounts')."""
        ...


class Subscribed(Protocol):
    """What a server keeps for a handshake-era connection: the URIs it is subscribed to."""

    subscriptions: frozenset[str]


class ListenStreams(Protocol):
    """A server's open ``subscriptions/listen`` streams (stateless era)."""

    def list_changed(self, method: str, *, only: Connection | None = None) -> None: ...
