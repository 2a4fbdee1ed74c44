"""The official Python SDK's test peer (``tests/peers/pysdk_server.py``) served over the deprecated
HTTP+SSE transport: ``python pysdk_sse_server.py PORT`` listens on ``127.0.0.1:PORT``, stream at
``/sse``, messages at ``/messages/`` (``MCPServer.run("sse")``, mcp 2.3.0). It also declares the
``com.example/old-friends`` extension (SEP-2133) with settings ``{"colour": "blue"}``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from peers.pysdk_server import build_server

EXTENSION = "com.example/old-friends"


def main() -> None:
    server = build_server()
    server._lowlevel_server.extensions[EXTENSION] = {"colour": "blue"}
    server.run("sse", host="127.0.0.1", port=int(sys.argv[1]))


if __name__ == "__main__":
    main()
