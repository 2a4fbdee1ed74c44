"""pydantic's classes that a form looks for, taken from ``sys.modules`` instead of imported.

A form made of a dataclass or a TypedDict needs no pydantic: its schema and its checks are
ours (``schema.py``). Nothing can be a ``BaseModel``, a ``FieldInfo`` or an ``EmailStr`` while
pydantic is not loaded, so each check asks for the class only if its module is there, and
otherwise gets a class that nothing is an instance or subclass of. The first ``ctx.elicit``
of a server that never imported pydantic no longer imports it (``docs/performance.md``).
"""

from __future__ import annotations

__all__ = ["loaded"]

import sys
from typing import Any


class _Absent:
    """Stands for a class whose module is not loaded: nothing is one."""


def loaded(module: str, name: str) -> Any:
    """``module.name`` when ``module`` is imported, else a class nothing is an instance of."""
    found = getattr(sys.modules.get(module), name, None)
    return _Absent if found is None else found
