"""``RequestLog``: one log line per request, with what it was about, who asked, how it ended and how long it took."""

from __future__ import annotations

__all__ = ["RequestLog"]

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from ..composition.middleware import Call, CallNext
from ..types.errors import MCPError
from .calls import item_name, outcome_of


class RequestLog:
    """Middleware: a line on ``logger`` (default ``backchannel.requests``) at ``level`` for each
    request the server receives, once it is answered::

        tools/call ev_add era=stateless principal=- outcome=ok 1.3 ms

    ``outcome`` is ``ok``, ``tool_error``, ``input_required``, ``task`` (``outcome_of``),
    ``error <code>`` (the JSON-RPC error answered) or ``cancelled``; the time runs from the
    request entering this middleware to its answer leaving it. With ``sent=True`` the questions
    the server sends the client (handshake era: ``elicitation/create``...) get a line too, led by
    ``sent``. Each record carries the same facts as ``record.mcp`` (a dict) for a structured
    handler. Nothing is formatted when the logger would drop the line."""

    def __init__(
        self,
        logger: logging.Logger | None = None,
        *,
        level: int = logging.INFO,
        sent: bool = False,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.logger = logger if logger is not None else logging.getLogger("backchannel.requests")
        self.level = level
        self.sent = sent
        self.clock = clock

    async def __call__(self, call: Call, call_next: CallNext) -> Any:
        wanted = call.kind == "request" and (call.direction == "received" or self.sent)
        if not wanted or not self.logger.isEnabledFor(self.level):
            return await call_next(call)
        started = self.clock()
        outcome = "error -32603"
        try:
            result = await call_next(call)
            outcome = outcome_of(result)
            return result
        except asyncio.CancelledError:
            outcome = "cancelled"
            raise
        except MCPError as failure:
            outcome = f"error {failure.code}"
            raise
        finally:
            self._line(call, outcome, (self.clock() - started) * 1000)

    def _line(self, call: Call, outcome: str, ms: float) -> None:
        name = item_name(call.params)
        facts = {
            "method": call.method,
            "name": name,
            "direction": call.direction,
            "era": call.era,
            "principal": call.principal,
            "session": call.session,
            "outcome": outcome,
            "ms": round(ms, 3),
        }
        self.logger.log(
            self.level,
            "%s%s%s era=%s principal=%s outcome=%s %.1f ms",
            "sent " if call.direction == "sent" else "",
            call.method,
            f" {name}" if name is not None else "",
            call.era or "-",
            call.principal or "-",
            outcome,
            ms,
            extra={"mcp": facts},
        )
