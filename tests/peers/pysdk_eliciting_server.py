"""A stdio MCP server built with the official Python SDK (``mcp==2.3.0``) whose tool asks a form.

Run it as ``python tests/peers/pysdk_eliciting_server.py``. ``ask_name`` calls ``ctx.elicit``,
the SDK's imperative elicitation: a request of the server's own. That works in the handshake
era (``initialize``); on the 2026-07-28 wire the SDK has no channel for it and answers the
call with -32600 "Cannot send 'elicitation/create': this transport context has no back-channel
for server-initiated requests." (observed with 2.3.0), although its ``server/discover``
offers 2026-07-28 and nothing else. ``tests/cli/test_era_advice.py`` checks what we say then.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel


class Name(BaseModel):
    name: str


server: MCPServer[Any] = MCPServer("pysdk-eliciting", version="2.3.0-peer", log_level="WARNING")


@server.tool(description="Ask the person for their name.", structured_output=False)
async def ask_name(ctx: Context) -> str:
    answer = await ctx.elicit("What is your name?", Name)
    data = getattr(answer, "data", None)
    return f"{answer.action}: {data.name if data is not None else '-'}"


if __name__ == "__main__":
    server.run("stdio")
