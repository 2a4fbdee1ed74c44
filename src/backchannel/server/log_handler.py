"""Forward Python's standard logging, from inside a running handler, to the client that asked.

    logging.getLogger("myserver").addHandler(ClientLogHandler())

A record logged while a request is being handled goes to that request's client
as ``notifications/message`` (subject to the client's level, redaction and the
rate limit); a record logged anywhere else is ignored by this handler.
"""

from __future__ import annotations

__all__ = ["ClientLogHandler", "mcp_level"]

import logging

from .context import Context


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
        if context is None:
            return
        try:
            context.log_nowait(mcp_level(record.levelno), {"message": self.format(record)}, record.name)
        except Exception:
            self.handleError(record)
