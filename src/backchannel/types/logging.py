"""Logging: ``logging/setLevel`` (handshake era) and ``notifications/message``.

Deprecated in 2026-07-28, where the level rides in
``_meta["io.modelcontextprotocol/logLevel"]`` of each request.
"""

from __future__ import annotations

__all__ = [
    "LOGGING_LEVELS",
    "LOG_LEVEL_RANK",
    "LoggingLevel",
    "LoggingMessageNotificationParams",
    "SetLevelRequestParams",
]

from typing import Any, Literal, TypeAlias

from .base import NotificationParams, RequestParams

#: RFC 5424 severities.
LoggingLevel: TypeAlias = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]

#: The levels from least to most severe: the one list of them (server, client, core and terminal
#: all import it). Compare two levels with ``LOG_LEVEL_RANK``.
LOGGING_LEVELS: tuple[LoggingLevel, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)

#: Each level's place in ``LOGGING_LEVELS`` (0 = debug): ``LOG_LEVEL_RANK[a] >= LOG_LEVEL_RANK[b]``
#: means ``a`` is at least as severe as ``b``. Also the fastest membership test for a level.
LOG_LEVEL_RANK: dict[str, int] = {level: rank for rank, level in enumerate(LOGGING_LEVELS)}


class SetLevelRequestParams(RequestParams, kw_only=True):
    """``logging/setLevel``: send log messages at ``level`` and above."""

    level: LoggingLevel


class LoggingMessageNotificationParams(NotificationParams, kw_only=True):
    """``notifications/message``: one log message, its ``level``, ``logger`` and ``data``."""

    level: LoggingLevel
    logger: str | None = None
    #: Any JSON value (required; may be ``null``).
    data: Any
