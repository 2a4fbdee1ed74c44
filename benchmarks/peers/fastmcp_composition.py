"""FastMCP 4.x's proxy and mount, for ``benchmarks/composition.py``'s comparisons, over stdio.

    python benchmarks/peers/fastmcp_composition.py proxy -- CMD [ARG...]   # create_proxy in front of CMD (stdio)
    python benchmarks/peers/fastmcp_composition.py mount                    # the contract server mounted as "m"

Written the way FastMCP's documentation shows them: ``create_proxy`` of a ``StdioTransport``
(nothing else set), and ``main.mount(sub, namespace="m")`` of the contract server
(``fastmcp_server.build()``), whose tools the client sees as ``m_echo``, ``m_ask``, ...
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from fastmcp import FastMCP

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fastmcp_server


def proxy(command: list[str]) -> None:
    from fastmcp.client.transports import StdioTransport
    from fastmcp.server import create_proxy

    upstream = StdioTransport(command[0], command[1:], env=dict(os.environ), cwd=os.getcwd())
    create_proxy(upstream, name="fastmcp-proxy").run("stdio", show_banner=False)


def mount() -> None:
    main: FastMCP[Any] = FastMCP("fastmcp-bench-mount", version="1.0.0")
    main.mount(fastmcp_server.build(), namespace="m")
    main.run("stdio", show_banner=False)


def main(argv: list[str]) -> None:
    if argv[:1] == ["mount"] and len(argv) == 1:
        mount()
    elif argv[:2] == ["proxy", "--"] and len(argv) > 2:
        proxy(argv[2:])
    else:
        sys.exit("usage: fastmcp_composition.py proxy -- CMD [ARG...] | mount")


if __name__ == "__main__":
    main(sys.argv[1:])
