"""What changes in a message as it crosses the bridge: pure functions, no I/O.

A request from downstream loses what belongs to its own hop (the stateless era's envelope in
``_meta``, its progress token, its ``inputResponses`` and ``requestState``, which the bridge
answers or unseals itself); a result from upstream loses what belongs to the upstream hop (its
``resultType``, its identity in ``_meta``, and, for a handshake-era client, the cache hints of
the stateless era) and what the downstream revision lacks (``for_revision``).
"""

from __future__ import annotations

__all__ = [
    "CAPABILITY_OF",
    "QUESTION_KEYS",
    "carried_capabilities",
    "downstream_result",
    "upstream_params",
]

from typing import Any

from ..types import meta as M
from ..types.field_revisions import for_revision, trims

#: The client capability a server's question needs, by method (``ctx.request_input`` checks it).
CAPABILITY_OF = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}
#: The client capabilities the bridge carries upstream: the ones whose questions it relays.
_CARRIED = ("elicitation", "sampling", "roots")
#: The stateless era's envelope: each hop writes its own.
_ENVELOPE = frozenset((M.PROTOCOL_VERSION, M.CLIENT_CAPABILITIES, M.CLIENT_INFO, M.LOG_LEVEL, M.PROGRESS_TOKEN))
#: A request's own multi round-trip fields: the bridge answers or unseals them.
QUESTION_KEYS = ("inputResponses", "requestState")
#: What a list or a call's result carries per revision, by method: (list key, item shape) or result shape.
_LISTED = {
    "tools/list": ("tools", "Tool"),
    "prompts/list": ("prompts", "Prompt"),
    "resources/list": ("resources", "Resource"),
    "resources/templates/list": ("resourceTemplates", "ResourceTemplate"),
}
_RESULT_SHAPE = {"tools/call": "CallToolResult"}
#: Only the stateless era's results carry these.
_STATELESS_ONLY = ("resultType", "ttlMs", "cacheScope")
#: The results a 2026-07-28 client must get cache hints with (``CacheableResult``: ``ttlMs`` and
#: ``cacheScope`` are required); a handshake-era upstream sends none, so the bridge adds the ones
#: that promise nothing: stale at once, and only for this authorization context.
_CACHEABLE = frozenset((*_LISTED, "resources/read"))
_NO_CACHING = {"ttlMs": 0, "cacheScope": "private"}


def carried_capabilities(declared: dict[str, Any] | None) -> dict[str, Any]:
    """What the bridge declares upstream for a downstream client that declared ``declared``:
    the capabilities whose questions it relays, as the client declared them, and nothing else."""
    if not declared:
        return {}
    return {name: declared[name] for name in _CARRIED if name in declared}


def upstream_params(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` as they go upstream: without this hop's envelope, token and round trip fields
    (a ``tasks/*`` request's ``inputResponses`` answer the task's questions: they go on)."""
    meta = params.get("_meta")
    if method.startswith("tasks/"):
        own: tuple[str, ...] = ()
    else:
        own = QUESTION_KEYS
    if not any(key in params for key in own) and (type(meta) is not dict or not _ENVELOPE & meta.keys()):
        return params
    sent = {key: value for key, value in params.items() if key not in own}
    if type(meta) is dict:
        kept = {key: value for key, value in meta.items() if key not in _ENVELOPE}
        if kept:
            sent["_meta"] = kept
        else:
            del sent["_meta"]
    return sent


def downstream_result(method: str, result: dict[str, Any], era: str, version: str | None) -> dict[str, Any]:
    """An upstream's ``result`` as the downstream client of ``era`` and ``version`` gets it."""
    meta = result.get("_meta")
    changed = type(meta) is dict and M.SERVER_INFO in meta
    if era == "handshake" and any(key in result for key in _STATELESS_ONLY):
        changed = True
    if changed:
        result = {key: value for key, value in result.items() if era != "handshake" or key not in _STATELESS_ONLY}
        if type(meta) is dict:
            kept = {key: value for key, value in meta.items() if key != M.SERVER_INFO}
            if kept:
                result["_meta"] = kept
            else:
                result.pop("_meta", None)
    if era == "stateless" and method in _CACHEABLE and not result.keys() >= _NO_CACHING.keys():
        result = {**_NO_CACHING, **result}
    if version is None:
        return result
    listed = _LISTED.get(method)
    if listed is not None:
        key, shape = listed
        items = result.get(key)
        if type(items) is list and trims(shape, version):
            result = {**result, key: [for_revision(shape, item, version) for item in items]}
    elif (shape_name := _RESULT_SHAPE.get(method)) is not None and trims(shape_name, version):
        result = for_revision(shape_name, result, version)
    return result
