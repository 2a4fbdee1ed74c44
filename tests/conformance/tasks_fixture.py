"""The tools the conformance harness's ``tasks-*`` scenarios call (SEP-2663, issue #15).

``everything_server.py`` registers them with ``add_task_tools(server)``. Names, arguments
and behaviour are the ones the scenarios' descriptions ask for
(``@modelcontextprotocol/conformance``, ``src/scenarios/server/tasks/``):

- ``greet``: sync only, ``Hello, {name}!``;
- ``slow_compute``: may run as a task; sleeps ``seconds`` then answers, and settles to
  ``cancelled`` when ``tasks/cancel`` arrives meanwhile;
- ``failing_job``: runs only as a task; a tool execution error after a moment;
- ``protocol_error_job``: may run as a task; fails with a JSON-RPC error;
- ``confirm_delete``: may run as a task; asks one confirmation through the task;
- ``multi_input``: may run as a task; asks two questions at once (``ctx.gather``);
- ``test_tool_with_task``: runs only as a task, which starts after it asked for a name
  synchronously (a multi round-trip round of the call itself); the task's result names it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from backchannel import Context, MCPError, Server, ToolError

__all__ = ["add_task_tools"]

CONFIRM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}
NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
NAME_AND_CONFIRM = {"type": "object", "properties": {"name": {"type": "string"}, "confirm": {"type": "boolean"}}}


def add_task_tools(server: Server) -> None:
    """Register the tasks scenarios' fixture tools on ``server``."""

    @server.tool(description="Sync only: greets")
    def greet(name: str) -> str:
        return f"Hello, {name}!"

    @server.tool(description="Sleeps `seconds`, then answers; may run as a task", task="optional")
    async def slow_compute(seconds: float = 0, label: str = "") -> str:
        await asyncio.sleep(seconds)
        return f"computed {label or 'result'} after {seconds:g} s"

    @server.tool(description="Always a tool execution error, after a moment; only as a task", task="required")
    async def failing_job() -> str:
        await asyncio.sleep(0.2)
        raise ToolError("failing_job failed, as it always does")

    @server.tool(description="Fails with a JSON-RPC error; may run as a task", task="optional")
    async def protocol_error_job() -> str:
        await asyncio.sleep(0.05)
        raise MCPError("protocol_error_job hit an internal error", code=-32603)

    @server.tool(description="Asks to confirm a deletion through the task", task="optional", elicits=[CONFIRM])
    async def confirm_delete(filename: str, ctx: Context) -> str:
        answer = await ctx.elicit(f"Delete {filename}?", CONFIRM)
        confirmed = answer.accepted and bool((answer.data or {}).get("confirm"))
        return f"{filename}: {'deleted' if confirmed else 'kept'}"

    @server.tool(description="Asks two questions at once through the task", task="optional")
    async def multi_input(ctx: Context) -> str:
        first, second = await ctx.gather(
            ctx.elicit("Your name?", NAME_AND_CONFIRM, key="first"),
            ctx.elicit("Confirm?", NAME_AND_CONFIRM, key="second"),
        )
        return f"first: {_shown(first.data)}; second: {_shown(second.data)}"

    @server.tool(
        description="Asks a name (multi round-trip), then runs as a task that greets it",
        task="required",
        task_start="explicit",
        elicits=[NAME],
    )
    async def test_tool_with_task(ctx: Context) -> str:
        answer = await ctx.elicit("What is your name?", NAME, key="user_name")
        await ctx.start_task()
        await asyncio.sleep(0.05)
        name = (answer.data or {}).get("name", "stranger")
        return f"Hello, {name}!"


def _shown(data: Any) -> str:
    return ", ".join(f"{key}={value}" for key, value in sorted((data or {}).items()))
