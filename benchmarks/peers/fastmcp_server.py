"""The bench contract (shared/bench/CONTRACT.md v1) on FastMCP 4.x.

    python benchmarks/peers/fastmcp_server.py stdio
    PORT=8123 python benchmarks/peers/fastmcp_server.py http

Written the way FastMCP's documentation shows: ``@mcp.tool``, ``@mcp.prompt``,
``@mcp.completion``, ``ctx.report_progress`` and ``ctx.elicit`` with a dataclass.
FastMCP answers ``logging/setLevel`` itself. The completion handler uses the same
bisect lookup as every other contract server.
"""

from __future__ import annotations

import asyncio
import bisect
import os
import sys
from dataclasses import dataclass
from typing import Any

from fastmcp import Context, FastMCP
from mcp_types import Completion, PromptReference

WORDS = ["".join("abcdefghij"[int(c)] for c in f"{i:04d}") for i in range(10000)]


@dataclass
class Name:
    name: str


def matches(prefix: str) -> list[str]:
    start = bisect.bisect_left(WORDS, prefix)
    end = bisect.bisect_left(WORDS, prefix + "\uffff", lo=start)
    return WORDS[start:end]


def build() -> FastMCP[Any]:
    mcp: FastMCP[Any] = FastMCP("fastmcp-bench", version="1.0.0")

    @mcp.tool(output_schema=None)
    def echo(text: str) -> str:
        """Answer the text back."""
        return text

    @mcp.tool(output_schema=None)
    async def progress(steps: int, ctx: Context) -> str:
        """Report progress 1..steps, then answer."""
        for i in range(1, steps + 1):
            await ctx.report_progress(i, steps)
        return "done"

    @mcp.tool(output_schema=None)
    async def sleep(ms: int) -> str:
        """Wait ms milliseconds without blocking anything else."""
        await asyncio.sleep(ms / 1000)
        return "slept"

    @mcp.tool(output_schema=None)
    async def ask(ctx: Context) -> str:
        """Ask the person for a name."""
        answer = await ctx.elicit("What is your name?", Name)
        if answer.action != "accept":
            return answer.action
        return f"hello {answer.data.name}"

    @mcp.prompt
    def greet(word: str) -> str:
        """Greet with a word."""
        return f"Say {word}."

    @mcp.completion
    def complete(ref: Any, argument: Any, context: Any) -> Completion | None:
        if isinstance(ref, PromptReference) and ref.name == "greet" and argument.name == "word":
            found = matches(argument.value)
            return Completion(values=found[:100], total=len(found), has_more=len(found) > 100)
        return None

    return mcp


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    mcp = build()
    if mode == "stdio":
        mcp.run("stdio", show_banner=False)
    elif mode == "http":
        port = int(os.environ.get("PORT", "8000"))
        mcp.run("http", show_banner=False, host="127.0.0.1", port=port, path="/mcp", log_level="warning")
    else:
        raise SystemExit(f"usage: {sys.argv[0]} stdio|http")


if __name__ == "__main__":
    main()
