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
"""

from __future__ import annotations

__all__ = ["ClientLogHandler", "mcp_level"]

import contextvars
import copy
import logging
from collections.abc import Mapping

from .context import Context
from .redaction import REDACTED

# Set while a record is being forwarded: a record logged by the forwarding itself (the runtime
# or a transport logging through a handler attached to the root logger) is not forwarded again.
_FORWARDING: contextvars.ContextVar[bool] = contextvars.ContextVar("backchannel_log_forwarding", default=False)


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
        if context is None or _FORWARDING.get():
            return
        token = _FORWARDING.set(True)
        try:
            text = self._format(record, context)
            context.log_nowait(mcp_level(record.levelno), {"message": text}, record.name)
        except Exception:
            self.handleError(record)
        finally:
            _FORWARDING.reset(token)

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
