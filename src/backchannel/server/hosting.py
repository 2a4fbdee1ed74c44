"""Where a ``Server`` is hosted: Streamable HTTP under uvicorn, or stdin/stdout.

``Server.run_http``, ``run_stdio`` and ``run`` are the front doors (their docstrings say what each
option does); the work is here, so that the facade stays a list of what a server can do.
The heavy imports (uvicorn, the HTTP app, the stdio transport) happen on first use.
"""

from __future__ import annotations

__all__ = ["http_base", "serve_http", "serve_stdio"]

import logging
import socket
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .server import Server

logger = logging.getLogger("backchannel.http")


def serve_http(
    server: Server,
    host: str,
    port: int,
    path: str,
    *,
    header_timeout: float | None,
    body_timeout: float | None,
    max_connections: int | None,
    retry_after: int,
    redis: str | None = None,
    workers: int = 1,
    legacy_sse: bool = False,
    **options: Any,
) -> None:
    """Run ``server.http_app(path)`` under uvicorn until it stops (``Server.run_http`` documents the options).

    ``legacy_sse`` also serves the deprecated HTTP+SSE transport of 2024-11-05 (``GET /sse``,
    ``POST /messages/``; ``http_host/legacy_sse.py``), for old clients; one process only."""
    import uvicorn

    from ..runtime.loops import loop_name
    from ..transports.http.serving import uvicorn_options
    from .url_elicitation import UrlElicitations

    if workers < 1:
        raise ValueError(f"workers must be 1 or more, not {workers}")
    if workers > 1 and redis is None:
        raise ValueError("several workers share their sessions through Redis: give redis='redis://...' (--redis)")
    if legacy_sse and workers > 1:
        logger.warning("the HTTP+SSE transport (--legacy-sse) needs its stream and POSTs on one worker: use 1 worker")
    flows = UrlElicitations.of(server)
    if not flows.base_url and port:
        flows.base_url = http_base(host, port)
    options.setdefault("max_requests", None)
    guard = uvicorn_options(
        header_timeout=header_timeout,
        body_timeout=body_timeout,
        max_connections=max_connections,
        retry_after=retry_after,
    )

    def app() -> Any:
        # Called in the worker: a Redis connection made before the fork would not survive it.
        return server.http_app(
            path, redis=redis, body_timeout=None, retry_after=retry_after, legacy_sse=legacy_sse, **options
        )

    if workers == 1:
        uvicorn.run(app(), host=host, port=port, loop=loop_name(), **guard)
        return
    from .workers import run_workers

    def serve(sock: socket.socket) -> None:
        uvicorn.Server(uvicorn.Config(app(), loop=loop_name(), **guard)).run(sockets=[sock])

    run_workers(host, port, workers, serve)


async def serve_stdio(server: Server, max_line_bytes: int | None) -> None:
    """Serve ``server`` on stdin/stdout until stdin closes; the transport is closed after."""
    from ..framing.ndjson import DEFAULT_MAX_LINE_BYTES
    from ..transports.stdio import StdioServerTransport

    transport = StdioServerTransport(max_line_bytes=max_line_bytes or DEFAULT_MAX_LINE_BYTES)
    await transport.start()
    try:
        await server.serve(transport)
    finally:
        await transport.close()


def http_base(host: str, port: int) -> str:
    """The URL a local browser reaches ``run_http(host, port)`` by."""
    if host in ("", "0.0.0.0"):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}"
