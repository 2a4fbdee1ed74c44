"""``examples/tasks_server.py``, as ``docs/tasks.md`` tells it, on the stateless wire: ``release``
asks where while its call is open (a multi round-trip round), becomes a task at
``ctx.start_task()`` and asks for the approval through the task; ``export_orders`` is cancelled."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx2
from _wire import Stateless

from backchannel.testing import run, serve_on_loopback

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_the_examples_release_asks_first_then_runs_as_a_task_that_asks_again() -> None:
    sys.path.insert(0, str(EXAMPLES))
    try:
        import tasks_server  # examples/tasks_server.py
    finally:
        sys.path.remove(str(EXAMPLES))

    async def body() -> None:
        async with serve_on_loopback(tasks_server.server.http_app()) as base, httpx2.AsyncClient(timeout=10) as http:
            client = Stateless(http, base + "/mcp")
            call = {"name": "release", "arguments": {"version": "1.2"}}
            first = await client.call("tools/call", call)
            assert first["resultType"] == "input_required" and "taskId" not in first  # no task yet
            (key,) = first["inputRequests"]
            answer = {"action": "accept", "content": {"environment": "staging"}}
            retry = {**call, "inputResponses": {key: answer}, "requestState": first["requestState"]}
            created = await client.call("tools/call", retry)
            assert created["resultType"] == "task" and "requestState" not in created
            waiting = await client.until(created["taskId"], lambda t: t["status"] == "input_required")
            ((key, question),) = waiting["inputRequests"].items()
            assert question["params"]["message"] == "1.2 is built. Ship it to staging?"
            approval = {"action": "accept", "content": {"approve": True}}
            await client.call("tasks/update", {"taskId": created["taskId"], "inputResponses": {key: approval}})
            done = await client.until(created["taskId"], lambda t: t["status"] == "completed", timeout=8)
            assert done["result"]["content"][0]["text"] == f"1.2 is live on staging ({created['taskId']})"

            export = await client.call("tools/call", {"name": "export_orders", "arguments": {"month": "2026-11"}})
            await client.until(export["taskId"], lambda t: "statusMessage" in t)  # its first batch is out
            await client.call("tasks/cancel", {"taskId": export["taskId"]})
            assert (await client.call("tasks/get", {"taskId": export["taskId"]}))["status"] == "cancelled"

    run(body)
