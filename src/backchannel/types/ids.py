"""What a JSON-RPC request id (and a progress token) may be: a string or an integer.

The one definition, used by the framing (to echo an id in an HTTP rejection) and by
the session (to accept a request). JSON ``true`` decodes to a ``bool``, which is an
``int`` subclass in Python and no request id, so the check is on the exact type.
"""

from __future__ import annotations

__all__ = ["RequestId", "is_request_id", "request_id_or_none"]

from typing import TypeAlias, TypeGuard

RequestId: TypeAlias = int | str


def is_request_id(value: object) -> TypeGuard[RequestId]:
    """Whether ``value`` may be a request id or a progress token."""
    kind = type(value)
    return kind is str or kind is int


def request_id_or_none(value: object) -> RequestId | None:
    """``value`` if it may be a request id, else None (what an error answer's ``id`` becomes)."""
    kind = type(value)
    return value if kind is str or kind is int else None  # type: ignore[return-value]
