"""The ``backchannel`` command: what each subcommand does once its line is parsed (``arguments.py``)."""

from __future__ import annotations

__all__ = ["main"]

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..ui.sampling_models import SamplingModel


def main(argv: Sequence[str] | None = None) -> int:
    from .arguments import build_parser

    argv = list(sys.argv[1:] if argv is None else argv)
    server_words: list[str] | None = None
    if argv[:1] == ["call"] and "--" in argv:
        # ``call TOOL [options] -- COMMAND ARGS...``: the server's words are its own, never ours.
        cut = argv.index("--")
        argv, server_words = argv[:cut], argv[cut + 1 :]
    asks_help = bool({"-h", "--help"} & set(argv))
    parser, commands = build_parser(call_help=argv[:1] == ["call"] and asks_help)
    args = parser.parse_args(argv)
    if args.command == "run":
        return _run(args)
    if args.command in ("connect", "demo"):
        return _connect(args)
    if args.command == "call":
        return _call(args, server_words, commands["call"])
    if args.command == "logout":
        return _logout(args.url)
    return 2  # pragma: no cover - argparse rejects unknown commands first


def _run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr)
    from .loader import TargetError, load_server

    try:
        server = load_server(args.target)
    except TargetError as exc:  # one line: a traceback into the loader would not help
        print(f"backchannel run: {exc}", file=sys.stderr)
        return 2
    if args.workers > 1 and args.redis is None:
        print("backchannel run: --workers needs --redis: the workers share their sessions through it", file=sys.stderr)
        return 2
    if (args.redis is not None or args.workers > 1) and not args.http:
        print("backchannel run: --redis and --workers serve HTTP: add --http", file=sys.stderr)
        return 2
    if args.legacy_sse and (not args.http or args.workers > 1):
        print(
            "backchannel run: --legacy-sse serves HTTP from one process: add --http, leave out --workers",
            file=sys.stderr,
        )
        return 2
    if args.http:
        from ..server.hosting import http_base

        url = http_base(args.host, args.port) + args.path
        wide = f"; it listens on every interface ({args.host})" if args.host in ("0.0.0.0", "::") else ""
        fleet = f" with {args.workers} workers" if args.workers > 1 else ""
        fleet += f", sharing state through {args.redis}" if args.redis else ""
        legacy = f", and the deprecated HTTP+SSE transport at {http_base(args.host, args.port)}/sse"
        fleet += legacy if args.legacy_sse else ""
        print(
            f"backchannel run: serving {server.name} over Streamable HTTP at {url}{fleet} (Ctrl-C stops it{wide}); "
            f"connect with: backchannel connect {url}",
            file=sys.stderr,
            flush=True,
        )
        server.run_http(
            args.host, args.port, args.path, redis=args.redis, workers=args.workers, legacy_sse=args.legacy_sse
        )
    else:
        server.run()
    return 0


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
    sampling = _sampling(args)
    if isinstance(sampling, str):
        return 2
    return run_connect(
        target,
        roots=roots,
        era=args.era,
        save_dir=args.save_dir,
        log_level=args.server_log_level,
        browser=args.browser,
        label=label,
        sampling=sampling,
    )


def _logout(url: str) -> int:
    import asyncio

    from ..ui.login import forget

    print(f"backchannel logout: {asyncio.run(forget(url))}")
    return 0


def _call(args: argparse.Namespace, server_words: list[str] | None, parser: argparse.ArgumentParser) -> int:
    import os

    from ..ui.batch import run_call, split_target

    if server_words is not None:
        if args.tool is not None:
            parser.error("give the tool before -- and the server after it: call TOOL -- COMMAND [ARGS ...]")
        if not server_words:
            parser.error("give the server after --: a command and its arguments, or a URL")
        tool, target = args.target, server_words
    else:
        if args.tool is None:
            parser.error("which server? call TOOL -- COMMAND [ARGS ...] (or: call 'COMMAND LINE' TOOL)")
        tool = args.tool
        try:
            target = split_target(args.target)
        except ValueError as exc:
            parser.error(f"cannot read the server command {args.target!r}: {exc}")
    sampling = _sampling(args)
    if isinstance(sampling, str):
        return 2
    return run_call(
        target,
        tool,
        arguments=args.args,
        answers=args.answers,
        as_json=args.json,
        era=args.era,
        roots=args.root if args.root is not None else [os.getcwd()],
        timeout=args.timeout or None,
        log_level=args.log_level,
        sampling=sampling,
    )


def _sampling(args: argparse.Namespace) -> SamplingModel | str | None:
    """The model the ``--sampling-*`` options name (None: the person, or ``call``'s answers file);
    a string when they do not fit together, once said on stderr."""
    from ..ui.sampling_models import sampling_model

    try:
        return sampling_model(
            endpoint=args.sampling_endpoint,
            model=args.sampling_model,
            key_env=args.sampling_key_env,
            command=args.sampling_command,
        )
    except ValueError as exc:
        print(f"backchannel {args.command}: {exc}", file=sys.stderr)
        return str(exc)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
