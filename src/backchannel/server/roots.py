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

Roots that carry meaning (a backchannel convention, ``docs/protocol-conventions.md``): a client
may mark a root read-only or sensitive under ``_meta["dev.backchannel/root"]``.
``contains(path, for_writing=True)`` is False inside a read-only root, and a sensitive
root's path (as a path or a ``file://`` URI) is replaced by ``SENSITIVE_ROOT`` in log and
progress messages once the server has seen it: for the rest of the connection, and in the
stateless era in every re-run after the client answered (the question's key rides the
sealed ``requestState``). What a tool sends before the client first answered cannot be helped.
"""

from __future__ import annotations

__all__ = ["SENSITIVE_ROOT", "RootItem", "Roots", "RootsCache", "hidden_log", "list_roots", "text_hider"]

import contextlib
import functools
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

import msgspec

from ..protocol.capabilities import has
from ..redaction.redaction import Redactor
from ..runtime.local_paths import local_path, normalise_path
from ..types.errors import InvalidParams
from ..types.roots import ListRootsResult, root_marks
from .mrtr import InputRequired

if TYPE_CHECKING:
    from pathlib import Path

    from .context import Context


#: What a sensitive root's path becomes in log and progress messages (the rest of a path under it stays).
SENSITIVE_ROOT = "[REDACTED:sensitive root]"
# The texts naming sensitive roots that one connection (or one request's rounds) remembers.
_MAX_HIDDEN = 1024
# Sealed in requestState: the input keys the roots were asked under (the last few), so a re-run
# can read the client's answer (and hide its sensitive roots) before the handler asks again.
_MEMO_KEY = "rootsKeys"
_MAX_KEYS = 8


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
        _remember_sensitive(ctx, ctx.found_roots)
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
    try:
        answer = await ctx.request_input("roots/list", {}, "roots", key=key)
    except InputRequired as asked:
        if ctx.round is not None:
            kept = ctx.round.memo.get(_MEMO_KEY)
            ctx.round.memo[_MEMO_KEY] = [*(kept if isinstance(kept, list) else ()), asked.key][-_MAX_KEYS:]
        raise
    roots = parse_answer(answer)
    if cacheable and cache is not None and cache.generation == generation:
        cache.roots = roots
    return roots


def known_roots(ctx: Context) -> Roots | None:
    """The roots known without asking the client: the default, or the session's cache."""
    if not has(ctx.client_capabilities, "roots"):
        return default_roots(ctx.server.default_roots)
    cache = ctx.server.roots_cache(ctx.connection) if ctx.era == "handshake" else None
    return cache.roots if cache is not None else None


# ------------------------------------------------------------------ sensitive roots


def _remember_sensitive(ctx: Context, roots: Roots) -> None:
    cache = ctx.server.roots_cache(ctx.connection)
    if cache is not None:
        cache.remember(text for item in roots.sensitive for text in _texts_naming(item))


def _texts_naming(item: RootItem) -> list[str]:
    """The ways a tool may spell a root: the URI as given, and its path and ``file://`` URI,
    with symlinks resolved and as written. A trailing slash is left off (what follows is kept)."""
    texts = [item.uri]
    paths = [item.path, _unresolved(item.uri)]
    texts += [spelling for path in paths if path is not None for spelling in (str(path), path.as_uri())]
    return list(dict.fromkeys(text.rstrip("/") for text in texts if len(text.rstrip("/")) > 1))


def _unresolved(uri: str) -> Path | None:
    if uri[:5].lower() != "file:":
        return None
    try:
        return local_path(uri, resolve_symlinks=False)
    except ValueError:
        return None


def text_hider(ctx: Context) -> Callable[[str], str] | None:
    """A function that replaces every sensitive root's path in a text with ``SENSITIVE_ROOT``,
    or None when the client marked none (the common case costs a lookup)."""
    cache = ctx.server.roots_cache(ctx.connection)
    texts = set(cache.hidden) if cache is not None else set()
    seen = [ctx.found_roots] if ctx.found_roots is not None else _answered_earlier(ctx)
    if cache is not None and ctx.found_roots is not None:
        seen = []  # list_roots() put them in the connection's cache already
    texts.update(text for roots in seen for item in roots.sensitive for text in _texts_naming(item))
    return _hider(frozenset(texts)) if texts else None


def _answered_earlier(ctx: Context) -> list[Roots]:
    """Stateless era, in a re-run before it asks again: the roots the client gave in answer
    to the questions an earlier round asked (their keys are sealed in ``requestState``)."""
    round_ = ctx.round
    keys = round_.memo.get(_MEMO_KEY) if round_ is not None else None
    if round_ is None or not isinstance(keys, list):
        return []
    found = []
    for key in keys:
        answer = round_.answers.get(key, round_.responses.get(key)) if isinstance(key, str) else None
        # A malformed answer is reported when the handler asks; meanwhile there is nothing to hide.
        with contextlib.suppress(InvalidParams):
            if answer is not None:
                found.append(parse_answer(answer))
    return found


@functools.lru_cache(maxsize=64)
def _hider(texts: frozenset[str]) -> Callable[[str], str]:
    # Longest first, so a URI is replaced whole before its path part is tried; a match must not
    # run on into a longer name ("/srv/secret" hides in "/srv/secret/a" but not "/srv/secrets").
    alternatives = "|".join(re.escape(text) for text in sorted(texts, key=len, reverse=True))
    pattern = re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])")

    def hide(text: str) -> str:
        return pattern.sub(SENSITIVE_ROOT, text) if text else text

    return hide


def hidden_log(redactor: Redactor | None, hide: Callable[[str], str], data: Any, logger: str | None) -> tuple[Any, Any]:
    """A log message's ``data`` and ``logger`` with sensitive roots hidden in every text in
    them (any object's ``str()`` included, as the redactor walks it), whether or not the
    server redacts secrets; the server's redaction then runs as usual."""
    return _hiding(redactor, hide).redact(data), hide(logger) if isinstance(logger, str) else logger


@functools.lru_cache(maxsize=64)
def _hiding(redactor: Redactor | None, hide: Callable[[str], str]) -> Redactor:
    return (redactor if redactor is not None else _plain()).hiding(hide)


@functools.lru_cache(maxsize=1)
def _plain() -> Redactor:
    """A redactor that knows no secrets: the walk that turns any data into JSON text, for hiding."""
    return Redactor(keys=(), patterns=())
