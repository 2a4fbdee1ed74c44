"""A 2025-11-25 task's progress reaches the client's ``on_progress`` until the task ends (PG-13, PG-14, PG-15).

progress.mdx item 3: the ``progressToken`` of a task-augmented request stays in use after the
``CreateTaskResult``, until the task reaches a terminal status. Our server reports a task's
progress on that token (``server/tasks/runner.py``); here our client, against it on the wire,
hands every value to the callback, in order, and nothing once the task has ended: a progress
notification the server's connection sends on the token afterwards crosses the wire (the tap
shows it) and is dropped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from backchannel import Context, Server
from backchannel.client.tasks import TaskCancelled
from backchannel.protocol.events import ProgressReceived
from backchannel.runtime.connection import Connection
from backchannel.testing import connected, run
from backchannel.testing.tap import Tap

TRANSPORTS = ["memory", "http"]


@dataclass
class Counting:
    """What the tools share with the test: a gate the body waits on after the task is created,
    one it waits on before it ends, and the server's end of the call (its connection and the
    request's progress token)."""

    gate: asyncio.Event = field(default_factory=asyncio.Event)
    #: Set by ``hear`` once every value arrived. Over HTTP a working task's progress travels on the
    #: GET stream and the polls on POSTs, which nothing orders: without it, a poll could see the
    #: end (and release the token, as the spec says) before the last value was read.
    heard_all: asyncio.Event = field(default_factory=asyncio.Event)
    stalled: asyncio.Event = field(default_factory=asyncio.Event)
    connection: Connection | None = None
    token: Any = None
    heard: list[ProgressReceived] = field(default_factory=list)

    def hear(self, event: ProgressReceived, expected: int) -> None:
        self.heard.append(event)
        if len(self.heard) == expected:
            self.heard_all.set()

    def late_progress(self, value: float) -> None:
        """What a server that broke PG-15 would send: progress on the task's token after its end."""
        assert self.connection is not None
        self.connection.notify("notifications/progress", {"progressToken": self.token, "progress": value})


def build(counting: Counting) -> Server:
    server = Server("progress")
    server.tasks.poll_interval = 0.02  # the interval it suggests: a quick test

    async def count(ctx: Context, n: int) -> str:
        counting.connection = ctx.connection
        counting.token = ctx.request.params.get("_meta", {}).get("progressToken")
        await counting.gate.wait()  # the task exists, its request is answered
        for step in range(1, n + 1):
            await ctx.report_progress(step, n, f"step {step} of {n}")
        await counting.heard_all.wait()
        return f"counted {n}"

    async def count_then_stall(ctx: Context) -> str:
        counting.connection = ctx.connection
        counting.token = ctx.request.params.get("_meta", {}).get("progressToken")
        await counting.gate.wait()
        await ctx.report_progress(1, None, "started")
        counting.stalled.set()
        await asyncio.Event().wait()
        return "never"

    server.add_tool(count, task="optional")
    server.add_tool(count, name="count_required", task="required")
    server.add_tool(count_then_stall, task="required")
    return server


class WatchingTap(Tap):
    """A tap on the client whose test can wait for what the client has read (with a bound: ``run``)."""

    def __init__(self) -> None:
        super().__init__()
        self._read = asyncio.Condition()

    async def receive(self) -> list[Any] | None:
        batch = await super().receive()
        async with self._read:
            self._read.notify_all()
        return batch

    async def has_read(self, what: Callable[[], bool]) -> None:
        async with self._read:
            await self._read.wait_for(what)

    def read_task_creation(self) -> bool:
        return any(isinstance(m.get("result"), dict) and "task" in m["result"] for m in self.received)


def progress_on_the_wire(tap: Tap, token: Any) -> list[float]:
    return [
        message["params"]["progress"]
        for message in tap.received
        if message.get("method") == "notifications/progress" and message["params"]["progressToken"] == token
    ]


def texts(result: Any) -> list[str]:
    return [block.text for block in result.content]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_start_task_hears_every_progress_of_the_task_and_nothing_after_it_ended(transport: str) -> None:
    async def body() -> None:
        counting, tap = Counting(), WatchingTap()
        heard = counting.heard
        async with connected(build(counting), "handshake", transport, wrap_client=tap.around) as client:
            task = await client.start_task("count", {"n": 3}, on_progress=lambda e: counting.hear(e, 3))
            assert task.task_id is not None and not task.done
            [call] = tap.tool_calls_written("count")
            token = call["params"]["_meta"]["progressToken"]
            assert "task" in call["params"] and counting.token == token
            # The CreateTaskResult has come: from here on, the progress is the task's.
            assert client.session.task_created_by(call["id"]) == task.task_id
            counting.gate.set()
            assert texts(await task) == ["counted 3"]
            assert task.state.status == "completed"
            assert [(e.progress, e.total, e.message) for e in heard] == [
                (1, 3, "step 1 of 3"),
                (2, 3, "step 2 of 3"),
                (3, 3, "step 3 of 3"),
            ]
            assert {(e.request_id, e.token, e.task_id) for e in heard} == {(call["id"], token, task.task_id)}
            # The task has ended: its token is released, and progress on it no longer counts.
            assert client.session.task_progress_tokens == client.session.active_progress_tokens == 0
            counting.late_progress(4)
            await tap.has_read(lambda: 4 in progress_on_the_wire(tap, token))  # it crossed the wire...
            await client.ping()
            assert progress_on_the_wire(tap, token) == [1, 2, 3, 4]
            assert len(heard) == 3  # ...and was dropped

    run(body, 20)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_plain_call_tool_that_becomes_a_task_hears_the_tasks_progress(transport: str) -> None:
    async def body() -> None:
        counting, tap = Counting(), WatchingTap()
        heard = counting.heard
        async with connected(build(counting), "handshake", transport, wrap_client=tap.around) as client:

            async def open_gate_once_created() -> None:
                # The tool requires a task: call_tool makes one and follows it; its work waits for that.
                await tap.has_read(tap.read_task_creation)
                counting.gate.set()

            opener = asyncio.ensure_future(open_gate_once_created())
            result = await client.call_tool("count_required", {"n": 2}, on_progress=lambda e: counting.hear(e, 2))
            await opener
            assert texts(result) == ["counted 2"]
            assert [e.progress for e in heard] == [1, 2]
            assert len({e.task_id for e in heard}) == 1 and heard[0].task_id is not None
            assert client.session.active_progress_tokens == 0

    run(body, 20)


def test_a_cancelled_task_releases_its_token() -> None:
    async def body() -> None:
        counting, heard = Counting(), []
        async with connected(build(counting), "handshake") as client:
            task = await client.start_task("count_then_stall", on_progress=heard.append)
            counting.gate.set()
            await counting.stalled.wait()
            await client.ping()  # the progress sent before ``stalled`` has been read
            assert [e.progress for e in heard] == [1]
            assert client.session.task_progress_tokens == 1
            await task.cancel()
            with pytest.raises(TaskCancelled):
                await task
            assert client.session.task_progress_tokens == client.session.active_progress_tokens == 0
            counting.late_progress(2)
            await client.ping()
            assert [e.progress for e in heard] == [1]

    run(body, 20)


def test_a_handle_that_stops_following_releases_its_token() -> None:
    # No terminal status is ever seen: the handle gave up (``stop``, as when the client closes).
    async def body() -> None:
        counting, heard = Counting(), []
        async with connected(build(counting), "handshake") as client:
            task = await client.start_task("count_then_stall", on_progress=heard.append)
            counting.gate.set()
            await counting.stalled.wait()
            await client.ping()
            assert client.session.task_progress_tokens == 1
            task.stop()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert task.state.status == "working"
            assert client.session.task_progress_tokens == client.session.active_progress_tokens == 0
            counting.late_progress(2)
            await client.ping()
            assert [e.progress for e in heard] == [1]

    run(body, 20)


def test_a_stateless_era_call_keeps_no_token_after_its_answer() -> None:
    # The tasks extension (2026-07-28) has no progress notifications for tasks: nothing is kept.
    async def body() -> None:
        counting, heard = Counting(), []
        async with connected(build(counting), "stateless") as client:
            task = await client.start_task("count", {"n": 2}, on_progress=heard.append)
            assert client.session.active_progress_tokens == 0
            counting.gate.set()
            counting.heard_all.set()  # none is expected here
            assert texts(await task) == ["counted 2"]
            assert heard == []  # its progress shows in the status message only

    run(body, 20)
