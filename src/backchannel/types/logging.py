"""Logging: ``logging/setLevel`` (handshake era) and ``notifications/message``.

Deprecated in 2026-07-28, where the level rides in
``_meta["io.modelcontextprotocol/logLevel"]`` of each request.
"""

from __future__ import annotations

__all__ = [
    "LOGGING_LEVELS",
    "LoggingLevel",
    "LoggingMessageNotificationParams",
    "SetLevelRequestParams",
]

from typing import Any, Literal, TypeAlias

from .base import NotificationParams, RequestParams

#: RFC 5424 severities.
LoggingLevel: TypeAlias = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]

#: The levels from least to most severe; compare by index.
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


class SetLevelRequestParams(RequestParams, kw_only=True):
    level: LoggingLevel


class LoggingMessageNotificationParams(NotificationParams, kw_only=True):
    level: LoggingLevel
    logger: str | None = None
    #: Any JSON value (required; may be ``null``).
    data: Any
