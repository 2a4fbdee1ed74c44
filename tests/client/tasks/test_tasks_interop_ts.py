"""Our client against the TypeScript SDK's tasks (@modelcontextprotocol/sdk 1.32.2, 2025-11-25).

The SDK runs tasks in the handshake era only (experimental core tasks: ``params.task``,
``tasks/get``, ``tasks/result``, ``tasks/cancel``); ``ts_tasks_server.mjs`` serves them over stdio.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from backchannel import Client
from backchannel.client.tasks import TaskCancelled
from backchannel.testing import run
from backchannel.testing.tap import Tap
from backchannel.transports.stdio import StdioClientTransport
from peers.paths import NODE22, have_npm_peers

SERVER = Path(__file__).resolve().parent / "ts_tasks_server.mjs"
RELATED = "io.modelcontextprotocol/related-task"

pytestmark = pytest.mark.interop
if not have_npm_peers():
    pytest.skip("npm peers not installed (run tests/peers/install.sh)", allow_module_level=True)


@asynccontextmanager
async def connected(**options: Any) -> AsyncIterator[tuple[Client, Tap]]:
    tap = Tap(StdioClientTransport(str(NODE22), [str(SERVER)]))
    async with Client(tap, **options) as client:
        yield client, tap


def texts(result: Any) -> list[str]:
    return [block.text for block in result.content]


def test_a_ts_task_is_followed_to_the_result_tasks_result_gives() -> None:
    async def body() -> None:
        async with connected() as (client, tap):
            assert client.era == "handshake"
            task = await client.start_task("delay", {"ms": 100}, ttl=60)
            messages: list[str | None] = []
            task.watch(lambda t: messages.append(t.state.status_message))
            assert texts(await task) == ["waited 100 ms"]
            assert "halfway" in messages and task.state.status == "completed"
            [call] = tap.tool_calls_written("delay")
            assert call["params"]["task"] == {"ttl": 60000}
            [result] = tap.requests_written("tasks/result")
            assert result["params"] == {"taskId": task.task_id}

    run(body, 20)


def test_a_ts_tasks_question_comes_on_the_tasks_result_stream_and_is_answered() -> None:
    async def body() -> None:
        asked: list[dict[str, Any]] = []

        async def form(params: dict[str, Any]) -> dict[str, Any]:
            asked.append(params)
            return {"action": "accept", "content": {"name": "Ada"}}

        async with connected(elicitation=form) as (client, tap):
            # "ask" requires a task: a plain call_tool makes one and waits (the tool was not listed).
            assert texts(await client.call_tool("ask")) == ["hello Ada"]
            [question] = asked
            [call] = [c for c in tap.tool_calls_written("ask") if "task" in c["params"]]
            [created] = [r for r in tap.responses_received(call["id"])]
            assert question["_meta"][RELATED] == {"taskId": created["result"]["task"]["taskId"]}

    run(body, 20)


def test_cancelling_a_ts_task() -> None:
    async def body() -> None:
        async with connected() as (client, tap):
            task = await client.start_task("stall")
            await task.status()
            await task.cancel()
            with pytest.raises(TaskCancelled, match="Client cancelled task execution"):
                await task
            assert tap.notifications_written("notifications/cancelled") == []

    run(body, 20)


def test_a_ts_task_that_failed_with_a_tool_error_gives_that_result() -> None:
    async def body() -> None:
        async with connected() as (client, _tap):
            task = await client.start_task("broken")
            result = await task
            assert result.is_error is True and texts(result) == ["the disk is full"]
            assert task.state.status == "failed"

    run(body, 20)
