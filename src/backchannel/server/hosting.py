"""Where a ``Server`` is hosted on stdin/stdout (``Server.run_stdio`` and ``run``).

The front doors are ``Server``'s methods (their docstrings say what each option does); the work
is here, so that the facade stays a list of what a server can do. Streamable HTTP is
``http_host/run_http.py`` (``Server.run_http``). The stdio transport is imported on first use.
"""

from __future__ import annotations

__all__ = ["serve_stdio"]

from typing import TYPE_CHECKING, Protocol

from ..telemetry.activation import flush
from ..telemetry.conventions import NETWORK_TRANSPORT
from ..telemetry.metrics import session_closed, session_opened
from ..telemetry.spans import on_pipe

if TYPE_CHECKING:
    from ..transports.base import Transport

_PIPE = {NETWORK_TRANSPORT: "pipe"}


class Serves(Protocol):
    """A server as ``serve_stdio`` sees it (``Server`` meets it)."""

    async def serve(self, transport: Transport) -> None: ...

    async def aclose(self) -> None: ...


async def serve_stdio(server: Serves, max_line_bytes: int | None) -> None:
    """Serve ``server`` on stdin/stdout until stdin closes; the transport is closed after."""
    from ..framing.ndjson import DEFAULT_MAX_LINE_BYTES
    from ..transports.stdio import StdioServerTransport

    transport = on_pipe(StdioServerTransport(max_line_bytes=max_line_bytes or DEFAULT_MAX_LINE_BYTES))
    await transport.start()
    timed = session_opened("server", _PIPE)  # None unless metrics are on: the one session of this process
    failure: str | None = None
    try:
        await server.serve(transport)
    except Exception as exc:
        failure = type(exc).__qualname__
        raise
    finally:
        await transport.close()
        await server.aclose()  # a mount's or a proxy's upstream process goes with us
        session_closed(timed, error_type=failure)
        flush()  # spans a batch processor holds: a client may kill us once stdin is closed, before atexit
