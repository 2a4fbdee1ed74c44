"""``backchannel proxy``: one upstream server served to hosts of either era (``backchannel.bridge``).

What the command adds to ``Proxy``: the upstream read from the line (a command after ``--``, or
a URL with its ``--header`` pairs and its login), the proxy's own log on stderr (``--log-level``,
one line per event, each starting ``backchannel proxy:``), and where it serves (stdio, or
``--serve http``). The bridge is imported only here, once the line is read.

Exit status: 0 once the host went away (stdin closed) or the HTTP server stopped, 2 for a line
that cannot be served (said in one line), 130 after Ctrl-C. An upstream that cannot be started or
reached does not stop the proxy: it is named on stderr and each request is answered -32603.
"""

from __future__ import annotations

__all__ = ["run_proxy"]

import argparse
import logging
import os
import sys
from typing import Any

from .options import Refused, header_map, server_named, terminal_login

_PREFIX = "backchannel proxy"


def run_proxy(args: argparse.Namespace) -> int:
    """Serve the upstream that ``args`` names until the host goes away (stdio) or Ctrl-C (HTTP)."""
    try:
        spec = _upstream(args)
    except Refused as exc:
        print(f"{_PREFIX}: {exc}", file=sys.stderr)
        return 2
    _operator_log(args.log_level)
    from ..bridge import Proxy
    from .serving import stdin_is_a_terminal

    proxy = Proxy(spec)
    try:
        if args.serve == "http":
            _serve_http(proxy, args, spec.name)
        else:
            proxy.run()
    except KeyboardInterrupt:
        if stdin_is_a_terminal() or args.serve == "http":
            print(f"{_PREFIX}: stopped (Ctrl-C)", file=sys.stderr)
        return 130
    return 0


def _upstream(args: argparse.Namespace) -> Any:
    """The ``UpstreamSpec`` the line names; ``Refused`` saying why there is none."""
    from ..bridge import UpstreamSpec

    url, command = server_named(args.target, "upstream")
    if args.client_secret_env is not None and args.client_id is None:
        raise Refused("--client-secret-env names the secret of --client-id: give --client-id too")
    if url is None:
        if args.header:
            raise Refused("--header is for an http(s):// upstream; this one is a command, spoken to over stdio")
        if args.client_id is not None:
            raise Refused("--client-id logs in to an http(s):// upstream; this one is a command")
        return UpstreamSpec(command=command, era=args.upstream_era, connect_timeout=args.upstream_timeout or None)
    headers = header_map(args.header or ())
    return UpstreamSpec(
        url=url,
        headers=headers,
        auth=_login(args, headers),
        era=args.upstream_era,
        connect_timeout=args.upstream_timeout or None,
    )


def _login(args: argparse.Namespace, headers: dict[str, str]) -> Any:
    """The upstream's ``OAuth``, as ``backchannel connect`` logs in (its kept tokens, its browser
    login, the link printed with ``--no-browser``), or the client credentials grant; None with an
    ``Authorization`` header, which is then the credential."""
    if args.client_id is None:
        return terminal_login(headers, browser=args.browser)
    if any(name.lower() == "authorization" for name in headers):
        raise Refused("--client-id and an Authorization header are two credentials: give one")
    from ..client.oauth import ClientCredentials, FileTokenStore, OAuth

    secret = None
    if args.client_secret_env is not None:
        secret = os.environ.get(args.client_secret_env)
        if not secret:
            raise Refused(f"--client-secret-env: the environment variable {args.client_secret_env} is not set")
    return OAuth(grant=ClientCredentials(args.client_id, secret), store=FileTokenStore())


class _Unrepeated(logging.Filter):
    """Lets a line through unless it is the one said last: each request to an upstream that is
    down fails alike, and one line says it."""

    def __init__(self) -> None:
        super().__init__()
        self.last: str | None = None

    def filter(self, record: logging.LogRecord) -> bool:
        line = record.getMessage()
        if line == self.last:
            return False
        self.last = line
        return True


def _operator_log(level: str) -> None:
    """The proxy's own log on stderr at ``level``: one line per event, named as the proxy."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(f"{_PREFIX}: %(message)s"))
    handler.addFilter(_Unrepeated())
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(level.upper())


def _serve_http(proxy: Any, args: argparse.Namespace, upstream: str) -> None:
    from ..http_host.run_http import http_base

    url = http_base(args.host, args.port) + args.path
    wide = f"; it listens on every interface ({args.host})" if args.host in ("0.0.0.0", "::") else ""
    line = f"{_PREFIX}: serving {upstream} over Streamable HTTP at {url} (Ctrl-C stops it{wide})"
    proxy.run_http(args.host, args.port, args.path, on_listening=lambda: print(line, file=sys.stderr, flush=True))
