"""The server the tasks tests run: tools that report progress, ask, wait, fail, and a ``Probe``
through which each worker's tools tell the test what they did."""

from __future__ import annotations

import asyncio
from typing import Any

from backchannel import Context, MCPError, Server, ToolError

ANSWER = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


class Probe:
    """What one worker's tools did: events the test waits on."""

    def __init__(self, name: str = "w0") -> None:
        self.name = name
        self.started = asyncio.Event()
        self.cancelled = asyncio.Event()
        self.release = asyncio.Event()
        self.ran: list[str] = []


def tasks_server(probe: Probe | None = None, **options: Any) -> Server:
    probe = probe or Probe()
    server = Server("tasks-test", **options)

    @server.tool(task="optional", elicits=[ANSWER])
    async def steps(rounds: int, ctx: Context) -> str:
        """Progress, then a question, ``rounds`` times: each answer comes through the task."""
        probe.ran.append("steps")
        answers = []
        total = 2 * rounds
        for number in range(1, rounds + 1):
            await ctx.report_progress(2 * number - 1, total, f"asking question {number}")
            answer = await ctx.elicit(f"Question {number}?", ANSWER)
            answers.append((answer.data or {}).get("answer", answer.action))
            await ctx.report_progress(2 * number, total, f"got answer {number}")
            await ctx.info(f"answer {number} was {answers[-1]}")
        return f"{', '.join(answers)} @{probe.name}"

    @server.tool(task="optional", elicits=[ANSWER])
    async def pair(ctx: Context) -> str:
        """Two questions at once: both wait in ``inputRequests`` together."""
        first, second = await ctx.gather(ctx.elicit("First?", ANSWER), ctx.elicit("Second?", ANSWER))
        return f"{(first.data or {}).get('answer')} + {(second.data or {}).get('answer')} @{probe.name}"

    @server.tool(task="required")
    async def hold(ctx: Context) -> str:
        """Waits until the test releases it (or it is cancelled)."""
        probe.ran.append("hold")
        probe.started.set()
        try:
            await probe.release.wait()
        except asyncio.CancelledError:
            probe.cancelled.set()
            raise
        return f"released @{probe.name} (cancelled: {ctx.cancelled})"

    @server.tool(task="optional")
    async def quick(text: str = "done") -> str:
        return text

    @server.tool(task="optional")
    async def tool_error() -> str:
        raise ToolError("the tool saw a problem")

    @server.tool(task="optional")
    async def protocol_error() -> str:
        raise MCPError("the service behind the tool is down", code=-32603, data={"service": "db"})

    @server.tool()
    def plain(text: str) -> str:
        return text

    return server
