"""Argument completion (``completion/complete``) for prompts and resource templates: where a
server's author imports ``Complete``, ``complete_from`` and ``PrefixIndex`` from.

The completers live in ``backchannel/completion/`` (``completers.py`` says how to attach one and
what it may return); the request's side, the lookup and the rate limit, in ``completion_request.py``.
"""

from __future__ import annotations

__all__ = [
    "MAX_VALUES",
    "ArgumentCompleter",
    "Complete",
    "Completer",
    "CompleterLike",
    "Matches",
    "PrefixIndex",
    "Unfinished",
    "complete_from",
    "completers_for",
]

from ..completion.completers import (
    ArgumentCompleter,
    Complete,
    Completer,
    CompleterLike,
    Unfinished,
    completers_for,
)
from ..completion.prefix_index import MAX_VALUES, Matches, PrefixIndex, complete_from
