"""Paginated lists (``tools/list``, ``prompts/list``...): every page, followed by its cursor."""

from __future__ import annotations

__all__ = ["cursor_params", "every_page"]

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Protocol, TypeVar

from ..types.errors import RemoteProtocolError


class _Page(Protocol):
    @property
    def next_cursor(self) -> str | None: ...


P = TypeVar("P", bound=_Page)


def cursor_params(cursor: str | None) -> dict[str, Any] | None:
    """The params of a list request for the page at ``cursor`` (None: the first page)."""
    return {"cursor": cursor} if cursor is not None else None


async def every_page(fetch: Callable[[str | None], Awaitable[P]]) -> AsyncIterator[P]:
    """Each page ``fetch(cursor)`` returns, the first with no cursor, until one has none.

    Raises ``RemoteProtocolError`` when the server sends a cursor it sent before (a loop).
    """
    cursor: str | None = None
    seen: set[str] = set()
    while True:
        page = await fetch(cursor)
        yield page
        cursor = page.next_cursor
        if cursor is None:
            return
        if cursor in seen:
            raise RemoteProtocolError(f"the server repeated the cursor {cursor!r}; stopping")
        seen.add(cursor)
