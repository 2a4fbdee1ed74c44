"""OpenTelemetry log records for the messages a server logs (``ctx.log``, the stdlib bridge).

The server calls :func:`emit` with what it would send the client, already redacted, whether
or not the client asked for log messages: the operator's log is not the client's. The record
carries the current context, so inside a handler it names the trace and span of the request
being served. :func:`reaches_otel` tells the stdlib bridge when a record will reach
OpenTelemetry through OpenTelemetry's own ``LoggingHandler`` anyway, so that it is not
emitted twice.
"""

from __future__ import annotations

__all__ = ["LOGGER_NAME", "REQUEST_ID", "SEVERITY", "emit", "reaches_otel"]

import logging
import sys
import time
from typing import Any

from . import activation

#: The attribute naming the MCP message's ``logger`` (ours: the conventions name none).
LOGGER_NAME = "backchannel.log.logger"
#: The request the message was logged for (the conventions' key, as on spans).
REQUEST_ID = "jsonrpc.request.id"

#: RFC 5424 level -> OpenTelemetry severity number (the log data model's ranges: DEBUG 5-8,
#: INFO 9-12, WARN 13-16, ERROR 17-20, FATAL 21-24); the level's name is the severity text.
SEVERITY = {
    "debug": 5,
    "info": 9,
    "notice": 10,
    "warning": 13,
    "error": 17,
    "critical": 21,
    "alert": 22,
    "emergency": 23,
}


def emit(level: str, body: Any, logger: str | None = None, request_id: int | str | None = None) -> bool:
    """Emit one log record at RFC 5424 ``level`` in the current context; False when logs are off.

    ``body`` must already be what the client would be sent (redacted): this function sends it
    as it is, reduced to values a log record can hold."""
    otel = activation.otel_logger()
    if otel is None:
        return False
    # opentelemetry is imported by whoever configured the provider, so these cost nothing.
    from opentelemetry._logs import LogRecord, SeverityNumber
    from opentelemetry.trace import get_current_span

    attributes: dict[str, Any] = {}
    if logger is not None:
        attributes[LOGGER_NAME] = logger
    if request_id is not None:
        attributes[REQUEST_ID] = str(request_id)
    span = get_current_span().get_span_context()
    otel.emit(
        # trace_id/span_id rather than ``context=``, which opentelemetry-api < 1.35 lacks.
        LogRecord(
            timestamp=time.time_ns(),
            trace_id=span.trace_id,
            span_id=span.span_id,
            trace_flags=span.trace_flags,
            severity_text=level,
            severity_number=SeverityNumber(SEVERITY.get(level, 9)),
            body=_value(body, 0),
            attributes=attributes,
        )
    )
    return True


def reaches_otel(record: logging.LogRecord) -> bool:
    """Whether ``record`` is handled by an OpenTelemetry ``LoggingHandler`` on its way up
    the logger tree (from its logger, through the parents it propagates to), at its level."""
    if "opentelemetry" not in sys.modules:
        return False
    current: logging.Logger | None = logging.getLogger(record.name)
    while current is not None:
        for handler in current.handlers:
            if record.levelno >= handler.level and _is_otel_handler(handler):
                return True
        if not current.propagate:
            return False
        current = current.parent
    return False


def _is_otel_handler(handler: logging.Handler) -> bool:
    # The SDK's (opentelemetry.sdk._logs) and any successor's: recognised by name, so that
    # neither has to be imported to ask.
    return any(
        kind.__name__ == "LoggingHandler" and kind.__module__.startswith("opentelemetry")
        for kind in type(handler).__mro__
    )


_MAX_DEPTH = 32


def _value(value: Any, depth: int) -> Any:
    """``value`` as a log record's body can hold it: text, numbers, booleans, lists and maps
    with text keys; anything else as its text."""
    if value is None or isinstance(value, (str, bool, int, float, bytes)):
        return value
    if depth < _MAX_DEPTH:
        if isinstance(value, dict):
            return {str(key): _value(item, depth + 1) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return [_value(item, depth + 1) for item in value]
    return str(value)
