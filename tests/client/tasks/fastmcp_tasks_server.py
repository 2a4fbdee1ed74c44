"""FastMCP's tasks (the ``fastmcp-tasks`` package, SEP-2663) as a peer for the client's interop tests.

    .venv-fastmcp-tasks/bin/python tests/client/tasks/fastmcp_tasks_server.py PORT

Runs in its own venv (``tests/peers/install-fastmcp-tasks.sh``): ``fastmcp-tasks`` pins an
older ``fastmcp`` than the benchmarks' one. Serves Streamable HTTP on 127.0.0.1:PORT/mcp
(2026-07-28; FastMCP's tasks exist only in that era), with an in-memory Docket. Written as
FastMCP's documentation shows:

* ``crunch(steps)``, ``task=True`` (optional): reports progress each step, answers ``crunched N``;
* ``greet``, required: asks for a name the way a FastMCP task must (returning an
  ``InputRequiredResult``; ``ctx.elicit`` is refused inside a task), answers ``hello <name>``;
* ``stall``, required: sleeps until cancelled;
* ``explode``, required: raises, so the task fails.
"""

from __future__ import annotations

import asyncio
import sys
from datetime import timedelta

import mcp_types
import uvicorn
from fastmcp import Context, FastMCP
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension

FAST = timedelta(milliseconds=20)  # the poll interval the server suggests: keeps the tests quick

mcp = FastMCP("fastmcp-tasks-peer")
mcp.add_extension(TasksExtension(url="memory://"))


@mcp.tool(task=TaskConfig(mode="optional", poll_interval=FAST))
async def crunch(steps: int, ctx: Context) -> str:
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
        await asyncio.sleep(0.02)
    return f"crunched {steps}"


@mcp.tool(task=TaskConfig(mode="required", poll_interval=FAST))
async def greet(ctx: Context) -> str | mcp_types.InputRequiredResult:
    answers = ctx.input_responses or {}
    answer = answers.get("name")
    if answer is None:
        form = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        question = mcp_types.ElicitRequest(
            params=mcp_types.ElicitRequestFormParams(message="Your name?", requested_schema=form)
        )
        return mcp_types.InputRequiredResult(input_requests={"name": question})
    content = getattr(answer, "content", None) or {}
    return f"hello {content.get('name')}"


@mcp.tool(task=TaskConfig(mode="required", poll_interval=FAST))
async def stall() -> str:
    await asyncio.sleep(3600)
    return "never"


@mcp.tool(task=TaskConfig(mode="required", poll_interval=FAST))
async def explode() -> str:
    raise RuntimeError("the reactor is gone")


def main() -> None:
    uvicorn.run(mcp.http_app(), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")


if __name__ == "__main__":
    main()
