"""``backchannel gateway FILE``: one endpoint in front of the MCP servers a TOML file lists.

The file (``gateway_config.py`` reads it; ``docs/gateway.md`` is its reference) becomes a
``Server`` with each upstream mounted under its name (``Server.mount``: a command or a URL, served
by the bridge), its tools reshaped and switched off as the file says (``Server.transform_tool``,
``Server.disable``), and the middleware it asks for (``backchannel.middleware``); the server is
then served as ``backchannel run`` serves one: on stdio, or with ``--http`` (``--redis``,
``--workers``). Nothing is started before the whole file has been read.

Exit status: 0 once served (stdin closed, or the HTTP server stopped), 2 for a file or options
that cannot be served (one line per problem, naming the file and the key), 130 after Ctrl-C.
"""

from __future__ import annotations

__all__ = ["build_gateway", "run_gateway"]

import argparse
import logging
import sys
from typing import TYPE_CHECKING, Any

from .gateway_config import (
    BearerToken,
    ClientCredentialsLogin,
    ConfigProblems,
    GatewayConfig,
    KeptLogin,
    MiddlewareConfig,
    UpstreamConfig,
    read_config,
)

if TYPE_CHECKING:
    from ..server.server import Server

_PROG = "backchannel gateway"


def run_gateway(args: argparse.Namespace) -> int:
    """Read ``args.config``, then serve it as ``args`` say (or, with ``--check``, only say whether it can be)."""
    from .serving import run_options_problem, serve, stdin_is_a_terminal

    handler = logging.StreamHandler(sys.stderr)  # one line per event, named as the gateway
    handler.setFormatter(logging.Formatter(f"{_PROG}: %(message)s"))
    logging.basicConfig(level=args.log_level.upper(), handlers=[handler])
    problem = run_options_problem(args)
    if problem is not None:
        print(f"{_PROG}: {problem}", file=sys.stderr)
        return 2
    try:
        config = read_config(args.config)
        server = build_gateway(config)
    except ConfigProblems as problems:
        for line in problems.lines:
            print(f"{_PROG}: {line}", file=sys.stderr)
        return 2
    if args.check:
        mounted = ", ".join(_described(upstream) for upstream in config.upstreams)
        print(f"{_PROG}: {config.file} can be served: {mounted}", file=sys.stderr)
        return 0
    try:
        return serve(server, args, _PROG)
    except KeyboardInterrupt:
        if args.debug:
            import traceback

            traceback.print_exc()
        elif args.http or stdin_is_a_terminal():
            print(f"{_PROG}: stopped (Ctrl-C)", file=sys.stderr)
        return 130


def build_gateway(config: GatewayConfig) -> Server:
    """The server ``config`` describes, its upstreams mounted (none started yet: a mount connects
    when the first client arrives); ``ConfigProblems`` for what only building finds out."""
    from ..server.server import Server

    server = Server(config.name, config.version, instructions=config.instructions)
    problems: list[str] = []
    for upstream in config.upstreams:
        try:
            _mount(server, upstream)
        except ValueError as exc:  # a rename that collides, a transform the server refuses
            problems.append(f"{config.file}: {upstream.key}: {exc}")
    if problems:
        raise ConfigProblems(problems)
    _add_middleware(server, config)
    return server


def _mount(server: Server, upstream: UpstreamConfig) -> None:
    headers = dict(upstream.headers)
    auth = None
    if isinstance(upstream.auth, BearerToken):
        headers["Authorization"] = f"Bearer {upstream.auth.token}"
    elif upstream.auth is not None:
        auth = _login(upstream.auth)
    where: dict[str, Any] = {"command": upstream.command} if upstream.command is not None else {"url": upstream.url}
    if upstream.url is not None:
        where.update(headers=headers, auth=auth)
    server.mount(upstream.prefix, era=upstream.era, scopes=upstream.scopes, **where)
    renamed = {change.tool: change.name for change in upstream.tools if change.name}
    plain, seen = _seen_name(upstream.prefix, {}), _seen_name(upstream.prefix, renamed)
    for change in upstream.tools:
        server.transform_tool(
            plain(change.tool),
            name=change.name,
            title=change.title,
            description=change.description,
            hide=change.hide,
            fix=change.fix,
        )
    for kind, names in upstream.enabled.items():  # only these: all of the mount's off, then these on
        off = [plain("*", kind), *(renamed.values() if kind == "tool" else ())]  # (a new name has no prefix)
        server.disable(kind, *off)  # type: ignore[arg-type]
        server.enable(kind, *(seen(name, kind) for name in names))  # type: ignore[arg-type]
    for kind, names in upstream.disabled.items():
        server.disable(kind, *(seen(name, kind) for name in names))  # type: ignore[arg-type]


def _seen_name(prefix: str, renamed: dict[str, str]) -> Any:
    """How a client sees an upstream's item ``name``: a tool renamed in the file by its new name,
    a tool or prompt as ``prefix_name``, a resource as ``prefix+uri`` (unchanged under ``""``)."""

    def seen(name: str, kind: str = "tool") -> str:
        if kind == "tool" and name in renamed:
            return renamed[name]
        if not prefix:
            return name
        return f"{prefix}+{name}" if kind == "resource" else f"{prefix}_{name}"

    return seen


def _login(auth: KeptLogin | ClientCredentialsLogin) -> Any:
    """The upstream's ``OAuth``: the login ``backchannel connect`` keeps (as ``backchannel call``
    uses it: refreshed, never a new one), or the client credentials grant."""
    from ..client.oauth import ClientCredentials, FileTokenStore, OAuth

    if isinstance(auth, ClientCredentialsLogin):
        return OAuth(grant=ClientCredentials(auth.client_id, auth.secret), store=FileTokenStore())
    from ..ui.login import kept_login

    oauth, _grant = kept_login()
    return oauth


def _add_middleware(server: Server, config: GatewayConfig) -> None:
    """The ``[middleware]`` switches, outermost first: the request log (so it logs what the others
    refuse), the rate limit, the tool filter, the list cache (so it keeps what the others let by)."""
    wanted = config.middleware
    if wanted == MiddlewareConfig():
        return
    from ..middleware import ListCache, RateLimit, RequestLog, ToolFilter

    if wanted.log_requests:
        logging.getLogger("backchannel.requests").setLevel(logging.INFO)  # on stderr whatever --log-level
        server.add_middleware(RequestLog(sent=True))
    if wanted.rate is not None:
        server.add_middleware(RateLimit(wanted.rate, wanted.burst))
    if wanted.allow_tools is not None or wanted.deny_tools:
        server.add_middleware(ToolFilter(allow=wanted.allow_tools, deny=wanted.deny_tools))
    if wanted.cache_lists is not None:
        server.add_middleware(ListCache(max_age=wanted.cache_lists))


def _described(upstream: UpstreamConfig) -> str:
    where = " ".join(upstream.command) if upstream.command is not None else upstream.url
    return f"{upstream.prefix or '(no prefix)'} = {where}"
