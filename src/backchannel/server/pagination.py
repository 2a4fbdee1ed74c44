"""Cursor pagination for the list methods.

A cursor is opaque to clients; ours encodes the offset and the kind of list so a
cursor from ``tools/list`` handed to ``prompts/list`` is refused, not misread.
"""

from __future__ import annotations

__all__ = ["paginate"]

import base64
import binascii
from collections.abc import Sequence
from typing import Any, TypeVar

from ..types.errors import InvalidParams

T = TypeVar("T")


def _encode(kind: str, offset: int) -> str:
    return base64.urlsafe_b64encode(f"{kind}:{offset}".encode()).decode()


def _decode(kind: str, cursor: Any) -> int:
    if not isinstance(cursor, str):
        raise InvalidParams(f"params.cursor must be a string (the nextCursor of a previous {kind} page)")
    try:
        tag, _, number = base64.urlsafe_b64decode(cursor.encode()).decode().partition(":")
        offset = int(number)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise InvalidParams(f"invalid cursor for {kind}: {_shown(cursor)}") from None
    # Only the exact spelling we issued: lenient base64 would take junk, padding or "+1" as the same cursor.
    if tag != kind or offset < 0 or _encode(kind, offset) != cursor:
        raise InvalidParams(f"invalid cursor for {kind}: {_shown(cursor)}")
    return offset


def _shown(cursor: str) -> str:
    """The cursor for an error message, cut short: a peer can send megabytes of it."""
    return repr(cursor) if len(cursor) <= 64 else f"{cursor[:64]!r}... ({len(cursor)} characters)"


def paginate(kind: str, items: Sequence[T], cursor: Any, page_size: int | None) -> tuple[Sequence[T], str | None]:
    """One page of ``items`` after ``cursor`` and the cursor of the next page (None at the end)."""
    start = 0 if cursor is None else _decode(kind, cursor)
    if page_size is None:
        return items[start:], None
    end = start + page_size
    return items[start:end], (_encode(kind, end) if end < len(items) else None)
