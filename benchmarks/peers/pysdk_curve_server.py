"""``curve_server.py``'s twin on the official Python SDK (mcp 2.3.0, ``MCPServer``).

    CURVE_TOOLS=1000 CURVE_WORDS=100000 python benchmarks/peers/pysdk_curve_server.py stdio
    PORT=8123 python benchmarks/peers/pysdk_curve_server.py http

Written as ``pysdk_server.py`` is (the SDK's documented decorators; ``add_tool`` for the grown tool
list, one function under many names); completion of ``pick.word`` is the same binary search.
"""

from __future__ import annotations

import asyncio
import bisect
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp_types import Completion, EmptyResult, PromptReference, SetLevelRequestParams

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from curve_data import blob as make_blob
from curve_data import words


def lookup(query: str, limit: int = 10) -> str:
    """Look the query up and answer at most limit lines."""
    return query[:limit]


def build() -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer("pysdk-curves", version="2.3.0", log_level="WARNING")

    @server.tool(structured_output=False)
    def echo(text: str) -> str:
        """Answer the text back."""
        return text

    @server.tool(structured_output=False)
    async def sleep(ms: int) -> str:
        """Wait ms milliseconds without blocking anything else."""
        await asyncio.sleep(ms / 1000)
        return "slept"

    @server.tool(structured_output=False)
    def blob(size: int) -> str:
        """Answer a text of size characters."""
        return make_blob(size)

    @server.prompt()
    def greet(word: str) -> str:
        """Greet with a word."""
        return f"Say {word}."

    count = int(os.environ.get("CURVE_TOOLS", "0"))
    started, cpu = time.perf_counter(), time.process_time()
    for i in range(count):
        server.add_tool(
            lookup, name=f"tool_{i:05d}", description=f"Tool number {i}: looks a query up.", structured_output=False
        )
    registered, registered_cpu = time.perf_counter() - started, time.process_time() - cpu

    vocabulary = words(int(os.environ.get("CURVE_WORDS", "0")))

    @server.prompt()
    def pick(word: str) -> str:
        """Pick a word."""
        return f"Picked {word}."

    @server.completion()
    async def complete(ref: Any, argument: Any, context: Any) -> Completion | None:
        if isinstance(ref, PromptReference) and ref.name == "pick" and argument.name == "word":
            start = bisect.bisect_left(vocabulary, argument.value)
            end = bisect.bisect_left(vocabulary, argument.value + "\uffff", lo=start)
            found = vocabulary[start:end]
            return Completion(values=found[:100], total=len(found), has_more=len(found) > 100)
        return None

    stats = json.dumps({"register_ms": registered * 1e3, "register_cpu_ms": registered_cpu * 1e3, "index_ms": 0.0})

    @server.tool(structured_output=False)
    def curve_stats() -> str:
        """How long building this server took."""
        return stats

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
