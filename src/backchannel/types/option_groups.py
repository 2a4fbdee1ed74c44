"""Option groups and the flat keywords they replaced: one rule for ``Server(...)`` and ``Client(...)``.

Each group is a frozen dataclass; every flat keyword names one field of one group
(``request_timeout`` -> ``timeouts.request``) and wins over the same field of a group passed
beside it. ``server/options.py`` and ``client/options.py`` hold the groups and the keyword maps.
"""

from __future__ import annotations

__all__ = ["apply_flat_keywords"]

import dataclasses
from collections.abc import Mapping
from typing import Any


def apply_flat_keywords(
    owner: str, groups: dict[str, Any], flat: Mapping[str, Any], fields: Mapping[str, tuple[str, str]]
) -> dict[str, Any]:
    """``groups`` (name -> dataclass) with each flat keyword applied to its ``(group, field)``.

    Raises ``TypeError`` (as Python does for a bad keyword) naming ``owner`` for a keyword not in
    ``fields``. Build the options object from what this returns.
    """
    changes: dict[str, dict[str, Any]] = {}
    for keyword, value in flat.items():
        target = fields.get(keyword)
        if target is None:
            raise TypeError(f"{owner}() got an unexpected keyword argument {keyword!r}")
        changes.setdefault(target[0], {})[target[1]] = value
    for group, values in changes.items():
        groups[group] = dataclasses.replace(groups[group], **values)
    return groups
