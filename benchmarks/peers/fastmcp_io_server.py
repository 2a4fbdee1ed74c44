"""The I/O-bound workload's tools (``benchmarks/io_tools.py``) served by FastMCP 4.x, under uvicorn.

    IO_REDIS_URL=... IO_API_URL=... python -m uvicorn fastmcp_io_server:app --app-dir benchmarks/peers \\
        --host 127.0.0.1 --port 8123 --workers 2 --loop uvloop --http httptools --no-access-log

The same tool functions as backchannel's ``io_server.py``, registered with ``@mcp.tool`` as FastMCP's
documentation shows. Stateless and with plain JSON answers (``stateless_http=True, json_response=True``),
the configuration FastMCP documents for running several workers behind one port (a session kept in
one worker's memory is unknown to the others), and the one TM Dev Lab's Python server runs with.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import io_tools
from fastmcp import FastMCP

mcp: FastMCP[Any] = FastMCP("fastmcp-io-bench", version="1.0.0")
for tool in (io_tools.search_products, io_tools.get_user_cart, io_tools.checkout):
    mcp.tool(tool, output_schema=None)

app = mcp.http_app(path="/mcp", stateless_http=True, json_response=True)
