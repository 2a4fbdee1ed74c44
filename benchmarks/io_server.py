"""The I/O-bound workload's tools (``io_tools.py``) served by backchannel over Streamable HTTP.

    PORT=8123 IO_REDIS_URL=redis://127.0.0.1:6379/0 IO_API_URL=http://127.0.0.1:8100 \\
        python benchmarks/io_server.py                                  # one process
    ... python benchmarks/io_server.py --workers 2 --redis URL          # a fleet: 2 workers, state in Redis

The tools are ``io_tools``'s functions, registered as they are (their text answers, no structured
output), as FastMCP's twin ``peers/fastmcp_io_server.py`` registers them.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import io_tools

from backchannel.server import Server


def build() -> Server:
    # As the contract server: no per-client share of sessions (the load generator is one address).
    server = Server("backchannel-io-bench", "1.0.0", log_level=None)
    for tool in (io_tools.search_products, io_tools.get_user_cart, io_tools.checkout):
        server.add_tool(tool, structured_output=False)
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--redis", help="the fleet's state (sessions, streams): a redis:// URL")
    ns = parser.parse_args()
    build().run_http(
        "127.0.0.1",
        int(os.environ.get("PORT", "8000")),
        redis=ns.redis,
        workers=ns.workers,
        max_sessions_per_client=None,
    )


if __name__ == "__main__":
    main()
