"""The bench contract (shared/bench/CONTRACT.md v1) on the official Python SDK (mcp 2.3.0, ``MCPServer``).

    python benchmarks/peers/pysdk_server.py stdio
    PORT=8123 python benchmarks/peers/pysdk_server.py http

Written the way the SDK's documentation shows: decorators for tools, the prompt and the
completion handler, ``ctx.report_progress`` and ``ctx.elicit`` with a pydantic model. The
completion handler uses the same bisect lookup as every other contract server, so the
measurement compares the frameworks, not the search. ``MCPServer`` has no public hook for
``logging/setLevel`` (the logging capability is deprecated in the SDK), so that one handler
is registered on the low-level server it wraps.
"""

from __future__ import annotations

import asyncio
import bisect
import os
import sys
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import Completion, EmptyResult, PromptReference, SetLevelRequestParams
from pydantic import BaseModel

WORDS = ["".join("abcdefghij"[int(c)] for c in f"{i:04d}") for i in range(10000)]


class Name(BaseModel):
    name: str


def matches(prefix: str) -> list[str]:
    start = bisect.bisect_left(WORDS, prefix)
    end = bisect.bisect_left(WORDS, prefix + "\uffff", lo=start)
    return WORDS[start:end]


def build() -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer("pysdk-bench", version="2.3.0", log_level="WARNING")

    @server.tool(structured_output=False)
    def echo(text: str) -> str:
        """Answer the text back."""
        return text

    @server.tool(structured_output=False)
    async def progress(steps: int, ctx: Context) -> str:
        """Report progress 1..steps, then answer."""
        for i in range(1, steps + 1):
            await ctx.report_progress(i, steps)
        return "done"

    @server.tool(structured_output=False)
    async def sleep(ms: int) -> str:
        """Wait ms milliseconds without blocking anything else."""
        await asyncio.sleep(ms / 1000)
        return "slept"

    @server.tool(structured_output=False)
    async def ask(ctx: Context) -> str:
        """Ask the person for a name."""
        answer = await ctx.elicit("What is your name?", Name)
        if answer.action != "accept":
            return answer.action
        return f"hello {answer.data.name}"

    @server.prompt()
    def greet(word: str) -> str:
        """Greet with a word."""
        return f"Say {word}."

    @server.completion()
    async def complete(ref: Any, argument: Any, context: Any) -> Completion | None:
        if isinstance(ref, PromptReference) and ref.name == "greet" and argument.name == "word":
            found = matches(argument.value)
            return Completion(values=found[:100], total=len(found), has_more=len(found) > 100)
        return None

    async def set_level(ctx: Any, params: SetLevelRequestParams) -> EmptyResult:
        return EmptyResult()

    server._lowlevel_server.add_request_handler("logging/setLevel", SetLevelRequestParams, set_level)
    return server


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    server = build()
    if mode == "stdio":
        server.run("stdio")
    elif mode == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(os.environ.get("PORT", "8000")))
    else:
        raise SystemExit(f"usage: {sys.argv[0]} stdio|http")


if __name__ == "__main__":
    main()
