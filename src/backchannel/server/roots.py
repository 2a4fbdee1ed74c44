"""``ctx.list_roots()``: the directories the client says matter, as paths a tool can check.

Roots are guidance, not access control (2026-07-28 ``roots.mdx``): a tool uses
``Roots.contains`` to keep its work inside them, and asks the person (say with
``ctx.elicit``) before touching a path outside.

Handshake era: ``roots/list`` is a request on the connection; when the client
declared ``roots.listChanged`` the answer is cached for the session until the
client sends ``notifications/roots/list_changed``. Stateless era: there is no
session, so every request asks again, as an MRTR input request. A client without
the ``roots`` capability gets the server's default roots (``Server(default_roots=)``,
the working directory unless told otherwise), marked ``from_client=False``.
Nothing is shared between sessions.
"""

from __future__ import annotations

__all__ = ["RootItem", "Roots", "RootsCache", "list_roots"]

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

import msgspec

from ..protocol.capabilities import has
from ..runtime.local_paths import local_path, normalise_path
from ..types.errors import InvalidParams
from ..types.roots import ListRootsResult

if TYPE_CHECKING:
    from .context import Context


@dataclass(frozen=True, slots=True)
class RootItem:
    """One root: its ``uri`` and ``name`` as given, and ``path``, the local directory
    it names (normalised, symlinks resolved), or None for a URI naming no local file."""

    uri: str
    name: str | None
    path: Path | None

    @classmethod
    def from_uri(cls, uri: str, name: str | None = None) -> RootItem:
        """A root as a client gave it; ``path`` is None unless ``uri`` is a local ``file:`` URI."""
        return cls(uri, name, _local_directory(uri))

    @classmethod
    def from_path(cls, path: str | os.PathLike[str]) -> RootItem:
        resolved = normalise_path(path)
        return cls(resolved.as_uri(), resolved.name or str(resolved), resolved)


class Roots(Sequence[RootItem]):
    """The roots that apply to this request.

    ``from_client`` is False when the client has no ``roots`` capability and the
    server's default roots stand in for them.
    """

    __slots__ = ("from_client", "items")

    def __init__(self, items: Iterable[RootItem], *, from_client: bool) -> None:
        self.items: tuple[RootItem, ...] = tuple(items)
        self.from_client = from_client

    @overload
    def __getitem__(self, index: int) -> RootItem: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[RootItem]: ...
    def __getitem__(self, index: int | slice) -> RootItem | Sequence[RootItem]:
        return self.items[index]

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[RootItem]:
        return iter(self.items)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Roots):
            return NotImplemented
        return self.items == other.items and self.from_client == other.from_client

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Roots({[item.uri for item in self.items]!r}, from_client={self.from_client})"

    @property
    def paths(self) -> list[Path]:
        """The local directories of the roots (roots naming no local file left out)."""
        return [item.path for item in self.items if item.path is not None]

    def root_of(self, path: str | os.PathLike[str]) -> RootItem | None:
        """The root ``path`` lies in (the innermost one), or None.

        ``path`` is a path or a ``file://`` URI; a relative path counts from the
        working directory. Both sides are compared after normalisation with
        symlinks resolved, so neither ``..`` nor a link leads out of a root.
        """
        candidate = local_path(path)
        if candidate is None:
            return None
        inside = [item for item in self.items if item.path is not None and candidate.is_relative_to(item.path)]
        return max(inside, key=lambda item: len(item.path.parts) if item.path else 0, default=None)

    def contains(self, path: str | os.PathLike[str]) -> bool:
        """Whether ``path`` (a path or ``file://`` URI) lies inside one of the roots."""
        return self.root_of(path) is not None


class RootsCache:
    """A handshake-era session's roots, until the client says they changed."""

    __slots__ = ("generation", "roots")

    def __init__(self) -> None:
        self.roots: Roots | None = None
        #: Bumped by each ``notifications/roots/list_changed``: an answer that was
        #: asked for before the bump is not cached.
        self.generation = 0

    def invalidate(self) -> None:
        self.roots = None
        self.generation += 1


def _local_directory(uri: str) -> Path | None:
    # Only a file: URI names a local directory: any other text from the client (a bare path
    # would be read against the server's working directory) or one that names no file (a NUL,
    # a malformed host) is kept as given, with no path.
    if uri[:5].lower() != "file:":
        return None
    try:
        return local_path(uri)
    except ValueError:
        return None


def default_roots(paths: Sequence[str | os.PathLike[str]]) -> Roots:
    return Roots((RootItem.from_path(path) for path in paths), from_client=False)


def parse_answer(answer: Any) -> Roots:
    """The client's ``ListRootsResult`` as ``Roots``; ``InvalidParams`` when malformed."""
    try:
        result = msgspec.convert(answer, ListRootsResult)
    except msgspec.ValidationError as exc:
        raise InvalidParams(f"the client's roots/list answer is malformed: {exc}") from None
    return Roots((RootItem.from_uri(root.uri, root.name) for root in result.roots), from_client=True)


async def list_roots(ctx: Context, *, refresh: bool = False, key: str | None = None) -> Roots:
    """The client's roots as ``Roots``: items with ``uri``, ``name`` and local ``path``,
    and ``contains(path)`` to keep a tool's work inside them.

    Handshake era: a ``roots/list`` request, cached for the session when the client
    declared ``roots.listChanged`` and dropped when it sends
    ``notifications/roots/list_changed`` (``refresh`` asks anyway). Stateless era:
    an MRTR input request each time (once per request). A client without the
    ``roots`` capability gets the server's ``default_roots`` (the working directory
    by default) with ``from_client`` False. Roots are guidance, not access control.
    ``key`` names the question in ``inputRequests`` (see ``request_input``).
    """
    if ctx.found_roots is None or refresh:
        ctx.found_roots = await _ask_roots(ctx, refresh=refresh, key=key)
    return ctx.found_roots


async def _ask_roots(ctx: Context, *, refresh: bool, key: str | None) -> Roots:
    """The roots from the default, the session's cache, or the client (``roots/list``)."""
    if not has(ctx.client_capabilities, "roots"):
        return default_roots(ctx.server.default_roots)
    cache = ctx.server.roots_cache(ctx.connection) if ctx.era == "handshake" else None
    cacheable = cache is not None and has(ctx.client_capabilities, "roots.listChanged")
    if cacheable and not refresh and cache is not None and cache.roots is not None:
        return cache.roots
    generation = cache.generation if cache is not None else 0
    roots = parse_answer(await ctx.request_input("roots/list", {}, "roots", key=key))
    if cacheable and cache is not None and cache.generation == generation:
        cache.roots = roots
    return roots


def known_roots(ctx: Context) -> Roots | None:
    """The roots known without asking the client: the default, or the session's cache."""
    if not has(ctx.client_capabilities, "roots"):
        return default_roots(ctx.server.default_roots)
    cache = ctx.server.roots_cache(ctx.connection) if ctx.era == "handshake" else None
    return cache.roots if cache is not None else None
