"""The client's side of tasks, on the wire, in both eras (2025-11-25 tasks.mdx; SEP-2663).

The server is ``tasks_wire_server.py``, written by hand on JSON-RPC lines (no backchannel code
in it), spawned over stdio; a ``Tap`` on the client's transport records what crossed. The
stateless era over HTTP runs through ``_tasks_http`` (in process), to read the headers.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from _tasks_http import WireHttpApp, http_client

from backchannel import Client
from backchannel.client.tasks import TaskCancelled, TaskFailed, TaskState, ToolTask
from backchannel.testing import run
from backchannel.testing.tap import Tap
from backchannel.transports.stdio import StdioClientTransport
from backchannel.types.errors import RemoteProtocolError, RequestError

SERVER = Path(__file__).resolve().parent / "tasks_wire_server.py"
EXTENSION = "io.modelcontextprotocol/tasks"
RELATED = "io.modelcontextprotocol/related-task"
ERAS = ["handshake", "stateless"]


@asynccontextmanager
async def connected(era: str, *server_args: str, **options: Any) -> AsyncIterator[tuple[Client, Tap]]:
    tap = Tap(StdioClientTransport(sys.executable, [str(SERVER), *server_args]))
    async with Client(tap, era=era, **options) as client:
        yield client, tap


def texts(result: Any) -> list[str]:
    return [block.text for block in result.content]


def methods(tap: Tap) -> list[str]:
    return [message["method"] for message in tap.written if "method" in message and "id" in message]


class Form:
    """An elicitation handler that answers ``name`` and keeps what it was asked."""

    def __init__(self) -> None:
        self.asked: list[dict[str, Any]] = []

    async def __call__(self, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(params)
        return {"action": "accept", "content": {"name": "Ada"}}


# -- a task from start to result -----------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
def test_a_started_task_is_polled_until_it_ends_and_gives_the_tools_result(era: str) -> None:
    async def body() -> None:
        async with connected(era) as (client, tap):
            task = await client.start_task("work", {"steps": 3})
            seen: list[tuple[str, str | None]] = []
            task.watch(lambda t: seen.append((t.state.status, t.state.status_message)))
            assert task.task_id is not None
            assert texts(await task) == ["worked 3 steps"]
            assert ("working", "step 2 of 3") in seen and task.state.status == "completed"
            [call] = tap.tool_calls_written("work")
            if era == "handshake":
                # 2025-11-25: the client asks for the task; the result comes from tasks/result.
                assert call["params"]["task"] == {}
                assert methods(tap)[-1] == "tasks/result"
            else:
                # The extension: the server decides; no task param, no tasks/result.
                assert "task" not in call["params"]
                assert "tasks/result" not in methods(tap)
            gets = tap.requests_written("tasks/get")
            assert len(gets) >= 3 and {tuple(get["params"]) for get in gets} <= {("taskId",), ("taskId", "_meta")}
            assert all(get["params"]["taskId"] == task.task_id for get in gets)

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_a_plain_call_of_a_tool_that_needs_a_task_makes_one_and_waits_for_it(era: str) -> None:
    async def body() -> None:
        async with connected(era) as (client, tap):
            result = await client.call_tool("deploy", {"steps": 2})
            assert texts(result) == ["worked 2 steps"]
            [call] = tap.tool_calls_written("deploy")
            if era == "handshake":
                # 2025-11-25: the tools say which need a task (listed once), and the client asks for one.
                assert "task" in call["params"]
                assert methods(tap).index("tools/list") < methods(tap).index("tools/call")
            else:
                assert "task" not in call["params"]  # the server decides
            assert tap.requests_written("tasks/get")

    run(body)


def test_the_tools_are_listed_once_to_learn_which_need_a_task() -> None:
    async def body() -> None:
        async with connected("handshake") as (client, tap):
            await client.list_tools()
            assert texts(await client.call_tool("deploy", {"steps": 1})) == ["worked 1 steps"]
            assert texts(await client.call_tool("work", {"steps": 1})) == ["worked 1 steps inline"]
            assert ["task" in call["params"] for call in tap.tool_calls_written("deploy")] == [True]
            assert ["task" in call["params"] for call in tap.tool_calls_written("work")] == [False]
            assert len(tap.requests_written("tools/list")) == 1

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_start_task_on_a_tool_that_takes_no_task_is_a_plain_call_behind_the_handle(era: str) -> None:
    async def body() -> None:
        async with connected(era) as (client, tap):
            task = await client.start_task("plain", {"steps": 1})
            assert texts(await task) == ["worked 1 steps inline"]
            assert task.task_id is None and task.state.status == "completed"
            [call] = tap.tool_calls_written("plain")
            assert "task" not in call["params"]  # 2025-11-25: MUST NOT ask for a task here
            assert not tap.requests_written("tasks/get")

    run(body)


# -- questions -----------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
def test_a_tasks_question_goes_to_the_elicitation_handler_with_the_task_named(era: str) -> None:
    async def body() -> None:
        form = Form()
        async with connected(era, elicitation=form) as (client, tap):
            task = await client.start_task("ask")
            assert texts(await task) == ["hello Ada"]
            [asked] = form.asked
            assert asked["message"] == "Your name?"
            assert asked["_meta"][RELATED] == {"taskId": task.task_id}
            if era == "handshake":
                # The question came as a request on the tasks/result stream, answered as one.
                [question] = tap.requests_received("elicitation/create")
                [answer] = tap.responses_written(question["id"])
                assert answer["result"] == {"action": "accept", "content": {"name": "Ada"}}
            else:
                [update] = tap.requests_written("tasks/update")
                assert update["params"]["taskId"] == task.task_id
                assert update["params"]["inputResponses"] == {"name": {"action": "accept", "content": {"name": "Ada"}}}

    run(body)


def test_a_question_still_listed_after_its_answer_is_not_asked_again() -> None:
    """SEP-2663: tasks/update is eventually consistent; the client dedupes inputRequests by key."""

    async def body() -> None:
        form = Form()
        async with connected("stateless", "--lazy", elicitation=form) as (client, tap):
            assert texts(await client.call_tool("ask")) == ["hello Ada"]
            gets = [m for m in tap.received if isinstance(m.get("result"), dict) and "inputRequests" in m["result"]]
            assert len(gets) >= 2, "the server showed the question again after the answer"
            assert len(form.asked) == 1
            assert len(tap.requests_written("tasks/update")) == 1

    run(body)


# -- how a task ends -----------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
def test_cancel_sends_tasks_cancel_and_the_task_ends_cancelled(era: str) -> None:
    """CN-04: a task is cancelled with tasks/cancel, never notifications/cancelled."""

    async def body() -> None:
        async with connected(era) as (client, tap):
            task = await client.start_task("wait")
            await task.status()
            await task.cancel()
            with pytest.raises(TaskCancelled, match="cancelled by request"):
                await task
            assert task.state.status == "cancelled"
            [cancel] = tap.requests_written("tasks/cancel")
            assert cancel["params"]["taskId"] == task.task_id
            assert tap.notifications_written("notifications/cancelled") == []

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_cancelling_a_call_that_became_a_task_cancels_the_task(era: str) -> None:
    async def body() -> None:
        async with connected(era) as (client, tap):
            await client.list_tools()
            started = asyncio.Event()
            call = asyncio.ensure_future(client.call_tool("wait"))

            def seen_waiting(task: ToolTask) -> None:
                if task.state.status_message == "waiting":
                    started.set()

            await _first_task(client, seen_waiting)
            await started.wait()
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            [cancel] = tap.requests_written("tasks/cancel")
            assert cancel["params"]["taskId"] == tap.requests_written("tasks/get")[0]["params"]["taskId"]

    run(body)


async def _first_task(client: Client, watcher: Any) -> ToolTask:
    """The first task the client follows, once there is one, with ``watcher`` attached."""
    while not client.tasks.running:  # noqa: ASYNC110 - plain state: the call is in flight
        await asyncio.sleep(0.001)
    task = next(iter(client.tasks.running.values()))
    task.watch(watcher)
    return task


@pytest.mark.parametrize("era", ERAS)
def test_a_task_that_fails_raises_task_failed_with_its_json_rpc_error(era: str) -> None:
    async def body() -> None:
        async with connected(era) as (client, _tap):
            with pytest.raises(TaskFailed) as failed:
                await client.call_tool("fail")
            assert (failed.value.code, failed.value.message) == (-32000, "the disk is full")
            assert isinstance(failed.value, RequestError)  # callers of call_tool catch it as before
            assert failed.value.state.status == "failed"

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_a_tools_own_error_is_a_result_with_is_error(era: str) -> None:
    """2025-11-25 marks such a task failed, the extension completed: the caller sees the same result."""

    async def body() -> None:
        async with connected(era) as (client, _tap):
            task = await client.start_task("oops")
            result = await task
            assert result.is_error is True and texts(result) == ["no such thing"]
            assert task.state.status == ("failed" if era == "handshake" else "completed")

    run(body)


def test_a_status_notification_wakes_the_follower_before_its_next_poll() -> None:
    """The server suggests polling once a minute; the task ends after 50 ms and says so."""

    async def body() -> None:
        async with connected("handshake", "--poll-ms", "60000") as (client, tap):
            task = await client.start_task("tell")
            assert texts(await task) == ["told"]
            assert tap.notifications_received("notifications/tasks/status")
            assert tap.requests_written("tasks/get") == []  # no poll was due yet

    run(body)


# -- what the client declares, and the routing header --------------------------------------------


def test_the_extension_is_declared_on_stateless_requests_and_not_in_initialize() -> None:
    async def body() -> None:
        async with connected("handshake") as (_client, tap):
            [initialize] = tap.requests_written("initialize")
            assert "extensions" not in initialize["params"]["capabilities"]
            assert "tasks" not in initialize["params"]["capabilities"]  # we host no tasks (receiver side)
        async with connected("stateless") as (client, tap):
            await client.call_tool("work", {"steps": 1})
            for request in tap.written:
                if "method" in request and "id" in request:
                    declared = request["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
                    assert declared["extensions"] == {EXTENSION: {}}

    run(body)


def test_tasks_requests_over_http_name_the_task_in_mcp_name() -> None:
    """SEP-2663 §Routing Headers: Mcp-Name carries params.taskId; Mcp-Method the method."""

    async def body() -> None:
        app = WireHttpApp()
        async with http_client(app, elicitation=Form()) as client:
            task = await client.start_task("ask")
            await task
            wait = await client.start_task("wait")
            await wait.cancel()
            with pytest.raises(TaskCancelled):
                await wait
        for method in ("tasks/get", "tasks/update", "tasks/cancel"):
            posts = app.posted(method)
            assert posts, method
            for headers, message in posts:
                assert headers["mcp-method"] == method
                assert headers["mcp-name"] == message["params"]["taskId"]

    run(body)


# -- the task's state as read from the wire ------------------------------------------------------


def test_a_task_reads_both_revisions_spellings() -> None:
    old = TaskState.from_wire({"taskId": "a", "status": "working", "ttl": 60000, "pollInterval": 500}, "t")
    new = TaskState.from_wire({"taskId": "a", "status": "working", "ttlMs": 60000, "pollIntervalMs": 500}, "t")
    assert old == new and (old.ttl_ms, old.poll_interval_ms) == (60000, 500)


@pytest.mark.parametrize(
    "value",
    [None, [], {"status": "working"}, {"taskId": "", "status": "working"}, {"taskId": "a", "status": "done"}],
)
def test_a_malformed_task_is_the_servers_fault(value: Any) -> None:
    with pytest.raises(RemoteProtocolError, match="tasks/get"):
        TaskState.from_wire(value, "tasks/get")
