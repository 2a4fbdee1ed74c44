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
    run.add_argument("--http", action="store_true", help="serve Streamable HTTP instead of stdio")
    run.add_argument("--host", default="127.0.0.1", help="HTTP: the address to bind (default: loopback only)")
    run.add_argument("--port", type=int, default=8000, help="HTTP: the port (default 8000)")
    run.add_argument("--path", default="/mcp", help="HTTP: the endpoint path (default /mcp)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "run":
        logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr)
        from .loader import load_server

        server = load_server(args.target)
        if args.http:
            server.run_http(args.host, args.port, args.path)
        else:
            server.run()
        return 0
    return 2  # pragma: no cover - argparse rejects unknown commands first


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
