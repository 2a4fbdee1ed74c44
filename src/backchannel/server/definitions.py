"""What ``tools/list``, ``prompts/list`` and ``resources/list`` show of a registered entry."""

from __future__ import annotations

__all__ = ["wire_definition"]

from typing import Any


def wire_definition(*entries: tuple[str, Any]) -> dict[str, Any]:
    """A definition as it goes on the wire: each ``(wire name, value)`` in order, left out when unset.

    Unset is ``None`` or empty (``""``, ``[]``, ``{}``): the spec's optional fields are omitted
    rather than sent empty. Put the fields that are always there (``name``, ``uri``) first.
    """
    return {wire: value for wire, value in entries if value}
