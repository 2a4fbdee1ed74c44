"""Which revisions have each optional field the server sends: what an older session must not get.

The server builds its definitions (a tool's, a prompt's...) and results once, in the newest
shape; ``for_revision(shape, value, version)`` gives ``value`` without the fields the session's
revision lacks. ``FIELD_VERSIONS`` is the table, ``(shape, field)`` -> the revisions that have
the field, read off each revision's ``schema.ts`` (the schema's type names are the shapes), as
``methods.py`` keeps ``(method, version)``. 2024-11-05 lacks what 2025-03-26 added (the
``completions`` capability, tool annotations, a progress message); 2025-03-26 lacks what
2025-06-18 added (``title``, ``outputSchema``, ``structuredContent``, ``_meta`` on definitions,
``lastModified``); 2025-06-18 lacks what 2025-11-25 added (``icons``, ``websiteUrl``,
``description`` on ``Implementation``, tasks). A field the table does not name is in every
revision. A content block a revision lacks (``audio``, ``resource_link``) is not a field:
it is not taken out here.
"""

from __future__ import annotations

__all__ = ["FIELD_VERSIONS", "for_revision", "has_field", "trims", "versions_without"]

from typing import Any

from .versions import VERSIONS, at_least


def _since(first: str) -> frozenset[str]:
    return frozenset(version for version in VERSIONS if at_least(version, first))


_SINCE_2025_03_26 = _since("2025-03-26")
_SINCE_2025_06_18 = _since("2025-06-18")
_SINCE_2025_11_25 = _since("2025-11-25")
_ONLY_2025_11_25 = frozenset({"2025-11-25"})
_ONLY_2026_07_28 = frozenset({"2026-07-28"})

#: (shape, wire field) -> every revision whose schema has that field of that shape.
FIELD_VERSIONS: dict[tuple[str, str], frozenset[str]] = {
    ("ServerCapabilities", "completions"): _SINCE_2025_03_26,
    ("ServerCapabilities", "tasks"): _ONLY_2025_11_25,
    ("ServerCapabilities", "extensions"): _ONLY_2026_07_28,
    ("Implementation", "title"): _SINCE_2025_06_18,
    ("Implementation", "description"): _SINCE_2025_11_25,
    ("Implementation", "icons"): _SINCE_2025_11_25,
    ("Implementation", "websiteUrl"): _SINCE_2025_11_25,
    ("Tool", "annotations"): _SINCE_2025_03_26,
    ("Tool", "title"): _SINCE_2025_06_18,
    ("Tool", "outputSchema"): _SINCE_2025_06_18,
    ("Tool", "_meta"): _SINCE_2025_06_18,
    ("Tool", "icons"): _SINCE_2025_11_25,
    ("Tool", "execution"): _ONLY_2025_11_25,
    ("CallToolResult", "structuredContent"): _SINCE_2025_06_18,
    ("Prompt", "title"): _SINCE_2025_06_18,
    ("Prompt", "_meta"): _SINCE_2025_06_18,
    ("Prompt", "icons"): _SINCE_2025_11_25,
    ("PromptArgument", "title"): _SINCE_2025_06_18,
    ("Resource", "title"): _SINCE_2025_06_18,
    ("Resource", "_meta"): _SINCE_2025_06_18,
    ("Resource", "icons"): _SINCE_2025_11_25,
    ("ResourceTemplate", "title"): _SINCE_2025_06_18,
    ("ResourceTemplate", "_meta"): _SINCE_2025_06_18,
    ("ResourceTemplate", "icons"): _SINCE_2025_11_25,
    ("Annotations", "lastModified"): _SINCE_2025_06_18,
    ("ProgressNotificationParams", "message"): _SINCE_2025_03_26,
}

#: Fields that hold shapes of their own: (shape, field) -> the shape inside (a list's items, or the object).
_INSIDE: dict[tuple[str, str], str] = {
    ("Prompt", "arguments"): "PromptArgument",
    ("Resource", "annotations"): "Annotations",
    ("ResourceTemplate", "annotations"): "Annotations",
}

# version -> shape -> the fields that revision lacks (empty for a shape listed only because a
# shape inside it lacks some); a shape with nothing to take out at any depth is not listed.
_LACKING: dict[str, dict[str, frozenset[str]]] = {}
for _version in VERSIONS:
    _lacking: dict[str, frozenset[str]] = {}
    for (_shape, _field), _has in FIELD_VERSIONS.items():
        if _version not in _has:
            _lacking[_shape] = _lacking.get(_shape, frozenset()) | {_field}
    for (_shape, _field), _inner in _INSIDE.items():
        if _inner in _lacking:
            _lacking.setdefault(_shape, frozenset())
    _LACKING[_version] = _lacking

_NESTED: dict[str, tuple[tuple[str, str], ...]] = {}
for (_shape, _field), _inner in _INSIDE.items():
    _NESTED[_shape] = (*_NESTED.get(_shape, ()), (_field, _inner))


def has_field(shape: str, field: str, version: str | None) -> bool:
    """Whether ``version``'s ``shape`` has ``field`` (True for an unknown or no version)."""
    lacking = _LACKING.get(version or "")
    return lacking is None or field not in lacking.get(shape, ())


def versions_without(shape: str, field: str) -> frozenset[str]:
    """The revisions whose ``shape`` lacks ``field``: for a check made per message, done once
    at import (``version in NO_MESSAGE`` costs less than a call)."""
    return frozenset(version for version in VERSIONS if not has_field(shape, field, version))


def trims(shape: str, version: str | None) -> bool:
    """Whether ``for_revision(shape, ..., version)`` may take anything out: ask once per page."""
    lacking = _LACKING.get(version or "")
    return lacking is not None and shape in lacking


def for_revision(shape: str, value: dict[str, Any], version: str | None) -> dict[str, Any]:
    """``value`` (a ``shape`` on the wire) without the fields ``version`` lacks, at any depth the
    table names; ``value`` itself, not a copy, when there is nothing to take out (or no version)."""
    lacking = _LACKING.get(version or "")
    absent = lacking.get(shape) if lacking is not None else None
    if absent is None:
        return value
    kept = value if absent.isdisjoint(value) else {key: item for key, item in value.items() if key not in absent}
    for field, inner in _NESTED.get(shape, ()):
        held = kept.get(field)
        if isinstance(held, dict):
            trimmed: Any = for_revision(inner, held, version)
            changed = trimmed is not held
        elif isinstance(held, list):
            trimmed = [for_revision(inner, item, version) if isinstance(item, dict) else item for item in held]
            changed = any(new is not old for new, old in zip(trimmed, held, strict=True))
        else:
            continue
        if changed:
            kept = {**kept, field: trimmed}
    return kept
