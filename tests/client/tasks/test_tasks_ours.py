"""Our client against our own server's tasks (``server/tasks/``), both eras, over HTTP in process.

The server side is proven by its own tests; here the two halves meet: progress reaches the
client as the task's status message, a question is answered with the elicitation handler, a
cancel ends the task, and the stateless era's ``tasks/*`` carry ``Mcp-Name`` (which our
server checks).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest

from backchannel import Context, Server
from backchannel.client.tasks import TaskCancelled, ToolTask
from backchannel.testing import connected, run
from backchannel.testing.tap import Tap

ERAS = ["handshake", "stateless"]


@dataclass
class Name:
    name: str


def build(gate: asyncio.Event) -> Server:
    server = Server("ours")
    server.tasks.poll_interval = 0.02  # the interval it suggests: a quick test

    @server.tool(task="optional")
    async def work(ctx: Context) -> str:
        await ctx.report_progress(1, 2, "step 1 of 2")
        await gate.wait()
        return "worked"

    @server.tool(task="required")
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Your name?", Name)
        return f"hello {answer.data.name}" if answer.data is not None else answer.action

    @server.tool(task="required")
    async def stall(ctx: Context) -> str:
        await asyncio.Event().wait()
        return "never"

    return server


async def answer(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Ada"}}


def texts(result: Any) -> list[str]:
    return [block.text for block in result.content]


@pytest.mark.parametrize("era", ERAS)
def test_our_client_and_our_server_run_a_task_with_progress_a_question_and_a_cancel(era: str) -> None:
    async def body() -> None:
        gate = asyncio.Event()
        tap = Tap()
        async with connected(
            build(gate), era=era, transport="http", wrap_client=tap.around, elicitation=answer
        ) as client:
            task = await client.start_task("work")
            stepped = asyncio.Event()

            def watch(changed: ToolTask) -> None:
                if changed.state.status_message == "step 1 of 2":
                    stepped.set()

            task.watch(watch)
            await stepped.wait()
            gate.set()
            assert texts(await task) == ["worked"]
            assert texts(await client.call_tool("ask")) == ["hello Ada"]
            stalled = await client.start_task("stall")
            await stalled.cancel()
            with pytest.raises(TaskCancelled):
                await stalled
            assert tap.notifications_written("notifications/cancelled") == []

    run(body, 20)
