"""Roots as a tool sees them: ``RootItem``, ``Roots`` (``contains``, ``root_of``), and
``RootsCache``, what a handshake-era session remembers of them.

Roots are guidance, not access control (2026-07-28 ``roots.mdx``): a tool uses
``Roots.contains`` to keep its work inside them, and asks the person (say with
``ctx.elicit``) before touching a path outside. A client may mark a root read-only or
sensitive under ``_meta["dev.backchannel/root"]`` (a backchannel convention,
``docs/protocol-conventions.md``): ``contains(path, for_writing=True)`` is False inside a
read-only root, and a sensitive root's path becomes ``SENSITIVE_ROOT`` in log and progress
messages. Asking the client for them (``ctx.list_roots()``) and hiding the sensitive ones is
``request_roots.py``; this module takes no ``Context``.
"""

from __future__ import annotations

__all__ = ["SENSITIVE_ROOT", "RootItem", "Roots", "RootsCache", "default_roots", "parse_answer"]

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

import msgspec

from ..runtime.local_paths import local_path, normalise_path
from ..types.errors import InvalidParams
from ..types.roots import ListRootsResult, root_marks

if TYPE_CHECKING:
    from pathlib import Path


#: What a sensitive root's path becomes in log and progress messages (the rest of a path under it stays).
SENSITIVE_ROOT = "[REDACTED:sensitive root]"
# The texts naming sensitive roots that one connection (or one request's rounds) remembers.
_MAX_HIDDEN = 1024


@dataclass(frozen=True, slots=True)
class RootItem:
    """One root: its ``uri`` and ``name`` as given, and ``path``, the local directory
    it names (normalised, symlinks resolved), or None for a URI naming no local file.
    ``read_only`` and ``sensitive`` are the client's marks (``_meta["dev.backchannel/root"]``)."""

    uri: str
    name: str | None
    path: Path | None
    read_only: bool = False
    sensitive: bool = False

    @classmethod
    def from_uri(cls, uri: str, name: str | None = None, meta: Any = None) -> RootItem:
        """A root as a client gave it; ``path`` is None unless ``uri`` is a local ``file:`` URI,
        and the marks are read from ``meta`` (the root's ``_meta``)."""
        marks = root_marks(meta)
        return cls(uri, name, _local_directory(uri), marks.read_only, marks.sensitive)

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

    def contains(self, path: str | os.PathLike[str], *, for_writing: bool = False) -> bool:
        """Whether ``path`` (a path or ``file://`` URI) lies inside one of the roots; with
        ``for_writing``, inside one the client did not mark read-only. The innermost root
        decides: a writable folder inside a read-only root is writable, and the reverse not."""
        root = self.root_of(path)
        return root is not None and not (for_writing and root.read_only)

    @property
    def sensitive(self) -> list[RootItem]:
        """The roots the client marked sensitive: their paths never reach log or progress messages."""
        return [item for item in self.items if item.sensitive]


class RootsCache:
    """A handshake-era session's roots, until the client says they changed."""

    __slots__ = ("generation", "hidden", "roots")

    def __init__(self) -> None:
        self.roots: Roots | None = None
        #: Bumped by each ``notifications/roots/list_changed``: an answer that was
        #: asked for before the bump is not cached.
        self.generation = 0
        #: The texts naming every root the client marked sensitive on this connection (oldest
        #: first, at most ``_MAX_HIDDEN``). A change of roots keeps them: hiding a path the
        #: client no longer lists costs nothing, showing one it once marked would leak it.
        self.hidden: dict[str, None] = {}

    def remember(self, texts: Iterable[str]) -> None:
        for text in texts:
            self.hidden.pop(text, None)
            self.hidden[text] = None
        while len(self.hidden) > _MAX_HIDDEN:
            del self.hidden[next(iter(self.hidden))]

    def invalidate(self) -> None:
        self.roots = None
        self.generation += 1

    def kept(self) -> dict[str, Any]:
        """The cache as data, for a fleet's session record: the roots (when cached) and the
        texts of sensitive roots, so another worker serves and hides as this one does."""
        kept: dict[str, Any] = {"hidden": list(self.hidden)}
        if self.roots is not None:
            kept["roots"] = [[item.uri, item.name, item.read_only, item.sensitive] for item in self.roots]
        return kept

    def take_up(self, kept: Any) -> None:
        """What ``kept`` gave, written by another worker: its roots replace this cache's (none
        there means the client changed them since), and its hidden texts join these."""
        if not isinstance(kept, dict):
            return
        hidden = kept.get("hidden")
        if isinstance(hidden, list):
            self.remember(text for text in hidden if isinstance(text, str))
        listed = kept.get("roots")
        if not isinstance(listed, list):
            self.roots = None
            return
        items = [
            RootItem(entry[0], entry[1], _local_directory(entry[0]), bool(entry[2]), bool(entry[3]))
            for entry in listed
            if isinstance(entry, list) and len(entry) == 4 and isinstance(entry[0], str)
        ]
        self.roots = Roots(items, from_client=True)


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
    return Roots((RootItem.from_uri(root.uri, root.name, root.meta) for root in result.roots), from_client=True)
