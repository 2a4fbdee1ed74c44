"""FastMCP's proxy (``fastmcp.server.create_proxy``), for the contrast in
``test_proxy_peers.py``: served over stdio in front of an upstream it starts over stdio.

    python tests/bridge/fastmcp_proxy_peer.py -- CMD [ARG...]

Written the way FastMCP's documentation shows a proxy of a local server: ``create_proxy`` of a
``StdioTransport``, run over stdio, nothing else set.
"""

from __future__ import annotations

import os
import sys

from fastmcp.client.transports import StdioTransport
from fastmcp.server import create_proxy


def main(argv: list[str]) -> None:
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        sys.exit("usage: fastmcp_proxy_peer.py -- CMD [ARG...]")
    command = argv[argv.index("--") + 1 :]
    upstream = StdioTransport(command[0], command[1:], env=dict(os.environ), cwd=os.getcwd())
    create_proxy(upstream, name="fastmcp-proxy").run("stdio", show_banner=False)


if __name__ == "__main__":
    main(sys.argv[1:])
