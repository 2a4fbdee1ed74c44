"""``Server.run_http``'s work: a server's ASGI app served on our HTTP/1.1 server, by one process
or by a fleet of workers on one port.

``serve_http`` checks the options (and that Redis answers, before anything is forked), builds the
app and the server with the cyclic collector paused, and serves until stopped: in this process
(``h1/serving.py``) or in N forked workers (``h1/workers.py``). A start that fails is one line on
stderr and exit status 3. It needs two things of the server it runs: ``http_app`` and where it
keeps its URL-elicitation pages (``RunnableServer``); it imports nothing of ``server/``. The heavy
imports (the HTTP server, the app, the pages) happen in ``serve_http``, while the collector is off.
"""

from __future__ import annotations

__all__ = ["STARTUP_FAILURE", "http_base", "redis_problem", "serve_http"]

import gc
import logging
import socket
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ..runtime.loops import freeze_startup

if TYPE_CHECKING:
    from .h1.serving import HttpServer
    from .url_flows.pages import PagesOwner

    # Declared for the type checker only: its base, the pages' module, loads when ``serve_http``
    # runs (with the collector paused), not when this module is imported (``cli`` names
    # ``http_base`` before it serves).
    class RunnableServer(PagesOwner, Protocol):
        """What ``serve_http`` needs of a server: its ASGI app, and where its URL flows' pages
        are kept (``PagesOwner``: ``base_url`` defaults to where this serves). ``Server`` meets it."""

        def http_app(self, path: str = ..., *, redis: str | None = None, **options: Any) -> Any: ...


logger = logging.getLogger("backchannel.http")
#: Exit status of a server that could not start (as ``h1/serving.py`` says it).
STARTUP_FAILURE = 3


def serve_http(
    server: RunnableServer,
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
    ``POST /messages/``; ``legacy_sse.py``), for old clients; one process only.

    The cyclic collector is off until the server is built, and what exists then is frozen (as
    ``Server.run`` does: ``runtime.loops.freeze_startup``): its passes over what serving imports
    and builds were 4.5 ms of a cold start (``docs/performance.md``)."""
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
    from .h1.serving import HttpServer
    from .h1.workers import run_workers

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
    from ..runtime.loops import loop_name
    from .h1.serving import HttpServer
    from .limits import connection_cap
    from .url_flows.pages import UrlElicitations

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
        self,
        server: RunnableServer,
        path: str,
        redis: str | None,
        legacy_sse: bool,
        retry_after: int,
        options: dict[str, Any],
    ) -> None:
        self.server, self.path, self.redis, self.legacy_sse = server, path, redis, legacy_sse
        self.retry_after, self.options = retry_after, options

    def __call__(self) -> Any:
        return self.server.http_app(
            self.path,
            redis=self.redis,
            body_timeout=None,  # the server's protocol times every body (h1/connection.py)
            retry_after=self.retry_after,
            legacy_sse=self.legacy_sse,
            **self.options,
        )


def http_base(host: str, port: int) -> str:
    """The URL a local browser reaches ``run_http(host, port)`` by."""
    if host in ("", "0.0.0.0"):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}"
