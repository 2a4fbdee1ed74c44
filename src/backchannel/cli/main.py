"""The ``backchannel`` command."""

from __future__ import annotations

__all__ = ["main"]

import argparse
import logging
import sys
from collections.abc import Sequence

from .. import __version__

# "legacy" and "modern" are the old spellings of "handshake" and "stateless"; Client normalises them.
_ERA_SPELLINGS = ("auto", "handshake", "stateless", "legacy", "modern")
_ERA_HELP = "protocol era: auto (probe), handshake (initialize) or stateless (legacy/modern: old spellings)"


def _parser(call_help: bool = False) -> argparse.ArgumentParser:
    """The argument parser; ``call_help`` adds the long help of ``call`` (it imports the terminal client)."""
    parser = argparse.ArgumentParser(prog="backchannel", description="An MCP runtime: serve and connect.")
    parser.add_argument("--version", action="version", version=f"backchannel {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="serve a Server defined in a Python file or module, on stdio")
    run.add_argument("target", help="path/to/server.py or package.module, optionally with :NAME")
    run.add_argument("--log-level", default="WARNING", help="Python logging level for the server's stderr")
    run.add_argument("--http", action="store_true", help="serve Streamable HTTP instead of stdio")
    run.add_argument("--host", default="127.0.0.1", help="HTTP: the address to bind (default: loopback only)")
    run.add_argument("--port", type=int, default=8000, help="HTTP: the port (default 8000)")
    run.add_argument("--path", default="/mcp", help="HTTP: the endpoint path (default /mcp)")
    connect = commands.add_parser(
        "connect", help="an interactive session with a server: a command to spawn (stdio) or an http(s):// URL"
    )
    demo = commands.add_parser("demo", help="an interactive session with the bundled example server")
    for sub in (connect, demo):
        sub.add_argument(
            "--root",
            action="append",
            default=None,
            metavar="PATH",
            help="a directory offered to the server as a root (repeatable; default: the current directory)",
        )
        sub.add_argument("--era", choices=_ERA_SPELLINGS, default="auto", help=_ERA_HELP)
        sub.add_argument("--save-dir", default=None, help="where images and binary content are saved")
        sub.add_argument(
            "--server-log-level",
            default="info",
            choices=("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"),
            help="the server log messages to show at first (default info; the log command changes it)",
        )
        sub.add_argument(
            "--no-browser",
            dest="browser",
            action="store_false",
            help="print the links of URL requests (after you agree) instead of opening a browser",
        )
    connect.add_argument(
        "target", nargs=argparse.REMAINDER, help="the server: COMMAND [ARGS...] (spawned, stdio) or an http(s):// URL"
    )
    description = None
    if call_help:
        from ..ui import batch

        description = batch.__doc__
    call = commands.add_parser(
        "call",
        help="call one tool with no person at the keyboard: questions answered from a file, the result as JSON",
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    call.add_argument("target", help="the server: a command line in one argument ('python server.py') or a URL")
    call.add_argument("tool", help="the tool to call")
    call.add_argument("--args", default=None, help="the arguments: a JSON object, or key=value words")
    call.add_argument("--answers", default=None, metavar="FILE", help="answers to the server's questions (JSON)")
    call.add_argument("--json", action="store_true", help="print the result (or the error) as JSON")
    call.add_argument("--root", action="append", default=None, metavar="PATH", help="a root (default: the cwd)")
    call.add_argument("--era", choices=_ERA_SPELLINGS, default="auto", help=_ERA_HELP)
    call.add_argument("--timeout", type=float, default=300.0, help="seconds for the whole call (0: no limit)")
    call.add_argument(
        "--log-level",
        default=None,
        choices=("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"),
        help="print the server's log messages at this level and above on stderr",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser(call_help=argv[:1] == ["call"]).parse_args(argv)
    if args.command == "run":
        logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr)
        from .loader import load_server

        server = load_server(args.target)
        if args.http:
            server.run_http(args.host, args.port, args.path)
        else:
            server.run()
        return 0
    if args.command in ("connect", "demo"):
        return _connect(args)
    if args.command == "call":
        return _call(args)
    return 2  # pragma: no cover - argparse rejects unknown commands first


def _connect(args: argparse.Namespace) -> int:
    import os

    from ..ui.terminal import demo_command, run_connect

    label = None
    if args.command == "demo":
        label = "the bundled demo server (examples/demo_server.py)"
        try:
            target = demo_command()
        except FileNotFoundError as exc:
            print(f"backchannel demo: {exc}", file=sys.stderr)
            return 2
    else:
        target = list(args.target)
        if target and target[0] == "--":
            target = target[1:]
        if not target:
            print("backchannel connect: give a server command (with its arguments) or a URL", file=sys.stderr)
            return 2
    roots = args.root if args.root is not None else [os.getcwd()]
    return run_connect(
        target,
        roots=roots,
        era=args.era,
        save_dir=args.save_dir,
        log_level=args.server_log_level,
        browser=args.browser,
        label=label,
    )


def _call(args: argparse.Namespace) -> int:
    import os

    from ..ui.batch import run_call, split_target

    try:
        target = split_target(args.target)
    except ValueError as exc:
        print(f"backchannel call: cannot read the server command: {exc}", file=sys.stderr)
        return 2
    return run_call(
        target,
        args.tool,
        arguments=args.args,
        answers=args.answers,
        as_json=args.json,
        era=args.era,
        roots=args.root if args.root is not None else [os.getcwd()],
        timeout=args.timeout or None,
        log_level=args.log_level,
    )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
