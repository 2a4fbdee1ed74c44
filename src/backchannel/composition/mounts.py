"""Mounts: other servers answered under a prefix of this one (``Server.mount``).

A mounted server is a ``Server`` of this process: one written here, or a ``Proxy``
(``backchannel.bridge``) whose answers come from a server elsewhere (a command over stdio, a
URL over HTTP). It is served on the mounting server's connections: its handlers get a
``Context`` on the very connection the request came on, so a form, a URL flow, sampling, roots,
progress, cancellation and logs work as they do for the mounting server's own tools, in both
eras. It shares the mounting server's per-connection state (the log level, subscriptions), and
its list changes and resource updates are told to the mounting server's clients.

Naming, reversible both ways:

- a tool or a prompt ``name`` of the mount ``ev`` is ``ev_name`` (a prefix has no ``_``, so the
  first ``_`` ends it); one of the mounting server's own names wins over a mount's;
- a resource URI or template ``scheme://rest`` is ``ev+scheme://rest`` (still a valid URI: a
  scheme may hold ``+``); a task keeps its id (the mount that made it is remembered);
- the prefix ``""`` (one such mount at most) keeps the mount's names and URIs as they are: a
  request goes to it when nothing else serves the name (the mounting server's own names first,
  then those of the prefixed mounts), and its items that such a name hides are left out of lists.

Lists are merged: the mounting server's own items first, then each mount's in the order mounted,
paged with this server's ``page_size``; in the stateless era the shortest ``ttlMs`` wins and
``private`` beats ``public``. A mount that fails to list (a remote one that is down) is left out of
the list, and its calls answer with its error; the rest keeps serving.

The mounting server is a ``MountingServer`` here and each mount's a ``MountedServer`` (``faces.py``):
a ``Server`` holds ``Mounts[Server]``, and this module imports nothing of ``server/``.
"""

from __future__ import annotations

__all__ = ["Mount", "Mounts", "check_prefix"]

import dataclasses
import logging
import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ..protocol.events import RequestReceived
from ..types.errors import MCPError
from .faces import CallerHolds, MountedServer, MountingServer, Paginate, Subscribed

if TYPE_CHECKING:
    from ..runtime.connection import Connection

logger = logging.getLogger("backchannel.server")
#: The server a mount answers with (a ``Server`` holds ``Mounts[Server]``).
S = TypeVar("S", bound=MountedServer)
_PREFIX = re.compile(r"^[A-Za-z][A-Za-z0-9-]{0,31}$")
#: The list methods, the key of their items and the name each item is known by.
LISTS = {
    "tools/list": ("tools", "name"),
    "prompts/list": ("prompts", "name"),
    "resources/list": ("resources", "uri"),
    "resources/templates/list": ("resourceTemplates", "uriTemplate"),
}
#: Methods that name one item of a mount: where the name is in the params.
_BY_NAME = {"tools/call": "name", "prompts/get": "name"}
_BY_URI = frozenset(("resources/read", "resources/subscribe", "resources/unsubscribe"))
_SUBSCRIBING = frozenset(("resources/subscribe", "resources/unsubscribe"))
_TASK_METHODS = frozenset(("tasks/get", "tasks/result", "tasks/cancel", "tasks/update", "tasks/input_response"))
#: How many tasks made by mounts are remembered (oldest forgotten first).
_TASKS_KEPT = 10_000


def check_prefix(prefix: str) -> str:
    """``prefix`` if it can name a mount (a letter, then letters, digits or ``-``; 32 at most;
    or ``""``: the mount's names unchanged)."""
    if not isinstance(prefix, str) or (prefix and not _PREFIX.match(prefix)):
        raise ValueError(
            f"mount prefix {prefix!r} is not valid: use a letter, then up to 31 letters, digits or '-' "
            "(no '_': it ends the prefix in a tool's name), or '' to keep the mount's names"
        )
    return prefix


@dataclasses.dataclass(slots=True, eq=False)
class Mount(Generic[S]):
    """One mounted server: its ``prefix`` and the OAuth ``scopes`` a caller needs to see or call it."""

    prefix: str
    server: S
    scopes: tuple[str, ...] = ()

    def name(self, inner: str) -> str:
        return f"{self.prefix}_{inner}" if self.prefix else inner

    def uri(self, inner: str) -> str:
        return f"{self.prefix}+{inner}" if self.prefix else inner


class Mounts(Generic[S]):
    """The mounts of one server, by prefix, and the requests that go to them.

    ``paginate`` pages a merged list as the server pages its own; ``caller_holds`` says whether
    the caller may see a mount that needs scopes (the server's, handed over when it makes this)."""

    #: The list methods whose pages merge the mounts' items into the server's own (``merged``).
    lists = frozenset(LISTS)

    def __init__(self, paginate: Paginate, caller_holds: CallerHolds) -> None:
        self._paginate = paginate
        self._caller_holds = caller_holds
        self._by_prefix: dict[str, Mount[S]] = {}
        self._task_owner: OrderedDict[str, Mount[S]] = OrderedDict()

    def __bool__(self) -> bool:
        return bool(self._by_prefix)

    def __iter__(self) -> Iterator[Mount[S]]:
        return iter(list(self._by_prefix.values()))

    def add(self, mount: Mount[S]) -> None:
        if mount.prefix in self._by_prefix:
            raise ValueError(f"a server is already mounted at {mount.prefix!r}")
        self._by_prefix[mount.prefix] = mount

    def get(self, prefix: str) -> Mount[S] | None:
        return self._by_prefix.get(prefix)

    # ------------------------------------------------------------ naming

    def by_name(self, name: Any) -> tuple[Mount[S], str] | None:
        """The mount a tool or prompt ``name`` belongs to, and its own name there: the prefixed
        mount it names, else the mount of prefix ``""`` (with ``name`` as it is)."""
        return self._owner(name, "_")

    def by_uri(self, uri: Any) -> tuple[Mount[S], str] | None:
        """The mount a resource ``uri`` belongs to, and the URI it has there (as ``by_name``)."""
        return self._owner(uri, "+")

    def _owner(self, named: Any, separator: str) -> tuple[Mount[S], str] | None:
        if not isinstance(named, str):
            return None
        prefix, sep, inner = named.partition(separator)
        mount = self._by_prefix.get(prefix) if prefix and sep and inner else None
        if mount is not None:
            return mount, inner
        bare = self._by_prefix.get("")
        return (bare, named) if bare is not None else None

    def hidden(self, field: str, value: str, own: set[str]) -> bool:
        """Whether ``value``, an item of the mount of prefix ``""``, is served by another: one of
        the mounting server's own (``own``), or a prefixed mount's name or URI."""
        if value in own:
            return True
        found = self.by_name(value) if field == "name" else self.by_uri(value)
        return found is not None and bool(found[0].prefix)

    # ------------------------------------------------------------ routing

    def route(self, request: RequestReceived, own: MountingServer) -> tuple[Mount[S], RequestReceived] | None:
        """The mount ``request`` is for and the request as the mount sees it; None for the
        mounting server's own (a name it has itself, a method about no one item)."""
        method = request.method
        params = request.params
        if method in _BY_NAME:
            key = _BY_NAME[method]
            name = params.get(key)
            registry = own.registry
            if name in (registry.tools if method == "tools/call" else registry.prompts):
                return None
            found = self.by_name(name)
            return None if found is None else (found[0], _renamed(request, {key: found[1]}))
        if method in _BY_URI:
            uri = params.get("uri")
            found = self.by_uri(uri)
            if found is None or (not found[0].prefix and _serves_uri(own, uri)):
                return None
            return found[0], _renamed(request, {"uri": found[1]})
        if method == "completion/complete":
            return self._completion(request, own)
        if method in _TASK_METHODS:
            mount = self._task_owner.get(params.get("taskId"))  # type: ignore[arg-type]
            return None if mount is None else (mount, request)
        return None

    def _completion(self, request: RequestReceived, own: MountingServer) -> tuple[Mount[S], RequestReceived] | None:
        ref = request.params.get("ref")
        if not isinstance(ref, dict):
            return None
        if ref.get("type") == "ref/prompt":
            found = self.by_name(ref.get("name"))
            key = "name"
            ours = found is not None and ref.get("name") in own.registry.prompts
        else:
            found = self.by_uri(ref.get("uri"))
            key = "uri"
            ours = found is not None and _serves_uri(own, ref.get("uri"))
        if found is None or (ours and not found[0].prefix):
            return None
        return found[0], _renamed(request, {"ref": {**ref, key: found[1]}})

    def answered(self, mount: Mount[S], request: RequestReceived, result: dict[str, Any]) -> dict[str, Any]:
        """Note a task the mount made (its later ``tasks/*`` go to it); the result, with the URIs of
        a read's contents as the client knows them (``ev+memo://note``, as it asked)."""
        if request.method == "resources/read" and mount.prefix:
            contents = result.get("contents")
            if isinstance(contents, list):
                result = {**result, "contents": [_prefixed_uri(mount, item) for item in contents]}
        task = result.get("task") if "task" in result else result if result.get("resultType") == "task" else None
        task_id = task.get("taskId") if isinstance(task, dict) else None
        if isinstance(task_id, str):
            self._task_owner[task_id] = mount
            while len(self._task_owner) > _TASKS_KEPT:
                self._task_owner.popitem(last=False)
        return result

    def subscribed(self, request: RequestReceived, state: Subscribed | None) -> None:
        """After a mount answered a handshake-era ``resources/subscribe`` (or ``unsubscribe``): the
        connection is subscribed under the URI its client named, by which the mount's updates
        are told (``Server.resource_updated_here``)."""
        uri = request.params.get("uri")
        if state is None or not isinstance(uri, str) or request.method not in _SUBSCRIBING:
            return
        if request.method == "resources/subscribe":
            state.subscriptions = state.subscriptions | {uri}
        else:
            state.subscriptions = state.subscriptions - {uri}

    async def listening(
        self, request: RequestReceived, listen: Callable[[], Awaitable[dict[str, Any]]]
    ) -> dict[str, Any]:
        """A stateless-era ``subscriptions/listen`` (``listen()`` serves it) during which each mount
        watches the resources of its own that it names (a remote mount asks its upstream)."""
        wanted = request.params.get("notifications")
        uris = wanted.get("resourceSubscriptions") if isinstance(wanted, dict) else None
        watched: list[tuple[Mount[S], str]] = []
        try:
            for uri in uris if isinstance(uris, list) else ():
                found = self.by_uri(uri)
                if found is not None:
                    await found[0].server.watch_resource(found[1])
                    watched.append(found)
            return await listen()
        finally:
            for mount, inner in watched:
                mount.server.unwatch_resource(inner)

    # ------------------------------------------------------------ lists

    async def merged(
        self, own: MountingServer, request: RequestReceived, connection: Connection, first: dict[str, Any]
    ) -> dict[str, Any]:
        """The page ``request`` asks for of the list of the server's own items (``first`` is its own
        first page, already made) followed by every mount's, prefixed."""
        key, field = LISTS[request.method]
        items: list[Any] = []
        hints: list[dict[str, Any]] = []
        page = first
        while True:  # the server's own pages
            items += page.get(key, [])
            hints.append(page)
            cursor = page.get("nextCursor")
            if not cursor:
                break
            page = await own.own_list(_renamed(request, {"cursor": cursor}), connection)
        own_names = {item[field] for item in items if isinstance(item, dict) and isinstance(item.get(field), str)}
        for mount in self:
            try:
                listed, mount_hints = await _every_page(mount.server, request, connection, key)
            except MCPError as failure:  # a mount that is down costs its own items only
                logger.warning("mount %r left out of %s: %s", mount.prefix, request.method, failure.message)
                continue
            if mount.scopes and not self._caller_holds(mount.scopes):  # hidden as scoped items are (``visible``)
                continue
            hints += mount_hints
            for item in listed:
                if isinstance(item, dict) and isinstance(item.get(field), str):
                    if not mount.prefix and self.hidden(field, item[field], own_names):
                        continue  # served by another: a call of it would not reach this mount
                    renamed = mount.name(item[field]) if field == "name" else mount.uri(item[field])
                    items.append(_with_app_uri({**item, field: renamed}, mount))
        cursor = request.params.get("cursor")
        chosen, next_cursor = self._paginate(f"merged {request.method}", items, cursor, own.page_size)
        result: dict[str, Any] = {key: list(chosen)}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        result.update(_cache_hints(hints))
        return result


def _renamed(request: RequestReceived, changes: dict[str, Any]) -> RequestReceived:
    params = {key: value for key, value in request.params.items() if key != "cursor"} if "cursor" in changes else None
    return dataclasses.replace(request, params={**(params or request.params), **changes})


async def _every_page(
    server: MountedServer, request: RequestReceived, connection: Connection, key: str
) -> tuple[list[Any], list[dict[str, Any]]]:
    params = {name: value for name, value in request.params.items() if name != "cursor"}
    items: list[Any] = []
    hints: list[dict[str, Any]] = []
    for _ in range(1000):  # bounded: a mount that pages forever is cut off
        page = await server.handle_request(dataclasses.replace(request, params=params), connection)
        items += page.get(key, [])
        hints.append(page)
        cursor = page.get("nextCursor")
        if not isinstance(cursor, str) or not cursor:
            break
        params = {**params, "cursor": cursor}
    return items, hints


def _cache_hints(pages: list[dict[str, Any]]) -> dict[str, Any]:
    """The hints of a merged list: the shortest ``ttlMs`` of its parts, ``private`` if any part is."""
    ttls = [page["ttlMs"] for page in pages if isinstance(page.get("ttlMs"), int)]
    scopes = [page["cacheScope"] for page in pages if isinstance(page.get("cacheScope"), str)]
    hints: dict[str, Any] = {}
    if ttls:
        hints["ttlMs"] = min(ttls)
    if scopes:
        hints["cacheScope"] = "private" if "private" in scopes else scopes[0]
    return hints


def _prefixed_uri(mount: Mount[Any], item: Any) -> Any:
    if isinstance(item, dict) and isinstance(item.get("uri"), str):
        return {**item, "uri": mount.uri(item["uri"])}
    return item


def _serves_uri(own: MountingServer, uri: Any) -> bool:
    """Whether the mounting server ``own`` has a resource or a template of its own for ``uri``."""
    registry = own.registry
    return isinstance(uri, str) and (
        uri in registry.resources or any(t.template.match(uri) is not None for t in registry.templates)
    )


def _with_app_uri(item: dict[str, Any], mount: Mount[Any]) -> dict[str, Any]:
    """A mounted tool whose MCP App is the mount's ``ui://`` resource names it as the mounting
    server lists it (``ev+ui://...``), so a host reads it through the mount."""
    meta = item.get("_meta")
    ui = meta.get("ui") if isinstance(meta, dict) else None
    if not mount.prefix or not isinstance(ui, dict) or not isinstance(ui.get("resourceUri"), str):
        return item
    assert isinstance(meta, dict)
    renamed_meta = {**meta, "ui": {**ui, "resourceUri": mount.uri(ui["resourceUri"])}}
    if isinstance(meta.get("ui/resourceUri"), str):  # the deprecated flat key, as the official helper writes it
        renamed_meta["ui/resourceUri"] = mount.uri(meta["ui/resourceUri"])
    return {**item, "_meta": renamed_meta}
