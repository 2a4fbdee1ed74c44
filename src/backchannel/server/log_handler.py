"""Forward Python's standard logging, from inside a running handler, to the client that asked.

    logging.getLogger("myserver").addHandler(ClientLogHandler())

A record logged while a request is being handled goes to that request's client
as ``notifications/message`` (subject to the client's level, redaction and the
rate limit); a record logged anywhere else is ignored by this handler.

Redaction is the server's ``log_redactor``, as for ``ctx.log``: the formatted
text (a traceback too) and the logger's name pass it. Values given by name
(``log.info("%(user)s signed in with %(password)s", values)``) are replaced
before formatting when their name is a sensitive key, since the text alone no
longer says what they were.

When an OpenTelemetry logger provider is configured, the record also becomes an
OpenTelemetry log record (redacted the same way, correlated with the request's
span), whatever level the client asked for; unless OpenTelemetry's own
``LoggingHandler`` sits on the record's way up the logger tree, which emits it
already (unredacted: that handler is the operator's choice).
"""

from __future__ import annotations

__all__ = ["ClientLogHandler", "mcp_level"]

import copy
import logging
from collections.abc import Mapping

from ..redaction.redaction import REDACTED
from ..telemetry import activation, logs
from .context import Context
from .log_sending import BRIDGING, redacted_log


def mcp_level(levelno: int) -> str:
    """The RFC 5424 level for a Python logging level."""
    if levelno >= logging.CRITICAL:
        return "critical"
    if levelno >= logging.ERROR:
        return "error"
    if levelno >= logging.WARNING:
        return "warning"
    if levelno >= logging.INFO:
        return "info"
    return "debug"


class ClientLogHandler(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        context = Context.current()
        # Set while a record is being forwarded: a record logged by the forwarding itself (the
        # runtime or a transport logging through a handler attached to the root logger) is not
        # forwarded again.
        if context is None or BRIDGING.get():
            return
        token = BRIDGING.set(True)
        try:
            text = self._format(record, context)
            level = mcp_level(record.levelno)
            context.log_nowait(level, {"message": text}, record.name)
            if activation.otel_logger() is not None and not logs.reaches_otel(record):
                body, name = redacted_log(context, text, record.name)
                logs.emit(level, body, name, context.request_id)
        except Exception:
            self.handleError(record)
        finally:
            BRIDGING.reset(token)

    def _format(self, record: logging.LogRecord, context: Context) -> str:
        redactor = context.server.log_redactor
        args = record.args
        if redactor is None or not isinstance(args, Mapping):
            return self.format(record)
        hidden = {
            name: REDACTED if _secret(name, value) and redactor.sensitive_key(name) else value
            for name, value in args.items()
        }
        if hidden == dict(args):
            return self.format(record)
        # A copy: other handlers of the same record still see what was logged.
        redacted = copy.copy(record)
        redacted.args = hidden
        try:
            return self.format(redacted)
        except (TypeError, ValueError):  # "%(pin)d" given "[REDACTED]": show the template's text instead
            redacted.args = None
            redacted.msg = f"{record.msg} [arguments redacted]"
            return self.format(redacted)


def _secret(name: object, value: object) -> bool:
    """Whether ``value`` could be a secret, if ``name`` is a sensitive key (None and booleans tell nothing)."""
    return isinstance(name, str) and value is not None and not isinstance(value, bool)
