"""Upstreams for the gateway's tests, one per SDK, each with the same tools, written the way each
SDK's documentation shows:

    python tests/gateway/gateway_upstreams.py pysdk [--http PORT] [--record FILE]  # mcp 2.3.0 (MCPServer)
    python tests/gateway/gateway_upstreams.py fastmcp [--record FILE]              # FastMCP 4.2.3
    python tests/gateway/gateway_upstreams.py ours [--key HEX] [--record FILE]     # backchannel, 2026-07-28 only

Over stdio, or (``pysdk``) Streamable HTTP on ``127.0.0.1:PORT/mcp``. The SDK's and FastMCP's
imperative questions need the handshake era's back-channel, so a gateway speaks to them in that
era; ``ours`` serves the stateless era only (its questions are ``InputRequiredResult``s), and
``--key`` gives it the sealing key of its ``requestState`` (as every process of one stateless
server must share it: the fleet test runs one such process per gateway worker).

* ``ask()``: a form for a name; answers ``"<action>:<name>"``.
* ``sample(prompt)``: ``sampling/createMessage``; answers ``"sampled:<the model's text>"``.
* ``steps(count)``: progress 1..count of count; answers ``"stepped:<count>"``.
* ``wait(tag)``: progress 1 of 2, then waits (at most 60 s) to be cancelled, and if it is, appends
  ``tag`` as a line to ``--record FILE``. (A file, not the process's memory: a gateway starts one
  process of a stdio upstream per set of capabilities its clients declare.)
"""

# No ``from __future__ import annotations``: the SDKs read each tool's annotations, which name
# types imported inside the function that builds the server.
import argparse
import asyncio
import sys
from dataclasses import dataclass
from typing import Any

WAIT_LIMIT = 60.0
record: str | None = None


async def _wait(tag: str, report: Any) -> str:
    await report(1, 2)
    finished = False
    try:
        await asyncio.sleep(WAIT_LIMIT)
        finished = True
    finally:
        if not finished:
            _note(tag)
    return "not cancelled"


def _note(tag: str) -> None:
    if record is not None:
        with open(record, "a", encoding="utf-8") as file:
            file.write(tag + "\n")


def pysdk(port: int | None) -> None:
    from mcp import types
    from mcp.server.mcpserver import Context, MCPServer
    from pydantic import BaseModel

    class Name(BaseModel):
        name: str

    server: MCPServer[Any] = MCPServer("gateway-pysdk", version="2.3.0-peer", log_level="WARNING")

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

    @server.tool(description="Progress, one step at a time.", structured_output=False)
    async def steps(count: int, ctx: Context) -> str:
        for step in range(1, count + 1):
            await ctx.report_progress(step, count)
        return f"stepped:{count}"

    @server.tool(description="Wait to be cancelled.", structured_output=False)
    async def wait(tag: str, ctx: Context) -> str:
        return await _wait(tag, ctx.report_progress)

    if port is None:
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=port)


def fastmcp() -> None:
    import mcp_types
    from fastmcp import Context, FastMCP

    @dataclass
    class Name:
        name: str

    server: FastMCP[Any] = FastMCP("gateway-fastmcp", version="4.2.3-peer")

    @server.tool(output_schema=None)
    async def ask(ctx: Context) -> str:
        """Ask the person for their name (a form)."""
        answer = await ctx.elicit("What is your name?", Name)
        data = getattr(answer, "data", None)
        return f"{answer.action}:{data.name if data is not None else '-'}"

    @server.tool(output_schema=None)
    async def sample(prompt: str, ctx: Context) -> str:
        """Ask the client's model (sampling)."""
        message = mcp_types.SamplingMessage(role="user", content=mcp_types.TextContent(type="text", text=prompt))
        result = await ctx.session.create_message([message], max_tokens=16, related_request_id=ctx.request_id)
        content = result.content
        return f"sampled:{content.text if isinstance(content, mcp_types.TextContent) else content}"

    @server.tool(output_schema=None)
    async def steps(count: int, ctx: Context) -> str:
        """Progress, one step at a time."""
        for step in range(1, count + 1):
            await ctx.report_progress(step, count)
        return f"stepped:{count}"

    @server.tool(output_schema=None)
    async def wait(tag: str, ctx: Context) -> str:
        """Wait to be cancelled."""
        return await _wait(tag, ctx.report_progress)

    server.run("stdio", show_banner=False)


def ours(key: bytes | None) -> None:
    from backchannel import Context, Server
    from backchannel.types.versions import STATELESS_VERSIONS

    @dataclass
    class Name:
        name: str

    server = Server("gateway-ours", "1.0.0", versions=tuple(STATELESS_VERSIONS), state_key=key)

    @server.tool()
    async def ask(ctx: Context) -> str:
        """Ask the person for their name (a form)."""
        answer = await ctx.elicit("What is your name?", Name)
        return f"{answer.action}:{answer.data.name if answer.data else '-'}"

    @server.tool()
    async def sample(ctx: Context, prompt: str) -> str:
        """Ask the client's model (sampling)."""
        reply = await ctx.sample(prompt, max_tokens=16)
        content = reply.content[0] if isinstance(reply.content, list) else reply.content
        return f"sampled:{getattr(content, 'text', '')}"

    @server.tool()
    async def steps(ctx: Context, count: int) -> str:
        """Progress, one step at a time."""
        for step in range(1, count + 1):
            await ctx.report_progress(step, count)
        return f"stepped:{count}"

    @server.tool()
    async def wait(ctx: Context, tag: str) -> str:
        """Wait to be cancelled."""
        return await _wait(tag, ctx.report_progress)

    server.run()


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="gateway_upstreams.py")
    parser.add_argument("kind", choices=("pysdk", "fastmcp", "ours"))
    parser.add_argument("--http", type=int, metavar="PORT", default=None, help="pysdk: serve HTTP on 127.0.0.1:PORT")
    parser.add_argument("--key", default=None, metavar="HEX", help="ours: the requestState sealing key")
    parser.add_argument("--record", default=None, metavar="FILE", help="where the cancelled waits' tags go")
    args = parser.parse_args(argv)
    global record
    record = args.record
    if args.kind == "pysdk":
        pysdk(args.http)
    elif args.kind == "fastmcp":
        fastmcp()
    else:
        ours(bytes.fromhex(args.key) if args.key else None)


if __name__ == "__main__":
    main(sys.argv[1:])
