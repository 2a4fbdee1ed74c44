"""Tasks: tool calls that outlive their request (``docs/tasks.md``).

Two tools a client may run as tasks:

- ``export_orders``: a data export that takes a while. It reports progress as it goes and stops
  when the client cancels it. A client that can take a task gets one at once and polls it; any
  other client gets the same result the ordinary way, waiting with the request open.
- ``release``: only as a task. It asks which environment first, *before* the task exists (so
  the client answers while its call is still open), then builds, and asks once more for an
  approval halfway, *through the task*: the question waits in the task until someone answers,
  which may be hours later, from another process.

Run it over HTTP (both eras; add ``--redis URL --workers 4`` for a fleet sharing the tasks):

    backchannel run --http examples/tasks_server.py

or on stdio: ``backchannel run examples/tasks_server.py``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Literal

from backchannel import Context, Server, ToolError

server = Server("tasks-demo", "0.1.0", instructions="Long work as tasks: export_orders and release.")
server.tasks.ttl = 2 * 3600  # a finished task's result is kept two hours, unless the client asks otherwise


@server.tool(task="optional")
async def export_orders(month: str, ctx: Context) -> str:
    """Export a month of orders (slowly), reporting progress; cancellable."""
    batches = 20
    for batch in range(1, batches + 1):
        if ctx.cancelled:  # a task cancelled with tasks/cancel; the body is cancelled as well
            break
        await asyncio.sleep(0.2)  # stands for the real work: a query, a file written
        await ctx.report_progress(batch, batches, f"exported batch {batch} of {batches}")
    return f"orders-{month}.csv: {batches * 500} orders"


@dataclass
class Target:
    environment: Literal["staging", "production"]


@dataclass
class Approval:
    approve: bool
    note: str = ""


@server.tool(task="required", task_start="explicit", elicits=[Target, Approval])
async def release(version: str, ctx: Context) -> str:
    """Build and ship ``version``: asks where first, then runs as a task that waits for an approval."""
    target = await ctx.elicit(f"Release {version} where?", Target)  # asked while the call is open
    if not target.accepted or target.data is None:
        return "release abandoned"
    await ctx.start_task()  # from here on the client has a task to poll
    await ctx.report_progress(1, 3, f"building {version}")
    await asyncio.sleep(0.5)
    approval = await ctx.elicit(f"{version} is built. Ship it to {target.data.environment}?", Approval)
    if not approval.accepted or approval.data is None or not approval.data.approve:
        raise ToolError(f"{version} was not approved for {target.data.environment}")
    await ctx.report_progress(2, 3, f"shipping to {target.data.environment}")
    await asyncio.sleep(0.5)
    return f"{version} is live on {target.data.environment} ({ctx.task_id})"


if __name__ == "__main__":
    server.run()
