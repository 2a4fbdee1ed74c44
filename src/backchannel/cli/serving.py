"""Serving a ``Server`` as ``backchannel run`` and ``backchannel gateway`` do (``arguments._serving_options``).

``run_options_problem`` says, in one line, what in the serving options does not fit together,
before anything starts; ``serve`` then serves on stdio, or over Streamable HTTP, saying on stderr
where it listens once it does.
"""

from __future__ import annotations

__all__ = ["run_options_problem", "serve", "stdin_is_a_terminal"]

import argparse
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..server.server import Server


def run_options_problem(args: argparse.Namespace) -> str | None:
    """What in ``args``' serving options does not fit together, in one line (None: nothing)."""
    if args.workers > 1 and args.redis is None:
        return "--workers needs --redis: the workers share their sessions through it"
    if (args.redis is not None or args.workers > 1) and not args.http:
        return "--redis and --workers serve HTTP: add --http"
    if args.legacy_sse and (not args.http or args.workers > 1):
        return "--legacy-sse serves HTTP from one process: add --http, leave out --workers"
    if (args.allow_host or args.allow_origin) and not args.http:
        return "--allow-host and --allow-origin are checks of HTTP requests: add --http"
    return None


def serve(server: Server, args: argparse.Namespace, prog: str) -> int:
    """Serve ``server`` as ``args`` say (``arguments._serving_options``): on stdio, or over HTTP,
    saying on stderr, as ``prog``, where it listens once it does; 0 once it stopped."""
    if not args.http:
        server.run()
        return 0
    from ..framing.http import LOCALHOST_HOSTS, LOCALHOST_ORIGINS
    from ..http_host.run_http import http_base

    url = http_base(args.host, args.port) + args.path
    wide = f"; it listens on every interface ({args.host})" if args.host in ("0.0.0.0", "::") else ""
    fleet = f" with {args.workers} workers" if args.workers > 1 else ""
    fleet += f", sharing state through {args.redis}" if args.redis else ""
    legacy = f", and the deprecated HTTP+SSE transport at {http_base(args.host, args.port)}/sse"
    fleet += legacy if args.legacy_sse else ""
    line = (
        f"{prog}: serving {server.name} over Streamable HTTP at {url}{fleet} (Ctrl-C stops it{wide}); "
        f"connect with: backchannel connect {url}"
    )
    options: dict[str, Any] = {}
    if args.allow_host:  # loopback names stay allowed: a health check on the machine itself
        options["allowed_hosts"] = (*LOCALHOST_HOSTS, *args.allow_host)
    if args.allow_origin:
        options["allowed_origins"] = (*LOCALHOST_ORIGINS, *args.allow_origin)
    server.run_http(
        args.host,
        args.port,
        args.path,
        redis=args.redis,
        workers=args.workers,
        legacy_sse=args.legacy_sse,
        # said once the port listens and the app has started: never of a server that then fails
        on_listening=lambda: print(line, file=sys.stderr, flush=True),
        debug=args.debug,
        **options,
    )
    return 0


def stdin_is_a_terminal() -> bool:
    """Whether a person typed Ctrl-C (and is told the server stopped), not a client that spawned us."""
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, OSError):  # closed
        return False
