"""The server's log messages on their way to ``on_log``: checked, rate-limited, counted when dropped."""

from __future__ import annotations

__all__ = ["LogCallback", "LogDelivery"]

import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from ..runtime.ratelimit import TokenBucket
from ..types.logging import LOGGING_LEVELS

LogCallback = Callable[[dict[str, Any]], Awaitable[None] | None]
logger = logging.getLogger("backchannel.client")


class LogDelivery:
    """Hand each ``notifications/message`` to a callback, at most ``rate`` a second (``burst`` at once).

    A flooding server costs a counter, never memory: the excess is dropped and counted in ``dropped``.
    """

    def __init__(self, rate: float, burst: int) -> None:
        self._bucket = TokenBucket(rate, burst)
        #: Log messages dropped because the server sent more than ``rate`` a second.
        self.dropped = 0

    def deliver(self, on_log: LogCallback, params: dict[str, Any]) -> Awaitable[None] | None:
        """Call ``on_log(params)``; what it returns when that is awaitable (the caller awaits it)."""
        if not _well_formed(params):
            logger.debug("ignored a malformed notifications/message: %.200r", params)
            return None
        if not self._bucket.allow():
            self.dropped += 1
            return None
        try:
            outcome = on_log(params)
        except Exception:
            logger.exception("the on_log callback failed; the connection goes on")
            return None
        return outcome if inspect.isawaitable(outcome) else None


def _well_formed(params: dict[str, Any]) -> bool:
    """A ``notifications/message`` the ``on_log`` callback can rely on: a known level, the data,
    and a logger name that is a string when present."""
    level, name = params.get("level"), params.get("logger")
    return (
        isinstance(level, str)
        and level in LOGGING_LEVELS
        and "data" in params
        and (name is None or isinstance(name, str))
    )
