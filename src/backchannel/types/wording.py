"""How numbers read in messages a person sees: ``1 character``, ``2 characters``."""

from __future__ import annotations

__all__ = ["counted", "plain_number"]

from typing import Any


def plain_number(n: Any) -> str:
    """``3`` for ``3.0``; any other value as ``str`` gives it."""
    return str(int(n)) if isinstance(n, float) and n.is_integer() else str(n)


def counted(n: Any, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun`` agreeing with it (``plural``, or ``noun + "s"``, unless ``n`` is 1)."""
    return f"{plain_number(n)} {noun if n == 1 else plural or noun + 's'}"
