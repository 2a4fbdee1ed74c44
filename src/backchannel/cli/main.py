"""The ``backchannel`` command."""

from __future__ import annotations

__all__ = ["main"]

import argparse
import logging
import sys
from collections.abc import Sequence

from .. import __version__


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="backchannel", description="An MCP runtime: serve and connect.")
    parser.add_argument("--version", action="version", version=f"backchannel {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="serve a Server defined in a Python file or module, on stdio")
    run.add_argument("target", help="path/to/server.py or package.module, optionally with :NAME")
    run.add_argument("--log-level", default="WARNING", help="Python logging level for the server's stderr")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "run":
        logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr)
        from .loader import load_server

        load_server(args.target).run()
        return 0
    return 2  # pragma: no cover - argparse rejects unknown commands first


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
