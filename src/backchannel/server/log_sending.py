"""One log message for a request: rate limited per connection, redacted, then sent."""

from __future__ import annotations

__all__ = ["send_log"]

from typing import TYPE_CHECKING, Any

from ..protocol.events import RequestReceived
from ..runtime.connection import Connection
from .connection_state import ConnectionState

if TYPE_CHECKING:
    from .redaction import Redactor


def send_log(
    redactor: Redactor | None,
    state: ConnectionState | None,
    connection: Connection,
    request: RequestReceived,
    level: str,
    data: Any,
    logger: str | None,
) -> bool:
    """Send one log message for ``request``; False when the connection's rate limit dropped it
    (the next one that passes says how many were dropped)."""
    if state is not None:
        if not state.bucket.allow():
            return False
        dropped = state.bucket.take_dropped()
        if dropped:
            note = {"message": f"{dropped} log messages were dropped by the rate limit", "dropped": dropped}
            _emit(connection, request, "warning", note, "backchannel")
    if logger is not None and not isinstance(logger, str):
        logger = str(logger)
    if redactor is not None:
        data = redactor.redact(data)
        if logger is not None:  # a logger's name can carry a secret too ("client.alice@example.com")
            logger = redactor.text(logger)
    _emit(connection, request, level, data, logger)
    return True


def _emit(connection: Connection, request: RequestReceived, level: str, data: Any, logger: str | None) -> None:
    params: dict[str, Any] = {"level": level, "data": data}
    if logger is not None:
        params["logger"] = logger
    connection.notify("notifications/message", params, related=request.id)
