"""Parameter descriptions from a function's docstring (a Google-style ``Args:`` section).

``derive_parameters`` uses them as each parameter's ``description`` in ``inputSchema``
when the annotation gives none.
"""

from __future__ import annotations

__all__ = ["docstring_args"]

import re

_SECTION = re.compile(r"^(Args|Arguments|Parameters|Keyword Args):\s*$")
_ENTRY = re.compile(r"^\*{0,2}(?P<name>[A-Za-z_]\w*)\s*(?:\([^)]*\))?\s*:\s*(?P<text>.*)$")


def docstring_args(doc: str | None) -> dict[str, str]:
    """Parameter descriptions from a Google-style ``Args:`` section."""
    found: dict[str, str] = {}
    section_indent: int | None = None
    entry_indent: int | None = None
    current: str | None = None
    for line in (doc or "").splitlines():
        text = line.strip()
        indent = len(line) - len(line.lstrip())
        if _SECTION.match(text):
            section_indent, entry_indent, current = indent, None, None
            continue
        if section_indent is None or not text:
            continue
        if indent <= section_indent:
            section_indent, current = None, None
            continue
        if entry_indent is None:
            entry_indent = indent
        if indent <= entry_indent:
            entry = _ENTRY.match(text)
            current = entry["name"] if entry else None
            if entry:
                found[entry["name"]] = entry["text"].strip()
        elif current is not None:
            found[current] = f"{found[current]} {text}".strip()
    return {key: value for key, value in found.items() if value}
