"""Reading JSON the server sent, whatever its shape: a value as an object or a list, or empty."""

from __future__ import annotations

__all__ = ["obj", "seq"]

from typing import Any


def obj(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def seq(value: Any) -> list[Any]:
    """``value`` when it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []
