"""OAuth scopes per tool, prompt, resource and template (``add_tool(fn, scopes=[...])``).

The HTTP app asks ``ScopeTable.for_request`` what a request needs and refuses it with 403
``insufficient_scope`` when the caller's token lacks some (``http_host/gate.py``); the list routes
show a caller only what its token lets it use (``visible``). The caller is the principal a
``ResourceAuth`` admitted (``backchannel.auth.current_principal``): over stdio, and over HTTP
without ``ResourceAuth``, no token names any scopes and nothing is checked or hidden.
"""

from __future__ import annotations

__all__ = ["ScopeTable", "caller_holds", "visible"]

import sys
from collections.abc import Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from ..auth.principal import Principal
    from .resources import RegisteredTemplate

T = TypeVar("T")

_BY_NAME = {"tools/call": "tool", "prompts/get": "prompt"}
_BY_URI = ("resources/read", "resources/subscribe", "resources/unsubscribe")


class ScopeTable:
    """What each registered item needs, by key: ``tool:<name>``, ``prompt:<name>``,
    ``resource:<uri>``, ``template:<uri template>``."""

    __slots__ = ("_listed", "_needed")

    def __init__(self) -> None:
        self._needed: dict[str, tuple[str, ...]] = {}
        # The list ``visible`` last made of each kind's items, kept until an item is registered or
        # withdrawn (the registry tells this table of each: ``set``), so that listing N tools a page
        # at a time costs each page its page, not a copy of all N (``docs/performance.md``).
        self._listed: dict[str, tuple[Mapping[str, Any], list[Any]]] = {}

    def __contains__(self, key: str) -> bool:
        return key in self._needed

    def set(self, key: str, scopes: Collection[str]) -> None:
        """Record that ``key`` needs ``scopes`` (none: forget it). The registry calls it for every
        item it registers or withdraws."""
        if isinstance(scopes, str):
            raise TypeError(f"scopes must be a list of scope names, not the string {scopes!r}")
        self._listed.clear()
        if scopes:
            self._needed[key] = tuple(dict.fromkeys(scopes))
        else:
            self._needed.pop(key, None)

    def needed(self, key: str) -> tuple[str, ...]:
        return self._needed.get(key, ())

    def for_request(self, method: str, params: Any, templates: Iterable[RegisteredTemplate]) -> tuple[str, ...]:
        """The scopes a request needs: its tool's, prompt's, resource's (or the template matching
        its URI), including what ``completion/complete`` completes for."""
        if not self._needed or not isinstance(params, dict):
            return ()
        if method in _BY_NAME:
            name = params.get("name")
            return self.needed(f"{_BY_NAME[method]}:{name}") if isinstance(name, str) else ()
        if method == "completion/complete":
            ref = params.get("ref")
            if not isinstance(ref, dict):
                return ()
            if ref.get("type") == "ref/prompt" and isinstance(ref.get("name"), str):
                return self.needed(f"prompt:{ref['name']}")
            uri = ref.get("uri")
            return self.needed(f"template:{uri}") or self.needed(f"resource:{uri}") if isinstance(uri, str) else ()
        if method in _BY_URI:
            uri = params.get("uri")
            if not isinstance(uri, str):
                return ()
            if f"resource:{uri}" in self._needed:
                return self.needed(f"resource:{uri}")
            for template in templates:
                if template.template.match(uri) is not None:
                    return self.needed(f"template:{template.template}")
        return ()


def visible(table: ScopeTable, kind: str, items: Mapping[str, T]) -> list[T]:
    """The ``items`` (by name or URI; ``kind`` is ``tool``, ``prompt``, ``resource`` or
    ``template``) the caller may use: all of them unless a ``ResourceAuth`` admitted the caller,
    else those whose scopes its token grants. Read it, do not change it: without a principal it is
    the list of the last call, until an item is registered or withdrawn."""
    principal = _current_principal()
    if principal is None:
        known = table._listed.get(kind)
        if known is not None and known[0] is items:
            return known[1]
        listed = list(items.values())
        table._listed[kind] = (items, listed)
        return listed
    return [item for name, item in items.items() if principal.holds(table.needed(f"{kind}:{name}"))]


def caller_holds(scopes: Collection[str]) -> bool:
    """Whether the caller of the request being served may use what needs ``scopes``: yes without
    a principal (stdio, memory, HTTP without ``ResourceAuth``), else when its token grants them all."""
    principal = _current_principal()
    return principal is None or principal.holds(tuple(scopes))


def _current_principal() -> Principal | None:
    # No principal can be set before ``backchannel.auth`` is loaded (its ContextVar lives there), and
    # a server without ``ResourceAuth`` never loads it: not importing it for this kept 0.1 MiB and
    # a dataclass out of every start (``tests/startup/test_stdio_imports.py``).
    principal = sys.modules.get("backchannel.auth.principal")
    return None if principal is None else principal.current_principal()
