"""An upstream for the bridge's peer tests, built with the official Python SDK (``mcp==2.3.0``,
``MCPServer``) the way its documentation shows, over stdio: each tool asks the client one thing
with the SDK's imperative calls, which need the handshake era's back-channel (on the 2026-07-28
wire the SDK answers them -32600, so the bridge speaks to it in the handshake era).

    python tests/bridge/pysdk_upstream.py

* ``ask()``: a form (``ctx.elicit``) for a name; answers ``"<action>:<name>"``.
* ``sample(prompt)``: ``sampling/createMessage``; answers ``"sampled:<the model's text>"``.
* ``roots()``: ``roots/list``; answers ``"roots:<uri>,<uri>..."``.
* ``steps(count)``: progress 1..count of count, and an ``info`` log per step (``"step <i>"``,
  logger ``"steps"``); answers ``"stepped:<count>"``.
"""

from __future__ import annotations

from typing import Any

from mcp import types
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel


class Name(BaseModel):
    name: str


def build() -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer("pysdk-upstream", version="2.3.0-peer", log_level="WARNING")

    @server.tool(description="Ask the person for their name (a form).", structured_output=False)
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("What is your name?", Name)
        data = getattr(answer, "data", None)
        return f"{answer.action}:{data.name if data is not None else '-'}"

    @server.tool(description="Ask the client's model (sampling).", structured_output=False)
    async def sample(prompt: str, ctx: Context) -> str:
        message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))
        result = await ctx.session.create_message([message], max_tokens=16, related_request_id=ctx.request_id)
        content = result.content
        return f"sampled:{content.text if isinstance(content, types.TextContent) else content}"

    @server.tool(description="The client's roots.", structured_output=False)
    async def roots(ctx: Context) -> str:
        result = await ctx.session.list_roots()
        return "roots:" + ",".join(str(root.uri) for root in result.roots)

    @server.tool(description="Progress and a log message per step.", structured_output=False)
    async def steps(count: int, ctx: Context) -> str:
        for step in range(1, count + 1):
            await ctx.report_progress(step, count)
            await ctx.info(f"step {step}", logger_name="steps")
        return f"stepped:{count}"

    return server


if __name__ == "__main__":
    build().run("stdio")
