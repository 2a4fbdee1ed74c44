"""The tasks extension on the stateless wire (SEP-2663, 2026-07-28), one server over real HTTP.

Each test drives ``tools/call`` and ``tasks/get``/``update``/``cancel`` by hand (``_wire``) and
asserts what crosses the wire: the flat ``CreateTaskResult`` (``resultType: "task"``), the
``DetailedTask`` of each status, ack-only ``tasks/update`` and ``tasks/cancel``, and -32021
for a client that did not declare the extension."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx2
from _tasks_server import Probe, tasks_server
from _wire import Stateless

from backchannel import Server
from backchannel.testing import FakeClock, run, serve_on_loopback, within

TASK_FIELDS = {"taskId", "status", "result", "error", "inputRequests"}


@contextlib.asynccontextmanager
async def serving(server: Server, **options: Any) -> AsyncIterator[tuple[str, httpx2.AsyncClient]]:
    async with serve_on_loopback(server.http_app(**options)) as base, httpx2.AsyncClient(timeout=10) as http:
        yield base + "/mcp", http


def accept(answer: str) -> dict[str, Any]:
    return {"action": "accept", "content": {"answer": answer}}


def test_a_task_reports_progress_and_asks_twice_answered_by_two_tasks_update_rounds() -> None:
    async def body() -> None:
        async with serving(tasks_server()) as (url, http):
            client = Stateless(http, url)
            created = await client.call("tools/call", {"name": "steps", "arguments": {"rounds": 2}})
            assert created["resultType"] == "task" and created["status"] == "working"
            assert not TASK_FIELDS - {"taskId", "status"} & created.keys()  # no result, error or inputRequests
            assert isinstance(created["ttlMs"], int) and isinstance(created["pollIntervalMs"], int)
            task_id = created["taskId"]

            first = await client.until(task_id, lambda t: t["status"] == "input_required")
            (key1,) = first["inputRequests"]
            assert first["inputRequests"][key1]["method"] == "elicitation/create"
            assert first["inputRequests"][key1]["params"]["message"] == "Question 1?"
            assert first["statusMessage"] == "asking question 1"  # progress shows in the status message
            assert first["_meta"]["dev.backchannel/progress"] == {
                "progress": 1,
                "total": 4,
                "message": "asking question 1",
            }

            ack = await client.call("tasks/update", {"taskId": task_id, "inputResponses": {key1: accept("red")}})
            assert ack["resultType"] == "complete" and not TASK_FIELDS & ack.keys()

            second = await client.until(
                task_id, lambda t: t["status"] == "input_required" and key1 not in t["inputRequests"]
            )
            (key2,) = second["inputRequests"]
            assert key2 != key1  # keys are unique over the task's life
            assert second["inputRequests"][key2]["params"]["message"] == "Question 2?"
            # An answer to a key no longer outstanding is ignored, and still acknowledged.
            await client.call("tasks/update", {"taskId": task_id, "inputResponses": {key1: accept("ignored")}})
            assert (await client.call("tasks/get", {"taskId": task_id}))["inputRequests"].keys() == {key2}

            await client.call("tasks/update", {"taskId": task_id, "inputResponses": {key2: accept("green")}})
            done = await client.until(task_id, lambda t: t["status"] == "completed")
            assert done["result"] == {"resultType": "complete", "content": [{"type": "text", "text": "red, green @w0"}]}
            assert "inputRequests" not in done and "dev.backchannel/progress" not in done["_meta"]

    run(body)


def test_tool_errors_complete_and_protocol_errors_fail_with_the_error_inlined() -> None:
    async def body() -> None:
        async with serving(tasks_server()) as (url, http):
            client = Stateless(http, url)
            created = await client.call("tools/call", {"name": "tool_error", "arguments": {}})
            done = await client.until(created["taskId"], lambda t: t["status"] != "working")
            assert done["status"] == "completed" and done["result"]["isError"] is True
            assert "error" not in done

            created = await client.call("tools/call", {"name": "protocol_error", "arguments": {}})
            failed = await client.until(created["taskId"], lambda t: t["status"] != "working")
            assert failed["status"] == "failed" and "result" not in failed
            assert failed["error"] == {
                "code": -32603,
                "message": "the service behind the tool is down",
                "data": {"service": "db"},
            }
            assert failed["statusMessage"] == "Tool execution failed: the service behind the tool is down"

    run(body)


def test_cancel_is_an_ack_the_task_settles_cancelled_and_its_body_is_stopped() -> None:
    async def body() -> None:
        probe = Probe()
        async with serving(tasks_server(probe)) as (url, http):
            client = Stateless(http, url)
            created = await client.call("tools/call", {"name": "hold", "arguments": {}})
            await probe.started.wait()
            ack = await client.call("tasks/cancel", {"taskId": created["taskId"]})
            assert ack["resultType"] == "complete" and not TASK_FIELDS & ack.keys()
            await probe.cancelled.wait()
            task = await client.call("tasks/get", {"taskId": created["taskId"]})
            assert task["status"] == "cancelled" and "result" not in task
            # Cancelling a finished task is acknowledged the same way (idempotent, SEP-2663).
            again = await client.call("tasks/cancel", {"taskId": created["taskId"]})
            assert again["resultType"] == "complete"

    run(body)


def test_a_client_without_the_extension_gets_minus_32021_or_a_plain_result() -> None:
    async def body() -> None:
        async with serving(tasks_server()) as (url, http):
            with_tasks = Stateless(http, url)
            created = await with_tasks.call("tools/call", {"name": "quick", "arguments": {}})
            without = Stateless(http, url, capabilities={})
            refused = await without.send("tools/call", {"name": "hold", "arguments": {}})
            assert refused["error"]["code"] == -32021
            assert refused["error"]["data"] == {
                "requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}
            }
            inline = await without.call("tools/call", {"name": "quick", "arguments": {"text": "inline"}})
            assert inline["resultType"] == "complete" and inline["content"][0]["text"] == "inline"
            for method, params in [
                ("tasks/get", {"taskId": created["taskId"]}),
                ("tasks/update", {"taskId": created["taskId"], "inputResponses": {}}),
                ("tasks/cancel", {"taskId": created["taskId"]}),
            ]:
                assert (await without.send(method, params))["error"]["code"] == -32021, method
            # The 2025-11-25 methods are gone from this revision; the legacy task param is ignored.
            for method in ("tasks/result", "tasks/list"):
                assert (await with_tasks.send(method, {"taskId": created["taskId"]}))["error"]["code"] == -32601
            legacy = await with_tasks.call("tools/call", {"name": "plain", "arguments": {"text": "x"}, "task": {}})
            assert legacy["resultType"] == "complete" and "taskId" not in legacy
            discovered = await with_tasks.call("server/discover", {})
            assert discovered["capabilities"]["extensions"] == {"io.modelcontextprotocol/tasks": {}}
            assert "tasks" not in discovered["capabilities"]
            tools = {t["name"]: t for t in (await with_tasks.call("tools/list", {}))["tools"]}
            assert "execution" not in tools["hold"]  # 2026-07-28's Tool has no taskSupport: the server decides

    run(body)


def test_another_callers_task_id_is_not_found_for_every_tasks_method() -> None:
    async def authenticate(headers: dict[str, str]) -> str | None:
        token = headers.get("authorization", "")
        return token.removeprefix("Bearer ") or None

    async def body() -> None:
        async with serving(tasks_server(), authenticator=authenticate) as (url, http):
            alice = Stateless(http, url, authorization="Bearer alice")
            mallory = Stateless(http, url, authorization="Bearer mallory")
            created = await alice.call("tools/call", {"name": "steps", "arguments": {"rounds": 1}})
            task = await alice.until(created["taskId"], lambda t: t["status"] == "input_required")
            (key,) = task["inputRequests"]
            for method, params in [
                ("tasks/get", {"taskId": created["taskId"]}),
                ("tasks/update", {"taskId": created["taskId"], "inputResponses": {key: accept("mallory's")}}),
                ("tasks/cancel", {"taskId": created["taskId"]}),
            ]:
                refused = await mallory.send(method, params)
                assert refused["error"]["code"] == -32602, method
                assert refused["error"]["message"] == "Failed to retrieve task: Task not found"
            still = await alice.call("tasks/get", {"taskId": created["taskId"]})
            assert still["status"] == "input_required"  # neither answered nor cancelled by the other caller
            await alice.call("tasks/update", {"taskId": created["taskId"], "inputResponses": {key: accept("alice's")}})
            done = await alice.until(created["taskId"], lambda t: t["status"] == "completed")
            assert done["result"]["content"][0]["text"] == "alice's @w0"

    run(body)


def test_a_finished_task_and_its_key_expire_with_its_ttl() -> None:
    async def body() -> None:
        clock = FakeClock()
        server = tasks_server(clock=clock)
        server.tasks.ttl = 60.0
        async with serving(server) as (url, http):
            client = Stateless(http, url)
            created = await client.call("tools/call", {"name": "quick", "arguments": {}})
            assert created["ttlMs"] == 60_000
            await client.until(created["taskId"], lambda t: t["status"] == "completed")
            clock.advance(59.0)
            assert (await client.call("tasks/get", {"taskId": created["taskId"]}))["status"] == "completed"
            clock.advance(2.0)
            gone = await client.send("tasks/get", {"taskId": created["taskId"]})
            assert gone["error"]["code"] == -32602
            assert len(server.state) == 0  # type: ignore[arg-type]  # the key went with it (a MemoryStore)

    run(body)


def test_a_running_task_whose_ttl_passes_is_stopped_and_forgotten() -> None:
    async def body() -> None:
        probe = Probe()
        server = tasks_server(probe)
        server.tasks.ttl = 0.3
        async with serving(server) as (url, http):
            client = Stateless(http, url)
            created = await client.call("tools/call", {"name": "hold", "arguments": {}})
            assert created["ttlMs"] == 300
            await probe.started.wait()
            await probe.cancelled.wait()  # the work is stopped when its task expires
            await within(lambda: not server.tasks.running, "the runner to be let go")
            gone = await client.send("tasks/get", {"taskId": created["taskId"]})
            assert gone["error"]["code"] == -32602

    run(body)


def test_a_listen_stream_follows_the_callers_tasks_with_notifications_tasks() -> None:
    async def body() -> None:
        async with serving(tasks_server()) as (url, http):
            client = Stateless(http, url)
            mine = await client.call("tools/call", {"name": "steps", "arguments": {"rounds": 1}})
            await client.until(mine["taskId"], lambda t: t["status"] == "input_required")
            without = Stateless(http, url, capabilities={})
            refused = await without.send("subscriptions/listen", {"notifications": {"taskIds": [mine["taskId"]]}})
            assert refused["error"]["code"] == -32021
            asked = {"notifications": {"taskIds": [mine["taskId"], "someone-elses"]}}
            seen: list[dict[str, Any]] = []
            async for message in client.stream("subscriptions/listen", asked):
                seen.append(message)
                if message["method"] == "notifications/subscriptions/acknowledged":
                    assert message["params"]["notifications"] == {"taskIds": [mine["taskId"]]}  # only its own
                    (key,) = (await client.call("tasks/get", {"taskId": mine["taskId"]}))["inputRequests"]
                    answer = {"taskId": mine["taskId"], "inputResponses": {key: accept("blue")}}
                    await client.call("tasks/update", answer)
                elif message["params"]["status"] == "completed":
                    break
            tasks = [m["params"] for m in seen if m["method"] == "notifications/tasks"]
            assert [t["status"] for t in tasks] == ["working", "completed"]
            assert tasks[-1]["taskId"] == mine["taskId"]
            # a whole DetailedTask
            assert tasks[-1]["result"] == {"resultType": "complete", "content": [{"type": "text", "text": "blue @w0"}]}

    run(body)
