"""``ListCache``: list results kept per caller, until a list changes."""

from __future__ import annotations

__all__ = ["ListCache"]

import time
from collections import OrderedDict
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from ..composition.middleware import Call, CallNext
from .calls import protocol_version

LISTS = frozenset(("tools/list", "prompts/list", "resources/list", "resources/templates/list"))


@dataclass(slots=True)
class _Entry:
    result: dict[str, Any]
    generation: int
    stamp: float
    max_age: float | None


class ListCache:
    """Middleware: the answers to ``tools/list``, ``prompts/list``, ``resources/list`` and
    ``resources/templates/list`` kept and given again without asking the server (and its mounts).

    An answer is kept per page (``cursor``), protocol revision (so per era: a stateless-era page
    carries ``ttlMs`` and ``cacheScope``, a handshake-era one does not), principal (a token's
    scopes change what it sees) and per-session visibility rules (``ctx.disable``). It is given
    until any list of the server changes (whatever makes it send ``notifications/*/list_changed``:
    a tool added, a mount's upstream changed, a visibility rule; in a fleet, on any worker), for
    at most ``max_age`` seconds (None: no limit) and never longer than the page's own ``ttlMs``
    (0: not kept); a page given again has its ``ttlMs`` lowered by its age. What is not a page
    (an error, an ``input_required`` result) is never kept, nor is the answer to a retry that
    carries the client's answers (``inputResponses``): that answer is that exchange's own. At most
    ``max_entries`` pages are kept, the least recently given dropped first. ``hits`` and ``misses``
    count answers."""

    def __init__(
        self,
        *,
        max_age: float | None = 30.0,
        max_entries: int = 1024,
        methods: Collection[str] = LISTS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.max_age = max_age
        self.max_entries = max_entries
        self.methods = frozenset(methods)
        self.clock = clock
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[tuple[Any, ...], _Entry] = OrderedDict()

    def clear(self) -> None:
        """Forget every page kept."""
        self._entries.clear()

    async def __call__(self, call: Call, call_next: CallNext) -> Any:
        if call.kind != "request" or call.direction != "received" or call.method not in self.methods:
            return await call_next(call)
        if "inputResponses" in call.params or "requestState" in call.params:
            return await call_next(call)  # a retry with the client's answers: its own, never kept
        server = call.connection.handler
        generation = getattr(server, "list_generation", 0)
        transforms = getattr(server, "transforms", None)
        rules = transforms.session_rules(call.connection) if transforms is not None else ()
        key = (call.method, call.params.get("cursor"), protocol_version(call), call.principal, rules)
        now = self.clock()
        entry = self._entries.get(key)
        if entry is not None and entry.generation == generation:
            age = now - entry.stamp
            if entry.max_age is None or age < entry.max_age:
                self._entries.move_to_end(key)
                self.hits += 1
                return _aged(entry.result, age)
        self.misses += 1
        result = await call_next(call)  # (a change while it runs leaves it kept under the older generation: stale)
        max_age = self._max_age(result)
        if max_age is None or max_age > 0:
            self._entries[key] = _Entry(result, generation, now, max_age)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        elif entry is not None:
            del self._entries[key]
        return result

    def _max_age(self, result: Any) -> float | None:
        """How long ``result`` may be kept, in seconds (0: not at all)."""
        if not isinstance(result, dict) or result.get("resultType", "complete") != "complete":
            return 0.0
        ttl = result.get("ttlMs")
        if isinstance(ttl, int | float) and not isinstance(ttl, bool):
            seconds = max(0.0, ttl / 1000)
            return seconds if self.max_age is None else min(seconds, self.max_age)
        return self.max_age


def _aged(result: dict[str, Any], age: float) -> dict[str, Any]:
    """A copy of ``result`` to give again, its ``ttlMs`` lowered by ``age`` seconds."""
    given = dict(result)
    ttl = given.get("ttlMs")
    if isinstance(ttl, int) and not isinstance(ttl, bool):
        given["ttlMs"] = max(0, ttl - int(age * 1000))
    return given
