"""The ``backchannel`` command: what each subcommand does once its line is parsed (``arguments.py``)."""

from __future__ import annotations

__all__ = ["main", "run_options_problem", "serve"]

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..ui.sampling_models import SamplingModel
    from .serving import run_options_problem, serve


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
    if args.command == "proxy":
        from .proxy import run_proxy

        return run_proxy(args)
    if args.command == "gateway":
        from .gateway import run_gateway

        return run_gateway(args)
    if args.command == "check":
        from .report_card import run_check

        return run_check(args)
    if args.command == "logout":
        return _logout(args.url)
    if args.command == "install":
        from .install import install

        return install(args)
    return 2  # pragma: no cover - argparse rejects unknown commands first


def _run(args: argparse.Namespace) -> int:
    """``backchannel run``: 0 once served, 2 for a target or options that cannot be served, 3 for
    a server that could not start, 130 after Ctrl-C; each said in one line (the traceback too
    with ``--debug``)."""
    from .serving import run_options_problem, stdin_is_a_terminal

    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr)
    problem = run_options_problem(args)
    if problem is not None:
        print(f"backchannel run: {problem}", file=sys.stderr)
        return 2
    try:
        return _serve(args)
    except KeyboardInterrupt:
        if args.debug:
            import traceback

            traceback.print_exc()
        elif stdin_is_a_terminal():  # else the client that spawned us says it (call: "interrupted")
            print("backchannel run: stopped (Ctrl-C)", file=sys.stderr)
        return 130


def _serve(args: argparse.Namespace) -> int:
    from .loader import TargetError, load_server
    from .serving import serve

    try:
        server = load_server(args.target)
    except TargetError as exc:  # one line: a traceback into the loader would not help
        failure = exc.__cause__  # the user's own code failed to import: its traceback, on demand
        if args.debug and failure is not None:
            import traceback

            traceback.print_exception(failure)
        hint = " (--debug shows the traceback)" if failure is not None and not args.debug else ""
        print(f"backchannel run: {exc}{hint}", file=sys.stderr)
        return 2
    return serve(server, args, "backchannel run")


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
        problem = _not_a_command(target)
        if problem is not None:
            print(f"backchannel connect: {problem}", file=sys.stderr)
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
        headers=getattr(args, "header", None),  # (demo has no --header: its server is a command)
    )


def _not_a_command(target: list[str]) -> str | None:
    """Why ``target`` cannot be spawned: a file to serve (``connect server.py``), or no command at all."""
    import re
    import shlex
    import shutil
    from pathlib import Path

    if (len(target) == 1 and re.match(r"https?://", target[0], re.IGNORECASE)) or shutil.which(target[0]):
        return None
    if target[0].endswith(".py") or Path(target[0]).is_file():
        serve = f"backchannel connect -- backchannel run {shlex.quote(target[0])}"
        return f"{target[0]} is a file, not a command; to serve a file: {serve}"
    return f"no such command: {target[0]} (give a server command and its arguments, or an http(s):// URL)"


def _logout(url: str) -> int:
    import asyncio

    from ..ui.login import forget

    print(f"backchannel logout: {asyncio.run(forget(url))}")
    return 0


def _call(args: argparse.Namespace, server_words: list[str] | None, parser: argparse.ArgumentParser) -> int:
    import os

    from ..ui.batch import run_call, split_target

    _arguments_and_positionals(args, parser)
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
        headers=args.header,
    )


def _arguments_and_positionals(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """``--args`` takes every word after it (``--args a=2 b=40``): the words at its end that are
    not arguments were positionals (``call --args a=2 TOOL -- ...``), given back; then the
    arguments are checked for form (``tool_arguments``: one line, status 2)."""
    from .arguments import is_argument_word, tool_arguments

    words = list(args.args or [])
    taken: list[str] = []
    while len(words) > 1 and not is_argument_word(words[-1]):
        taken.insert(0, words.pop())
    positionals = [word for word in (args.target, args.tool) if word is not None] + taken
    if len(positionals) > 2:
        parser.error(f"unrecognized arguments: {' '.join(positionals[2:])}")
    if not positionals:
        parser.error("the following arguments are required: TOOL")
    args.target, args.tool = (*positionals, None)[:2]
    if words:
        try:
            args.args = tool_arguments(words)
        except argparse.ArgumentTypeError as exc:
            parser.error(f"argument --args: {exc}")


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


def __getattr__(name: str) -> Any:
    """``run_options_problem`` and ``serve``, which ``serving.py`` holds, under their old home's
    name; imported on first use, so that a command that only parses its line does not load them."""
    if name in ("run_options_problem", "serve"):
        from . import serving

        return getattr(serving, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
