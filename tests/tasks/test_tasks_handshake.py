"""Tasks as 2025-11-25 has them (tasks.mdx, experimental), in a session over real HTTP.

The client asks for a task with ``params.task``; ``tasks/result`` blocks until the task ends
and relays the task's questions on its own stream (``elicitation/create`` with the
related-task ``_meta``); progress keeps flowing on the call's progress token."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx2
from _tasks_server import Probe, tasks_server
from _wire import Session

from backchannel import Server
from backchannel.testing import run, serve_on_loopback

RELATED = "io.modelcontextprotocol/related-task"


@contextlib.asynccontextmanager
async def session(server: Server, **headers: str) -> AsyncIterator[tuple[Session, httpx2.AsyncClient, str]]:
    async with serve_on_loopback(server.http_app()) as base, httpx2.AsyncClient(timeout=10) as http:
        client = Session(http, base + "/mcp", **headers)
        await client.open()
        yield client, http, base + "/mcp"


def test_the_server_declares_tasks_and_each_tools_task_support() -> None:
    async def body() -> None:
        async with serve_on_loopback(tasks_server().http_app()) as base, httpx2.AsyncClient(timeout=10) as http:
            client = Session(http, base + "/mcp")
            initialized = await client.open()
            assert initialized["capabilities"]["tasks"] == {
                "cancel": {},
                "list": {},
                "requests": {"tools": {"call": {}}},
            }
            assert "extensions" not in initialized["capabilities"]  # the extension is not 2025-11-25's
            tools = {t["name"]: t for t in (await client.call("tools/list", {}))["tools"]}
            assert tools["hold"]["execution"] == {"taskSupport": "required"}
            assert tools["steps"]["execution"] == {"taskSupport": "optional"}
            assert "execution" not in tools["plain"]
            # A required-task tool called plainly, and a task asked of a tool without one: -32601.
            assert (await client.send("tools/call", {"name": "hold", "arguments": {}}))["error"]["code"] == -32601
            asked = {"name": "plain", "arguments": {"text": "x"}, "task": {"ttl": 1000}}
            assert (await client.send("tools/call", asked))["error"]["code"] == -32601
            assert (await client.send("tasks/update", {"taskId": "x", "inputResponses": {}}))["error"]["code"] == -32601
            inline = await client.call("tools/call", {"name": "quick", "arguments": {"text": "inline"}})
            assert inline == {"content": [{"type": "text", "text": "inline"}]}

    run(body)


def test_tasks_result_relays_each_question_and_progress_flows_on_the_token() -> None:
    async def body() -> None:
        async with session(tasks_server()) as (client, _, _):
            await client.call("logging/setLevel", {"level": "info"})
            answers = iter(["red", "green"])
            client.answer = lambda request: {"action": "accept", "content": {"answer": next(answers)}}
            params = {
                "name": "steps",
                "arguments": {"rounds": 2},
                "task": {"ttl": 60_000},
                "_meta": {"progressToken": "p"},
            }
            created = (await client.call("tools/call", params))["task"]
            assert created["status"] == "working" and created["ttl"] == 60_000
            assert isinstance(created["pollInterval"], int) and "resultType" not in created
            task_id = created["taskId"]
            polled = await client.call("tasks/get", {"taskId": task_id})
            assert polled["taskId"] == task_id and "result" not in polled

            result = await client.call("tasks/result", {"taskId": task_id})
            assert result["content"] == [{"type": "text", "text": "red, green @w0"}]
            assert result["_meta"][RELATED] == {"taskId": task_id}
            # Both questions came on the tasks/result stream, tied to the task.
            assert [q["params"]["message"] for q in client.asked] == ["Question 1?", "Question 2?"]
            assert all(q["method"] == "elicitation/create" for q in client.asked)
            assert all(q["params"]["_meta"][RELATED] == {"taskId": task_id} for q in client.asked)
            progress = [n["params"] for n in client.notifications if n["method"] == "notifications/progress"]
            assert [p["progress"] for p in progress][-2:] == [3, 4]  # those sent while the stream was open
            assert all(p["progressToken"] == "p" and p["_meta"][RELATED] == {"taskId": task_id} for p in progress)
            logs = [n["params"]["data"] for n in client.notifications if n["method"] == "notifications/message"]
            assert logs == ["answer 1 was red", "answer 2 was green"]  # ctx.log from the task, on its stream
            statuses = [
                n["params"]["status"] for n in client.notifications if n["method"] == "notifications/tasks/status"
            ]
            assert statuses[-1] == "completed"

            done = await client.call("tasks/get", {"taskId": task_id})
            assert done["status"] == "completed" and "statusMessage" not in done  # progress notes end with the work
            listed = await client.call("tasks/list", {})
            assert [t["taskId"] for t in listed["tasks"]] == [task_id]

    run(body)


def test_errors_come_back_from_tasks_result_as_the_call_would_have_answered() -> None:
    async def body() -> None:
        async with session(tasks_server()) as (client, _, _):
            created = (await client.call("tools/call", {"name": "tool_error", "arguments": {}, "task": {}}))["task"]
            result = await client.call("tasks/result", {"taskId": created["taskId"]})
            assert result["isError"] is True and result["content"][0]["text"] == "the tool saw a problem"
            failed = await client.call("tasks/get", {"taskId": created["taskId"]})
            assert failed["status"] == "failed"  # 2025-11-25: a tool's isError result fails the task
            assert failed["statusMessage"] == "Tool execution failed: the tool saw a problem"

            created = (await client.call("tools/call", {"name": "protocol_error", "arguments": {}, "task": {}}))["task"]
            error = (await client.send("tasks/result", {"taskId": created["taskId"]}))["error"]
            assert error == {
                "code": -32603,
                "message": "the service behind the tool is down",
                "data": {"service": "db"},
            }

    run(body)


def test_cancel_answers_the_cancelled_task_and_refuses_a_finished_one() -> None:
    async def body() -> None:
        probe = Probe()
        async with session(tasks_server(probe)) as (client, _, _):
            created = (await client.call("tools/call", {"name": "hold", "arguments": {}, "task": {}}))["task"]
            await probe.started.wait()
            cancelled = await client.call("tasks/cancel", {"taskId": created["taskId"]})
            assert cancelled["taskId"] == created["taskId"] and cancelled["status"] == "cancelled"
            await probe.cancelled.wait()
            again = await client.send("tasks/cancel", {"taskId": created["taskId"]})
            assert again["error"] == {
                "code": -32602,
                "message": "Cannot cancel task: already in terminal status 'cancelled'",
            }

    run(body)


def test_another_sessions_and_another_principals_tasks_are_not_found() -> None:
    async def authenticate(headers: dict[str, str]) -> str | None:
        return headers.get("authorization", "").removeprefix("Bearer ") or None

    async def body() -> None:
        server = tasks_server()
        app = server.http_app(authenticator=authenticate)
        async with serve_on_loopback(app) as base, httpx2.AsyncClient(timeout=10) as http:
            url = base + "/mcp"
            alice = Session(http, url, authorization="Bearer alice")
            alice_again = Session(http, url, authorization="Bearer alice")
            mallory = Session(http, url, authorization="Bearer mallory")
            for each in (alice, alice_again, mallory):
                await each.open()
            created = (await alice.call("tools/call", {"name": "quick", "arguments": {}, "task": {}}))["task"]
            for method in ("tasks/get", "tasks/result", "tasks/cancel"):
                refused = await mallory.send(method, {"taskId": created["taskId"]})
                assert refused["error"]["code"] == -32602, method
            assert (await mallory.call("tasks/list", {}))["tasks"] == []
            # The task is bound to the principal, not the session: alice's other session sees it.
            result = await alice_again.call("tasks/result", {"taskId": created["taskId"]})
            assert result["content"][0]["text"] == "done"

    run(body)


def test_a_task_whose_ttl_passed_is_not_found() -> None:
    async def body() -> None:
        probe = Probe()
        async with session(tasks_server(probe)) as (client, _, _):
            created = (await client.call("tools/call", {"name": "hold", "arguments": {}, "task": {"ttl": 200}}))["task"]
            assert created["ttl"] == 200  # the client's ttl, in milliseconds
            await probe.cancelled.wait()
            gone: dict[str, Any] = await client.send("tasks/get", {"taskId": created["taskId"]})
            assert gone["error"]["code"] == -32602

    run(body)
