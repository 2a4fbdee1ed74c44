"""``ctx.list_roots()``: the roots of the request a ``Context`` serves, and the sensitive ones
hidden in what it sends.

Handshake era: ``roots/list`` is a request on the connection; when the client
declared ``roots.listChanged`` the answer is cached for the session until the
client sends ``notifications/roots/list_changed``. Stateless era: there is no
session, so every request asks again, as an MRTR input request. A client without
the ``roots`` capability gets the server's default roots (``Server(default_roots=)``,
the working directory unless told otherwise), marked ``from_client=False``.
Nothing is shared between sessions. What roots are (``Roots``, ``RootItem``, the session's
``RootsCache``) is ``roots.py``.

A sensitive root's path (as a path or a ``file://`` URI) is replaced by ``SENSITIVE_ROOT`` in
log and progress messages once the server has seen it: for the rest of the connection, and in
the stateless era in every re-run after the client answered (the question's key rides the
sealed ``requestState``). What a tool sends before the client first answered cannot be helped.
"""

from __future__ import annotations

__all__ = ["hidden_log", "known_roots", "list_roots", "text_hider"]

import contextlib
import functools
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..protocol.capabilities import has
from ..redaction.redaction import Redactor
from ..runtime.local_paths import local_path
from ..types.errors import InvalidParams
from .mrtr import InputRequired
from .roots import SENSITIVE_ROOT, RootItem, Roots, default_roots, parse_answer

if TYPE_CHECKING:
    from pathlib import Path

    from .context import Context

# Sealed in requestState: the input keys the roots were asked under (the last few), so a re-run
# can read the client's answer (and hide its sensitive roots) before the handler asks again.
_MEMO_KEY = "rootsKeys"
_MAX_KEYS = 8


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
