"""Where a ``Server`` is hosted: Streamable HTTP on our HTTP/1.1 server, or stdin/stdout.

``Server.run_http``, ``run_stdio`` and ``run`` are the front doors (their docstrings say what each
option does); the work is here, so that the facade stays a list of what a server can do.
The heavy imports (the HTTP server and app, the stdio transport) happen on first use.
"""

from __future__ import annotations

__all__ = ["freeze_startup", "http_base", "redis_problem", "serve_http", "serve_stdio"]

import gc
import logging
import socket
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..telemetry.activation import flush
from ..telemetry.conventions import NETWORK_TRANSPORT
from ..telemetry.metrics import session_closed, session_opened
from ..telemetry.spans import on_pipe

if TYPE_CHECKING:
    from ..http_host.h1.serving import HttpServer
    from .server import Server

logger = logging.getLogger("backchannel.http")
#: Exit status of a server that could not start (as ``http_host/h1/serving.py`` says it).
STARTUP_FAILURE = 3
_PIPE = {NETWORK_TRANSPORT: "pipe"}


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
    on_listening: Callable[[], object] | None = None,
    debug: bool = False,
    **options: Any,
) -> None:
    """Serve ``server.http_app(path)`` with our HTTP/1.1 server until it stops (``Server.run_http``
    documents the options); exit status 3 if it could not start (the app's startup failed, the
    port is taken, Redis is out of reach or redis-py missing, a worker failed to start twice in a
    row), the reason said in one line on stderr (a failed worker's whole output with ``debug``).
    ``on_listening()`` is called once the port accepts connections and the app (every worker's)
    has started: only then can "serving at URL" be said.

    ``legacy_sse`` also serves the deprecated HTTP+SSE transport of 2024-11-05 (``GET /sse``,
    ``POST /messages/``; ``http_host/legacy_sse.py``), for old clients; one process only.

    The cyclic collector is off until the server is built, and what exists then is frozen (as
    ``run`` does: ``freeze_startup``): its passes over what serving imports and builds were 4.5 ms
    of a cold start (``docs/performance.md``)."""
    if redis is not None:  # before anything is built or forked: one line, not a traceback per worker
        problem = redis_problem(redis)
        if problem is not None:
            print(f"backchannel: cannot use Redis at {_without_password(redis)}: {problem}", file=sys.stderr)
            sys.exit(STARTUP_FAILURE)
    collecting = gc.isenabled()
    gc.disable()
    try:
        limits: dict[str, Any] = {
            "header_timeout": header_timeout,
            "body_timeout": body_timeout,
            "max_connections": max_connections,
            "retry_after": retry_after,
        }
        app = _AppMaker(server, path, redis, legacy_sse, retry_after, options)
        single = _http_startup(app, host, port, workers, limits)
    finally:
        if collecting:
            gc.enable()
    from ..runtime import loops

    if single is not None:
        status = loops.run(single.serve(host, port, on_listening=on_listening))
        if status:
            sys.exit(status)
        return
    from ..http_host.h1.serving import HttpServer
    from ..http_host.h1.workers import run_workers

    def serve(sock: socket.socket, ready: Callable[[], None]) -> None:
        status = loops.run(HttpServer(app(), **limits).serve(sock=sock, on_listening=ready))
        if status:
            sys.exit(status)

    sock = _bind(host, port)
    status = run_workers(sock, workers, serve, on_listening=on_listening, debug=debug)
    if status:
        sys.exit(status)


def _bind(host: str, port: int) -> socket.socket:
    """The fleet's listening socket, bound once by the parent; exit status 3 if it cannot be."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family, backlog=2048)
    except OSError as exc:
        where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        print(f"backchannel: cannot listen on {where}: {exc.strerror or exc}", file=sys.stderr)
        sys.exit(STARTUP_FAILURE)


def redis_problem(url: str, timeout: float = 5.0) -> str | None:
    """None if redis-py is installed and the Redis at ``url`` answers PING within ``timeout``
    seconds (one try); else what is wrong, in a few words."""
    try:
        import redis
        import redis.exceptions
        from redis.backoff import NoBackoff
        from redis.retry import Retry
    except ImportError:
        return "redis-py is not installed: pip install 'backchannel[redis]'"
    try:
        client = redis.Redis.from_url(
            url, socket_connect_timeout=timeout, socket_timeout=timeout, retry=Retry(NoBackoff(), 0)
        )
    except (ValueError, redis.exceptions.RedisError) as exc:
        return f"not a Redis URL I can use ({exc})"
    try:
        client.ping()
    except (redis.exceptions.RedisError, OSError) as exc:
        return f"no answer to PING ({_one_line(exc)})"
    finally:
        client.close()
    return None


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text.rstrip(".")


def _without_password(url: str) -> str:
    """``url`` with the password of its user info hidden (it is said on stderr)."""
    scheme, sep, rest = url.partition("://")
    userinfo, at, place = rest.rpartition("@")
    if not sep or not at or ":" not in userinfo:
        return url
    return f"{scheme}://{userinfo.split(':', 1)[0]}:***@{place}"


def _http_startup(app: _AppMaker, host: str, port: int, workers: int, limits: dict[str, Any]) -> HttpServer | None:
    """Check the options, import what serving needs and, with one worker, build the app and
    the server for it (None with several: each worker builds its own); then ``freeze_startup``."""
    from ..http_host.h1.serving import HttpServer
    from ..http_host.limits import connection_cap
    from ..runtime.loops import loop_name
    from .url_elicitation import UrlElicitations

    server, options = app.server, app.options
    if workers < 1:
        raise ValueError(f"workers must be 1 or more, not {workers}")
    if workers > 1 and app.redis is None:
        raise ValueError("several workers share their sessions through Redis: give redis='redis://...' (--redis)")
    if app.legacy_sse and workers > 1:
        logger.warning("the HTTP+SSE transport (--legacy-sse) needs its stream and POSTs on one worker: use 1 worker")
    flows = UrlElicitations.of(server)
    if not flows.base_url and port:
        flows.base_url = http_base(host, port)
    options.setdefault("max_requests", None)
    # GET streams may hold three quarters of the connections at most: the rest stay for requests.
    cap = connection_cap(limits["max_connections"])
    options.setdefault("max_streams", None if cap is None else max(1, cap * 3 // 4))
    loop_name()  # (imports uvloop now, to be frozen with the rest)
    single = HttpServer(app(), **limits) if workers == 1 else None
    freeze_startup()
    return single


class _AppMaker:
    """``server.http_app`` with ``run_http``'s options: called in the process that serves (after
    the fork with several workers: a Redis connection made before it would not survive it)."""

    def __init__(
        self, server: Server, path: str, redis: str | None, legacy_sse: bool, retry_after: int, options: dict[str, Any]
    ) -> None:
        self.server, self.path, self.redis, self.legacy_sse = server, path, redis, legacy_sse
        self.retry_after, self.options = retry_after, options

    def __call__(self) -> Any:
        return self.server.http_app(
            self.path,
            redis=self.redis,
            body_timeout=None,  # the server's protocol times every body (http_host/h1/connection.py)
            retry_after=self.retry_after,
            legacy_sse=self.legacy_sse,
            **self.options,
        )


def freeze_startup() -> None:
    """Leave the objects that exist now out of the cyclic garbage collector's passes (``gc.freeze``).

    Called when a server that runs itself starts serving: what exists then (the imported modules,
    the registered tools, the user's globals) is meant to live as long as the process. Every full
    collection walked those objects (25,000 in a small server) again, and so did the interpreter's
    at exit: 20 of the 25 ms between stdin closing and the process exiting (``docs/performance.md``).
    An object among them is still freed when its last reference goes; only a reference cycle
    among them that later becomes garbage stays (``gc.unfreeze()`` puts them back).

    At exit (``atexit``) what is left is frozen too: the interpreter's last collections (four on
    Python 3.11) then walk none of what serving made either (uvloop's module, the forms loaded by
    a first ``elicit``, the closed loop and session): 15% of the instructions between stdin
    closing and the process exiting. A reference cycle that is garbage by then is left to the
    operating system, as one among the startup objects already was: its ``__del__`` does not run.
    Exit handlers registered before this one still run, after it; a program that goes on after
    serving is not affected until it exits.
    """
    import atexit

    gc.freeze()
    atexit.unregister(gc.freeze)  # once, however many times a process starts serving
    atexit.register(gc.freeze)


async def serve_stdio(server: Server, max_line_bytes: int | None) -> None:
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


def http_base(host: str, port: int) -> str:
    """The URL a local browser reaches ``run_http(host, port)`` by."""
    if host in ("", "0.0.0.0"):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}"
