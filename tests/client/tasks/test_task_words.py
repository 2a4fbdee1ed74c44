"""What a task says of itself to a person: the terminal's line for a cancelled task, and a
``ToolTask``'s repr. Our client and our own server (``server/tasks/``), both eras, over HTTP
in process: the status message is the one our server really sends.

Issue #27: "cancelled by request.." had two dots (the server's status message ends a sentence,
and the terminal added a full stop after it); ``ToolTask`` had the default ``object`` repr.
"""

from __future__ import annotations

import asyncio
import io
from dataclasses import replace

import pytest
from rich.console import Console

from backchannel import Server
from backchannel.client.tasks import TaskCancelled, ToolTask
from backchannel.testing import connected, run
from backchannel.ui.progress import ProgressDisplay
from backchannel.ui.render import Renderer
from backchannel.ui.task_board import TaskBoard

ERAS = ["handshake", "stateless"]


def build(gate: asyncio.Event) -> Server:
    server = Server("words")
    server.tasks.poll_interval = 0.02

    @server.tool(task="required")
    async def stall() -> str:
        await asyncio.Event().wait()
        return "never"

    @server.tool(task="required")
    async def work() -> str:
        await gate.wait()
        return "worked"

    return server


def board() -> tuple[TaskBoard, io.StringIO]:
    out = io.StringIO()
    console = Console(file=out, width=200, color_system=None, force_terminal=False, highlight=False)
    return TaskBoard(console, Renderer(console), ProgressDisplay(console), lambda action: action()), out


@pytest.mark.parametrize("era", ERAS)
def test_a_cancelled_task_is_said_in_one_sentence_with_one_full_stop(era: str) -> None:
    async def body() -> str:
        async with connected(build(asyncio.Event()), era=era, transport="http") as client:
            task = await client.start_task("stall")
            await task.cancel()
            with pytest.raises(TaskCancelled):
                await task
            assert task.state.status_message == "The task was cancelled by request."  # what our server says
            shown, out = board()
            shown.add(task)
            assert shown.outcome(task) is None
            return out.getvalue()

    assert run(body, 30) == "Task 1 (stall) was cancelled: The task was cancelled by request.\n"


def test_a_status_message_without_a_full_stop_gets_one() -> None:
    async def body() -> str:
        async with connected(build(asyncio.Event()), era="handshake", transport="http") as client:
            task = await client.start_task("stall")
            await task.cancel()
            with pytest.raises(TaskCancelled):
                await task
            task.state = replace(task.state, status_message="stopped by the operator")  # another server's words
            shown, out = board()
            shown.outcome(task)
            return out.getvalue()

    assert run(body, 30) == "Task 1 (stall) was cancelled: stopped by the operator.\n"


@pytest.mark.parametrize("era", ERAS)
def test_a_tool_task_repr_says_which_task_and_what_it_holds(era: str) -> None:
    async def body() -> list[str]:
        gate = asyncio.Event()
        async with connected(build(gate), era=era, transport="http") as client:
            working = await client.start_task("work")
            stalled = await client.start_task("stall")
            shown = [repr(working)]
            gate.set()
            await working
            shown.append(repr(working))
            await stalled.cancel()
            with pytest.raises(TaskCancelled):
                await stalled
            shown.append(repr(stalled))
            ids = (working.task_id, stalled.task_id)
        assert all(isinstance(task_id, str) and task_id for task_id in ids)
        return [line.replace(repr(ids[0]), "ID1").replace(repr(ids[1]), "ID2") for line in shown]

    assert run(body, 30) == [
        "<ToolTask 1 'work' id=ID1 working, pending>",
        "<ToolTask 1 'work' id=ID1 completed, result>",
        "<ToolTask 2 'stall' id=ID2 cancelled, error TaskCancelled>",
    ]


def test_a_tool_task_repr_marks_a_tool_error() -> None:
    async def body() -> str:
        server = Server("failing")
        server.tasks.poll_interval = 0.02

        @server.tool(task="required")
        async def fail() -> str:
            from backchannel import ToolError

            raise ToolError("no such thing")

        async with connected(server, era="stateless", transport="http") as client:
            task: ToolTask = await client.start_task("fail")
            result = await task
            assert result.is_error is True
            return repr(task)

    shown = run(body, 30)
    assert shown.startswith("<ToolTask 1 'fail' id=") and shown.endswith(" completed, result (isError)>")
