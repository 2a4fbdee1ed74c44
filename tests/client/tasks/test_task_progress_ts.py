"""Our client hears a TypeScript SDK task's progress until the task ends (PG-13, PG-14, PG-15).

``ts_task_progress_server.mjs`` (@modelcontextprotocol/sdk 1.32.2, 2025-11-25 over stdio) reports a
task's progress on the token of the ``tools/call`` that created it, after the ``CreateTaskResult``;
then it ends the task, which the SDK announces with ``notifications/tasks/status``, and sends one
more progress on the token, which breaks PG-15 on purpose. On one ordered pipe, the client must
hand the callback every value before the end and drop the one after.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from backchannel import Client
from backchannel.protocol.events import ProgressReceived
from backchannel.testing import run
from backchannel.testing.tap import Tap
from backchannel.transports.stdio import StdioClientTransport
from peers.paths import NODE22, have_npm_peers

SERVER = Path(__file__).resolve().parent / "ts_task_progress_server.mjs"

pytestmark = pytest.mark.interop
if not have_npm_peers():
    pytest.skip("npm peers not installed (run tests/peers/install.sh)", allow_module_level=True)


def progress_on_the_wire(tap: Tap, token: Any) -> list[float]:
    return [
        message["params"]["progress"]
        for message in tap.received
        if message.get("method") == "notifications/progress" and message["params"]["progressToken"] == token
    ]


def test_a_ts_tasks_progress_reaches_on_progress_until_the_task_ends() -> None:
    async def body() -> None:
        tap = Tap(StdioClientTransport(str(NODE22), [str(SERVER)]))
        heard: list[ProgressReceived] = []
        async with Client(tap) as client:
            task = await client.start_task("count", {"n": 3}, on_progress=heard.append)
            [call] = tap.tool_calls_written("count")
            token = call["params"]["_meta"]["progressToken"]
            assert "task" in call["params"] and task.task_id is not None
            result = await task
            assert [block.text for block in result.content] == ["counted 3"]
            # A request answered after everything the task sent: all of it has been read by now.
            late = await client.call_tool("late", {"token": token, "progress": 10})
            assert [block.text for block in late.content] == ["sent"]
            assert progress_on_the_wire(tap, token) == [1, 2, 3, 4, 10]
            assert [(e.progress, e.total, e.message) for e in heard] == [
                (1, 3, "step 1 of 3"),
                (2, 3, "step 2 of 3"),
                (3, 3, "step 3 of 3"),
            ]
            assert {(e.request_id, e.task_id) for e in heard} == {(call["id"], task.task_id)}
            assert client.session.task_progress_tokens == client.session.active_progress_tokens == 0

    run(body, 20)
