"""A stdio MCP server whose spans go to a file, for a client in the test process to read back.

    python tests/telemetry/peers/traced_server.py ours|theirs SPAN_FILE

``ours`` serves backchannel's ``Server``, ``theirs`` the official Python SDK's ``MCPServer`` (mcp 2.3.0);
each has one tool, ``echo(text)``. The process's tracer provider writes every span to SPAN_FILE as a
JSON line as it ends (``tests/telemetry/_otel.py``, ``configure_file_export``); the test reads them with
``read_span_file`` once the server has exited, beside the spans of its own process.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _otel import configure_file_export

if TYPE_CHECKING:
    from backchannel import Server


def our_server() -> Server:
    """Our server with its one tool, ``echo``: the one every interop test of this folder calls."""
    from backchannel import Server

    server = Server("traced", "1.0.0")

    @server.tool()
    def echo(text: str) -> str:
        """Answer the text back."""
        return text

    return server


def serve_ours() -> None:
    our_server().run()


def serve_theirs() -> None:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("their-traced")

    @server.tool()
    def echo(text: str) -> str:
        """Answer the text back."""
        return text

    server.run("stdio")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("ours", "theirs"):
        raise SystemExit(f"usage: {sys.argv[0]} ours|theirs SPAN_FILE")
    configure_file_export(sys.argv[2])
    if sys.argv[1] == "ours":
        serve_ours()
    else:
        serve_theirs()
