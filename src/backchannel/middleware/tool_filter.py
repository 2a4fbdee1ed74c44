"""``ToolFilter``: tools allowed or denied by name, hidden from the lists and refused as unknown."""

from __future__ import annotations

__all__ = ["ToolFilter"]

from collections.abc import Iterable
from fnmatch import fnmatchcase
from typing import Any

from ..composition.middleware import Call, CallNext
from ..types.errors import InvalidParams


class ToolFilter:
    """Middleware: only the tools whose names match a pattern of ``allow`` (``fnmatch``; None: every
    tool) and none of ``deny``. Others are left out of every ``tools/list`` page, and a call of one
    is answered as a call of a tool that does not exist (-32602 ``Unknown tool: <name>``), so a
    client learns nothing of them. Names are those clients see (a mount's with its prefix, after
    a transform). Override ``permits`` to decide per caller (``call.principal``)."""

    def __init__(self, *, allow: Iterable[str] | None = None, deny: Iterable[str] = ()) -> None:
        self.allow = None if allow is None else tuple(allow)
        self.deny = tuple(deny)
        for patterns in (self.allow or (), self.deny):
            if isinstance(patterns, str):
                raise TypeError("allow and deny are lists of patterns, not one string")

    def permits(self, name: str, call: Call) -> bool:
        """Whether tool ``name`` is shown to and callable by the caller of ``call``."""
        if self.allow is not None and not any(fnmatchcase(name, pattern) for pattern in self.allow):
            return False
        return not any(fnmatchcase(name, pattern) for pattern in self.deny)

    async def __call__(self, call: Call, call_next: CallNext) -> Any:
        if call.kind != "request" or call.direction != "received":
            return await call_next(call)
        if call.method == "tools/call":
            name = call.params.get("name")
            if isinstance(name, str) and not self.permits(name, call):
                raise InvalidParams(f"Unknown tool: {name}", data={"name": name})  # as an unknown tool is refused
            return await call_next(call)
        if call.method != "tools/list":
            return await call_next(call)
        result = await call_next(call)
        tools = result.get("tools") if isinstance(result, dict) else None
        if not isinstance(tools, list):
            return result
        shown = [tool for tool in tools if isinstance(tool, dict) and self._shown(tool.get("name"), call)]
        return {**result, "tools": shown}

    def _shown(self, name: Any, call: Call) -> bool:
        return isinstance(name, str) and self.permits(name, call)
