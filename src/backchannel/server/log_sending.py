"""One log message for a request: rate limited per connection, redacted, then sent; and the
operator's copy of it, an OpenTelemetry log record (when a logger provider is configured)."""

from __future__ import annotations

__all__ = ["BRIDGING", "operator_log", "redacted_log", "send_log"]

from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from ..protocol.events import RequestReceived
from ..runtime.connection import Connection
from ..telemetry import activation, logs, metrics
from .connection_state import ConnectionState
from .request_roots import hidden_log, text_hider

if TYPE_CHECKING:
    from ..redaction.redaction import Redactor
    from .context import Context

#: True while the stdlib bridge (``ClientLogHandler``) forwards a record: the bridge emits that
#: record's OpenTelemetry copy itself (or leaves it to OpenTelemetry's own handler), so
#: ``ctx.log`` must not emit a second one.
BRIDGING: ContextVar[bool] = ContextVar("backchannel_log_forwarding", default=False)


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
            metrics.log_dropped("rate_limit")
            return False
        dropped = state.bucket.take_dropped()
        if dropped:
            note = {"message": f"{dropped} log messages were dropped by the rate limit", "dropped": dropped}
            _emit(connection, request, "warning", note, "backchannel")
    data, logger = _redacted(redactor, data, logger)
    _emit(connection, request, level, data, logger)
    return True


def operator_log(ctx: Context, level: str, data: Any, logger: Any) -> None:
    """``ctx.log``'s message as an OpenTelemetry log record too, whatever the client asked
    for, redacted as the client would get it; nothing (one check) when logs are off."""
    if activation.otel_logger() is None or BRIDGING.get():
        return
    data, logger = redacted_log(ctx, data, logger)
    logs.emit(level, data, logger, ctx.request.id)


def redacted_log(ctx: Context, data: Any, logger: Any) -> tuple[Any, str | None]:
    """``data`` and ``logger`` as the client would be sent them: sensitive roots hidden, then
    the server's redaction."""
    hide = text_hider(ctx)
    if hide is not None:
        data, logger = hidden_log(ctx.server.log_redactor, hide, data, logger)
    return _redacted(ctx.server.log_redactor, data, logger)


def _redacted(redactor: Redactor | None, data: Any, logger: Any) -> tuple[Any, str | None]:
    if logger is not None and not isinstance(logger, str):
        logger = str(logger)
    if redactor is not None:
        data = redactor.redact(data)
        if logger is not None:  # a logger's name can carry a secret too ("client.alice@example.com")
            logger = redactor.text(logger)
    return data, logger


def _emit(connection: Connection, request: RequestReceived, level: str, data: Any, logger: str | None) -> None:
    params: dict[str, Any] = {"level": level, "data": data}
    if logger is not None:
        params["logger"] = logger
    connection.notify("notifications/message", params, related=request.id)
