"""Roots: ``roots/list`` (a server request in the handshake era, an MRTR input request
in 2026-07-28, deprecated there).

A backchannel client may mark a root read-only or sensitive in its ``_meta``, under
``ROOT_MARKS_KEY`` (a backchannel convention, ``docs/protocol-conventions.md``); ``Root.marked``
writes the marks and ``root_marks`` reads them. Other servers ignore the key, as
``_meta`` allows.
"""

from __future__ import annotations

__all__ = [
    "ROOT_MARKS_KEY",
    "ListRootsRequestParams",
    "ListRootsResult",
    "Root",
    "RootMarks",
    "RootsListChangedNotificationParams",
    "root_marks",
]

from typing import Any, NamedTuple, TypeAlias

import msgspec

from .base import Model, NotificationParams, RequestParams, Result

#: The ``_meta`` key of a root's marks: ``{"readOnly": true, "sensitive": true}``. Reverse
#: DNS of a name of ours whose second label is not ``modelcontextprotocol`` or ``mcp``, so
#: the prefix is not reserved (2025-11-25 ``basic/index.mdx``, ``_meta`` key names).
ROOT_MARKS_KEY = "dev.backchannel/root"


class RootMarks(NamedTuple):
    """What a client said of a root: ``read_only`` (the server should not write under it)
    and ``sensitive`` (its path is not to be echoed into logs or progress messages)."""

    read_only: bool = False
    sensitive: bool = False


class Root(Model, kw_only=True):
    """A folder or file the client lets the server work in: a ``file://`` URI, a name, and its marks."""

    #: A ``file://`` URI.
    uri: str
    name: str | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")

    @classmethod
    def marked(
        cls,
        uri: str,
        name: str | None = None,
        *,
        read_only: bool = False,
        sensitive: bool = False,
        meta: dict[str, Any] | None = None,
    ) -> Root:
        """A root with its marks in ``_meta`` (other ``meta`` keys kept), for ``Client(roots=[...])``:
        ``Root.marked("~/notes", read_only=True, sensitive=True)``. The client normalises ``uri``
        (a path or a ``file://`` URI) before the server sees it. No mark set, no key written."""
        meta = dict(meta or {})
        marks = {"readOnly": True} if read_only else {}
        if sensitive:
            marks["sensitive"] = True
        if marks:
            meta[ROOT_MARKS_KEY] = marks
        else:
            meta.pop(ROOT_MARKS_KEY, None)
        return cls(uri=uri, name=name, meta=meta or None)

    @property
    def marks(self) -> RootMarks:
        """What the client said of this root in its ``_meta``, read on the safe side (``root_marks``)."""
        return root_marks(self.meta)

    @property
    def read_only(self) -> bool:
        """Whether the client asked that nothing be written under this root."""
        return root_marks(self.meta).read_only

    @property
    def sensitive(self) -> bool:
        """Whether this root's path is to be kept out of logs and progress messages."""
        return root_marks(self.meta).sensitive


def root_marks(meta: Any) -> RootMarks:
    """The marks in a root's ``_meta`` (``ROOT_MARKS_KEY``), read on the safe side: a flag is
    set unless it is absent, ``false`` or ``null``, and a marker that is not an object (nor
    ``false``/``null``) sets both. A client's typo then costs a write or a log line, not a leak."""
    if not isinstance(meta, dict):
        return RootMarks()
    marker = meta.get(ROOT_MARKS_KEY)
    if marker is None or marker is False:
        return RootMarks()
    if not isinstance(marker, dict):
        return RootMarks(read_only=True, sensitive=True)
    return RootMarks(read_only=_set(marker.get("readOnly")), sensitive=_set(marker.get("sensitive")))


def _set(flag: Any) -> bool:
    return flag is not None and flag is not False


ListRootsRequestParams: TypeAlias = RequestParams


class ListRootsResult(Result, kw_only=True):
    """In 2026-07-28 an MRTR input response (no ``_meta``/``resultType``)."""

    roots: list[Root]


#: ``notifications/roots/list_changed`` (handshake era).
RootsListChangedNotificationParams: TypeAlias = NotificationParams
