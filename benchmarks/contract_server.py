"""The bench contract (shared/bench/CONTRACT.md v1) served by backchannel.

    python benchmarks/contract_server.py stdio
    PORT=8123 python benchmarks/contract_server.py http      # http://127.0.0.1:8123/mcp
    PORT=8123 python benchmarks/contract_server.py http --redis redis://127.0.0.1:6379/0   # one worker of a fleet
    PORT=8123 python benchmarks/contract_server.py http --redis-cluster redis://127.0.0.1:7000/0   # ... on a cluster

Tools ``echo``, ``progress``, ``sleep``, ``ask``; prompt ``greet(word)`` whose ``word``
completes from the contract's 10,000-word list (a ``Complete`` annotation); logging. The stdio mode never imports
the HTTP stack (``run_http``'s server is imported only by ``run_http``).
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Annotated, TypedDict

from backchannel.server import Context, Server
from backchannel.server.completion import Complete

WORDS = ["".join("abcdefghij"[int(c)] for c in f"{i:04d}") for i in range(10000)]
"""The contract's word list; ``Complete(WORDS)`` indexes it once (a sorted list: each answer is one slice)."""


class Name(TypedDict):
    name: str


def build() -> Server:
    # The contract times completions back to back, thousands a second: no rate limit (the other servers have none).
    server = Server("backchannel-bench", "1.0.0", log_level=None, completion_rate=None)

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
        if not answer.accepted or answer.data is None:
            return answer.action
        return f"hello {answer.data['name']}"

    @server.prompt()
    def greet(word: Annotated[str, Complete(WORDS)]) -> str:
        """Greet with a word."""
        return f"Say {word}."

    return server


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    redis = sys.argv[3] if len(sys.argv) == 4 and sys.argv[2] in ("--redis", "--redis-cluster") else None
    server = build()
    if redis is not None and sys.argv[2] == "--redis-cluster":  # one node of a Redis Cluster
        from backchannel.state.redis import RedisState

        server.use_state(RedisState(redis, cluster=True))
        redis = None
    if mode == "stdio" and len(sys.argv) <= 2:
        server.run()
    elif mode == "http" and (len(sys.argv) == 2 or len(sys.argv) == 4):
        # With --redis: one worker of a fleet (benchmarks/fleet_bench.py starts two behind nginx).
        # The driver is one client (one address, or nginx's) opening 1,000 idle sessions beside those
        # it measures with: no per-client share of them (docs/reliability.md, "Each client's share").
        server.run_http("127.0.0.1", int(os.environ.get("PORT", "8000")), redis=redis, max_sessions_per_client=None)
    else:
        raise SystemExit(f"usage: {sys.argv[0]} stdio | http [--redis URL | --redis-cluster URL]")


if __name__ == "__main__":
    main()
