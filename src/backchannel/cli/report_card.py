"""``backchannel check``: the report card of any MCP server (``backchannel.check``).

What the command adds to ``run_checks``: the target read from the line (a command after
``--``, or a URL with its ``--header`` pairs and the login ``connect`` keeps), the plan from
``--config`` and ``--tool``/``--exclude``, and where the card goes: a table on stdout (each
verdict also said on stderr as it comes, unless ``--quiet``), ``--json`` on stdout, ``--html
FILE``. The check package is imported only here, once the line is read.

Exit status: 0 when no check failed, 1 when one did, 2 for a line that cannot be run (said
in one line), 130 after Ctrl-C.
"""

from __future__ import annotations

__all__ = ["run_check"]

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from .options import Refused, header_map, header_option, seconds, server_named, terminal_login, whole_number

_PREFIX = "backchannel check"


def run_check(args: argparse.Namespace) -> int:
    from ..check import CheckOptions, run_checks
    from ..check.plan import ConfigError, PlanConfig, read_config, tool_use
    from ..check.report import as_html, as_json, print_table

    try:
        target = _target(args)
        config = read_config(args.config) if args.config else PlanConfig()
        named = PlanConfig(
            tools={role: tool_use(role, name, f"--tool {role}") for role, name in args.tool or ()},
            exclude=frozenset(args.exclude or ()),
            budget=args.budget,
        )
        config = config.merged(named)
    except (Refused, ConfigError, ValueError) as exc:
        print(f"{_PREFIX}: {exc}", file=sys.stderr)
        return 2
    if args.group and "fleet" in args.group and not args.fleet:
        print(f"{_PREFIX}: --group fleet needs --fleet N (how many sessions at once)", file=sys.stderr)
        return 2
    tokens: dict[str, str | None] = {}
    for option, name in (("--foreign-token-env", args.foreign_token_env), ("--weak-token-env", args.weak_token_env)):
        tokens[option] = os.environ.get(name) if name else None
        if name and not tokens[option]:
            print(f"{_PREFIX}: {option}: the environment variable {name} is not set", file=sys.stderr)
            return 2
    eras = ("handshake", "stateless") if args.era == "auto" else (args.era,)
    options = CheckOptions(
        budget=config.budget if config.budget is not None else 300,
        timeout=args.timeout,
        eras=eras,  # type: ignore[arg-type]
        groups=tuple(args.group) if args.group else CheckOptions().groups,
        config=config,
        load=True if args.load else None,
        sessions=args.sessions,
        fleet=args.fleet or 0,
        foreign_token=tokens["--foreign-token-env"],
        weak_token=tokens["--weak-token-env"],
        seed=args.seed,
        with_conformance=args.with_conformance or bool(args.conformance_scenario),
        conformance_scenarios=tuple(args.conformance_scenario or ()),
        say=None if args.quiet else (lambda line: print(f"{_PREFIX}: {line}", file=sys.stderr, flush=True)),
    )
    if options.with_conformance:
        from ..check.conformance import install_hint, locate

        if target.url is None:
            print(f"{_PREFIX}: --with-conformance: the harness needs an HTTP URL; not run over stdio", file=sys.stderr)
        elif locate() is None:
            print(f"{_PREFIX}: {install_hint()}", file=sys.stderr)
    import asyncio

    try:
        report = asyncio.run(run_checks(target, options))
    except KeyboardInterrupt:
        print(f"{_PREFIX}: interrupted", file=sys.stderr)
        return 130
    if args.html:
        Path(args.html).write_text(as_html(report), encoding="utf-8")
        if not args.quiet:
            print(f"{_PREFIX}: the report card is in {args.html}", file=sys.stderr)
    if args.json:
        print(as_json(report))
    else:
        print_table(report, sys.stdout)
    return 1 if report.failed else 0


def _target(args: argparse.Namespace) -> Any:
    from ..check import Target

    url, command = server_named(args.target, "server")
    if url is not None:
        headers = header_map(args.header or ())
        auth = terminal_login(headers, browser=args.browser)
        return Target(url=url, headers=headers, auth=auth, show_stderr=args.show_stderr)
    if args.header:
        raise Refused("--header is for an http(s):// server; this one is a command, spoken to over stdio")
    import shutil

    if shutil.which(command[0]) is None:
        raise Refused(f"no such command: {command[0]} (give a server command and its arguments, or an http(s):// URL)")
    return Target(command=tuple(command), show_stderr=args.show_stderr)


_CHECK = """A report card for any MCP server, in any language: which eras and revisions it speaks;
how it asks (forms, URLs, roots, sampling), completes, reports progress, takes a cancellation
and logs, on the tools it offers; how it stands malformed, oversized and fuzzed input; and over
HTTP, its Origin and Host checks, unknown sessions, slow bodies and many sessions, and with
--fleet N whether it needs sticky sessions; a protected server's challenge, metadata and token
checks. Each check
names the line of the specification it tests (docs/check.md lists them); a failure shows what
was sent and what came back.

  backchannel check -- node server.js
  backchannel check --html card.html http://127.0.0.1:8000/mcp
  backchannel check --json --exclude get-env -- npx @modelcontextprotocol/server-everything

The tools a check calls are found by name and description, or named: --tool ROLE=NAME or the
[tools] table of --config FILE (roles: elicits, elicits_url, roots, samples, progress, slow,
logs). --exclude NAME keeps a tool from ever being called. Loads (slow bodies, many sessions)
go only to a server on this machine unless --load. Exit status 1 when a check fails."""


def add_check_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    check = commands.add_parser(
        "check",
        help="check any MCP server (a command to spawn, or an http(s):// URL) and print its report card",
        description=_CHECK,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="%(prog)s [options] -- COMMAND [ARGS ...]\n       %(prog)s [options] URL",
    )
    check.add_argument("--json", action="store_true", help="print the report card as JSON (for CI) instead of a table")
    check.add_argument("--html", default=None, metavar="FILE", help="also write the report card as a web page")
    check.add_argument("--config", default=None, metavar="FILE", help="a TOML file: [tools] per role, exclude, safe")
    check.add_argument(
        "--tool",
        action="append",
        default=None,
        type=_role_and_tool,
        metavar="ROLE=NAME",
        help="the tool a role's checks call (repeatable): elicits, elicits_url, roots, samples, progress, slow, logs",
    )
    check.add_argument(
        "--exclude", action="append", default=None, metavar="NAME", help="a tool never to call (repeatable)"
    )
    check.add_argument(
        "--budget",
        type=lambda text: whole_number(text, 0, 1_000_000, "a number of frames"),
        default=None,
        metavar="N",
        help="fuzzed frames to send (default 300; 0: no fuzzing)",
    )
    check.add_argument(
        "--timeout",
        type=seconds,
        default=10.0,
        metavar="SECONDS",
        help="how long any one answer may take (default 10)",
    )
    check.add_argument(
        "--era",
        choices=("auto", "handshake", "stateless"),
        default="auto",
        help="check only this era (default: every era the server speaks)",
    )
    check.add_argument(
        "--group",
        action="append",
        default=None,
        choices=("eras", "second-layer", "robustness", "fleet", "auth", "conformance"),
        help="run only this group of checks (repeatable)",
    )
    check.add_argument(
        "--load",
        action="store_true",
        help="run the load checks (slow bodies, many sessions) on a server that is not on this machine too",
    )
    check.add_argument(
        "--sessions",
        type=lambda text: whole_number(text, 1, 10_000, "a number of sessions"),
        default=64,
        metavar="N",
        help="HTTP: sessions the session check opens (default 64)",
    )
    check.add_argument(
        "--fleet",
        type=lambda text: whole_number(text, 1, 1000, "a number of sessions"),
        default=None,
        metavar="N",
        help="HTTP: the fleet checks with N sessions at once, every request on its own connection: "
        "does the server need sticky sessions?",
    )
    check.add_argument(
        "--foreign-token-env",
        default=None,
        metavar="NAME",
        help="HTTP, auth: the environment variable holding a token the server's authorization server issued "
        "for another resource (it must get 401)",
    )
    check.add_argument(
        "--weak-token-env",
        default=None,
        metavar="NAME",
        help="HTTP, auth: the environment variable holding a token for this server without the scopes it needs "
        "(it must get 403 insufficient_scope)",
    )
    check.add_argument(
        "--with-conformance",
        action="store_true",
        help="also run the official conformance harness's server scenarios (HTTP; Node >= 22 and the pinned harness)",
    )
    check.add_argument(
        "--conformance-scenario",
        action="append",
        metavar="NAME",
        help="with --with-conformance: only this harness scenario (repeatable)",
    )
    check.add_argument("--seed", type=int, default=20260728, help="the fuzzer's seed (the same seed, the same frames)")
    check.add_argument("--quiet", action="store_true", help="say nothing on stderr while checking")
    check.add_argument("--show-stderr", action="store_true", help="show a spawned server's stderr (default: kept)")
    check.add_argument(
        "--no-browser",
        dest="browser",
        action="store_false",
        help="print the link of a login on stderr instead of opening a browser",
    )
    header_option(check)
    check.add_argument(
        "target",
        nargs=argparse.REMAINDER,
        metavar="SERVER",
        help="the server: -- COMMAND [ARGS...] (spawned, stdio) or an http(s):// URL",
    )


def _role_and_tool(text: str) -> tuple[str, str]:
    from ..check.plan import ROLES

    role, sep, name = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"{text!r} is not ROLE=NAME (like slow=long-running-op)")
    if role not in ROLES:
        raise argparse.ArgumentTypeError(f"{role!r} is no role; the roles: {', '.join(ROLES)}")
    return role, name
