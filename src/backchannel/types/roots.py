"""Roots: ``roots/list`` (a server request in the handshake era, an MRTR input request
in 2026-07-28, deprecated there)."""

from __future__ import annotations

__all__ = [
    "ListRootsRequestParams",
    "ListRootsResult",
    "Root",
    "RootsListChangedNotificationParams",
]

from typing import Any, TypeAlias

import msgspec

from .base import Model, NotificationParams, RequestParams, Result


class Root(Model, kw_only=True):
    #: A ``file://`` URI.
    uri: str
    name: str | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


ListRootsRequestParams: TypeAlias = RequestParams


class ListRootsResult(Result, kw_only=True):
    """In 2026-07-28 an MRTR input response (no ``_meta``/``resultType``)."""

    roots: list[Root]


#: ``notifications/roots/list_changed`` (handshake era).
RootsListChangedNotificationParams: TypeAlias = NotificationParams
