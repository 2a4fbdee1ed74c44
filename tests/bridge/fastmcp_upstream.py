"""An upstream for the bridge's peer tests, built with FastMCP 4.x the way its documentation
shows, over stdio. The same tools as ``pysdk_upstream.py``; FastMCP's ``Context`` has ``elicit``,
``report_progress`` and ``info``, and reaches sampling and roots through ``ctx.session``. Its
imperative calls need the handshake era's back-channel (on the 2026-07-28 wire FastMCP raises a
``ToolError``), so the bridge speaks to it in the handshake era.

    python tests/bridge/fastmcp_upstream.py

* ``ask()``: a form (``ctx.elicit``) for a name; answers ``"<action>:<name>"``.
* ``sample(prompt)``: ``sampling/createMessage``; answers ``"sampled:<the model's text>"``.
* ``roots()``: ``roots/list``; answers ``"roots:<uri>,<uri>..."``.
* ``steps(count)``: progress 1..count of count, and an ``info`` log per step (``"step <i>"``,
  logger ``"steps"``); answers ``"stepped:<count>"``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mcp_types
from fastmcp import Context, FastMCP


@dataclass
class Name:
    name: str


def build() -> FastMCP[Any]:
    mcp: FastMCP[Any] = FastMCP("fastmcp-upstream", version="4.2.3-peer")

    @mcp.tool(output_schema=None)
    async def ask(ctx: Context) -> str:
        """Ask the person for their name (a form)."""
        answer = await ctx.elicit("What is your name?", Name)
        data = getattr(answer, "data", None)
        return f"{answer.action}:{data.name if data is not None else '-'}"

    @mcp.tool(output_schema=None)
    async def sample(prompt: str, ctx: Context) -> str:
        """Ask the client's model (sampling)."""
        message = mcp_types.SamplingMessage(role="user", content=mcp_types.TextContent(type="text", text=prompt))
        result = await ctx.session.create_message([message], max_tokens=16, related_request_id=ctx.request_id)
        content = result.content
        return f"sampled:{content.text if isinstance(content, mcp_types.TextContent) else content}"

    @mcp.tool(output_schema=None)
    async def roots(ctx: Context) -> str:
        """The client's roots."""
        result = await ctx.session.list_roots()
        return "roots:" + ",".join(str(root.uri) for root in result.roots)

    @mcp.tool(output_schema=None)
    async def steps(count: int, ctx: Context) -> str:
        """Progress and a log message per step."""
        for step in range(1, count + 1):
            await ctx.report_progress(step, count)
            await ctx.info(f"step {step}", logger_name="steps")
        return f"stepped:{count}"

    return mcp


if __name__ == "__main__":
    build().run("stdio", show_banner=False)
