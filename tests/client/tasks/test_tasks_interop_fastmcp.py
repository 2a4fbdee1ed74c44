"""Our client against FastMCP's tasks (``fastmcp-tasks``, SEP-2663), the one Python implementation.

FastMCP runs tasks only in the stateless era (2026-07-28), over Streamable HTTP; the server
is ``fastmcp_tasks_server.py`` in its own venv (``tests/peers/install-fastmcp-tasks.sh``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from backchannel import Client
from backchannel.client.tasks import TaskCancelled
from backchannel.testing import free_port, run, running_process
from backchannel.testing.tap import Tap
from backchannel.transports.http.client import HttpClientTransport

ROOT = Path(__file__).resolve().parents[3]
PYTHON = ROOT / ".venv-fastmcp-tasks" / "bin" / "python"
SERVER = Path(__file__).resolve().parent / "fastmcp_tasks_server.py"

pytestmark = pytest.mark.interop
if not PYTHON.is_file():
    pytest.skip("the FastMCP tasks peer is missing: run tests/peers/install-fastmcp-tasks.sh", allow_module_level=True)


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    port = free_port()
    with running_process([str(PYTHON), str(SERVER), str(port)], port=port):
        yield f"http://127.0.0.1:{port}/mcp"


def texts(result: Any) -> list[str]:
    return [block.text for block in result.content]


async def answer_name(params: dict[str, Any]) -> dict[str, Any]:
    assert params["message"] == "Your name?"
    return {"action": "accept", "content": {"name": "Ada"}}


def test_a_task_fastmcp_makes_is_followed_to_its_result_with_its_progress(url: str) -> None:
    async def body() -> None:
        tap = Tap(HttpClientTransport(url))
        async with Client(tap) as client:
            assert client.era == "stateless"
            task = await client.start_task("crunch", {"steps": 3})
            messages: list[str | None] = []
            task.watch(lambda t: messages.append(t.state.status_message))
            assert task.task_id is not None
            assert texts(await task) == ["crunched 3"]
            assert any(message and message.startswith("step ") for message in messages)
            [call] = tap.tool_calls_written("crunch")
            capabilities = call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
            assert "io.modelcontextprotocol/tasks" in capabilities["extensions"]

    run(body, 30)


def test_fastmcp_tasks_question_is_answered_with_tasks_update(url: str) -> None:
    async def body() -> None:
        tap = Tap(HttpClientTransport(url))
        async with Client(tap, elicitation=answer_name) as client:
            assert texts(await client.call_tool("greet")) == ["hello Ada"]
            [update] = tap.requests_written("tasks/update")
            # FastMCP keys the question its own way (per leg of the task); the answer is ours.
            [answer] = update["params"]["inputResponses"].values()
            assert answer == {"action": "accept", "content": {"name": "Ada"}}

    run(body, 30)


def test_cancelling_a_fastmcp_task(url: str) -> None:
    async def body() -> None:
        async with Client.http(url) as client:
            task = await client.start_task("stall")
            await task.status()
            await task.cancel()
            with pytest.raises(TaskCancelled):
                await task
            assert (await task.status()).status == "cancelled"

    run(body, 30)


def test_a_fastmcp_task_whose_tool_raises_ends_with_a_tool_error(url: str) -> None:
    """FastMCP reports a tool's exception as an ``isError`` result: the task completes with it."""

    async def body() -> None:
        async with Client.http(url) as client:
            result = await client.call_tool("explode")
            assert result.is_error is True and "the reactor is gone" in texts(result)[0]

    run(body, 30)
