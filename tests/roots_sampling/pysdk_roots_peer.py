"""A stdio server built with the official Python SDK (``mcp==2.3.0``) whose one tool lists the
client's roots: the peer for ``test_root_marks_interop.py``.

``roots`` fetches them with the SDK's ``ListRoots`` resolver, which asks the way the era
wants: a ``roots/list`` request mid-call (2025-11-25), an ``InputRequiredResult`` and a retry
(2026-07-28). It answers with what the SDK parsed: each root's ``uri``, ``name`` and
``_meta``, as JSON text.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from mcp.server.mcpserver import ListRoots, MCPServer, Resolve
from mcp_types import ListRootsResult


def ask_roots() -> ListRoots:
    return ListRoots()


def build_server() -> MCPServer[Any]:
    server = MCPServer("pysdk-roots-peer", version="2.3.0-peer", log_level="WARNING")

    @server.tool(description="The client's roots, as the SDK parsed them.", structured_output=False)
    def roots(found: Annotated[ListRootsResult, Resolve(ask_roots)]) -> str:
        return json.dumps([root.model_dump(mode="json", by_alias=True, exclude_none=True) for root in found.roots])

    return server


if __name__ == "__main__":
    build_server().run("stdio")
