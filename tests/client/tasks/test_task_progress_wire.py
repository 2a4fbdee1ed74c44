"""A polled task's end releases its progress token at once (PG-15), against a hand-written server.

``task_progress_wire_server.py`` speaks raw JSON-RPC lines and sends no status notifications, so
the client learns that the task ended from a ``tasks/get`` poll. The progress it sends on the
token before that reaches ``on_progress``; what it sends afterwards (on receiving ``tasks/result``,
which the client asks for only after that poll) is dropped, though the client is still waiting
for the result.
"""

from __future__ import annotations

import sys
from pathlib import Path

from backchannel import Client
from backchannel.protocol.events import ProgressReceived
from backchannel.testing import run
from backchannel.testing.tap import Tap
from backchannel.transports.stdio import StdioClientTransport

SERVER = Path(__file__).resolve().parent / "task_progress_wire_server.py"


def test_progress_after_a_polled_terminal_status_is_dropped() -> None:
    async def body() -> None:
        tap = Tap(StdioClientTransport(sys.executable, [str(SERVER)]))
        heard: list[ProgressReceived] = []
        async with Client(tap) as client:
            task = await client.start_task("count", on_progress=heard.append)
            result = await task
            assert [block.text for block in result.content] == ["counted"]
            [call] = tap.tool_calls_written("count")
            token = call["params"]["_meta"]["progressToken"]
            on_the_wire = [
                message["params"]["progress"]
                for message in tap.received
                if message.get("method") == "notifications/progress" and message["params"]["progressToken"] == token
            ]
            assert on_the_wire == [1, 2, 3]
            assert [(e.progress, e.task_id) for e in heard] == [(1, "task-1"), (2, "task-1")]
            assert not [m for m in tap.received if m.get("method") == "notifications/tasks/status"]
            assert client.session.active_progress_tokens == 0

    run(body, 20)
