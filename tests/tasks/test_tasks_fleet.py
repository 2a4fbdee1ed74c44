"""Tasks across workers that share one state (an in-process ``MemoryHub``, and a real Redis).

A task runs on the worker that created it; every other request for it may land elsewhere. The
tests pick the worker of each request (``_dispatch.on``) and check what the spec asks of a
fleet: ``tasks/get`` finds a task the moment its creation is answered (SEP-2663 §Task Creation),
``tasks/update`` and ``tasks/cancel`` reach the worker running it, an update acknowledged on one
worker is what ``tasks/get`` on another sees, a task whose worker died is reported failed, and a
2025-11-25 ``tasks/result`` on one worker relays the questions of a task running on another."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx2
import pytest
from _dispatch import Pick, on
from _tasks_server import Probe, tasks_server
from _wire import Session, Stateless

from backchannel import Server
from backchannel.state.memory import MemoryHub
from backchannel.state.shared import SharedState
from backchannel.testing import run, serve_on_loopback

Backend = tuple[str, Callable[[], SharedState], MemoryHub | None]


@contextlib.asynccontextmanager
async def fleet(
    new_state: Backend, n: int, *, slow_writes: float = 0.0
) -> AsyncIterator[tuple[str, httpx2.AsyncClient, list[Server], list[Probe]]]:
    """``n`` workers; with ``slow_writes``, worker 0's writes to the state take that long (seconds),
    so that a change another worker relays reaches the store late unless it is waited for."""
    probes = [Probe(f"w{i}") for i in range(n)]
    states = [new_state[1]() for _ in range(n)]
    if slow_writes:
        states[0].put = _slowed(states[0].put, slow_writes)  # type: ignore[method-assign]
        states[0].add = _slowed(states[0].add, slow_writes)  # type: ignore[method-assign]
    servers = [tasks_server(probe, state=state) for probe, state in zip(probes, states, strict=True)]
    app = Pick([s.http_app() for s in servers])
    async with serve_on_loopback(app) as base, httpx2.AsyncClient(timeout=10) as http:
        yield base + "/mcp", http, servers, probes


def _slowed(write: Callable[..., Awaitable[Any]], delay: float) -> Callable[..., Awaitable[Any]]:
    async def slow_write(*args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(delay)
        return await write(*args, **kwargs)

    return slow_write


def accept(answer: str) -> dict[str, object]:
    return {"action": "accept", "content": {"answer": answer}}


def test_cancel_on_another_worker_stops_the_task_where_it_runs(new_state: Backend) -> None:
    async def body() -> None:
        async with fleet(new_state, 2) as (url, http, _, probes):
            client = Stateless(http, url)
            created = await client.call("tools/call", {"name": "hold", "arguments": {}}, **on(0))
            await probes[0].started.wait()
            await client.call("tasks/cancel", {"taskId": created["taskId"]}, **on(1))
            await probes[0].cancelled.wait()  # the body on worker 0 was cancelled
            for worker in (0, 1):
                task = await client.call("tasks/get", {"taskId": created["taskId"]}, **on(worker))
                assert task["status"] == "cancelled"

    run(body)


def test_an_update_acknowledged_on_one_worker_is_what_tasks_get_on_another_sees(new_state: Backend) -> None:
    async def body() -> None:
        async with fleet(new_state, 3, slow_writes=0.2) as (url, http, _, _):
            client = Stateless(http, url)
            created = await client.call("tools/call", {"name": "pair", "arguments": {}}, **on(0))
            task_id = created["taskId"]
            # Strong consistency: found on another worker as soon as the creation was answered.
            first = await client.call("tasks/get", {"taskId": task_id}, **on(1))
            assert first["taskId"] == task_id
            waiting = await client.until(task_id, lambda t: len(t.get("inputRequests", {})) == 2)
            key1, key2 = sorted(waiting["inputRequests"])
            await client.call("tasks/update", {"taskId": task_id, "inputResponses": {key1: accept("a")}}, **on(1))
            partial = await client.call("tasks/get", {"taskId": task_id}, **on(2))
            assert partial["status"] == "input_required" and partial["inputRequests"].keys() == {key2}
            await client.call("tasks/update", {"taskId": task_id, "inputResponses": {key2: accept("b")}}, **on(2))
            done = await client.until(task_id, lambda t: t["status"] == "completed")
            assert done["result"]["content"][0]["text"] in ("a + b @w0", "b + a @w0")

    run(body)


# In process only (the hub kills a worker); a real fleet's worker is killed in test_tasks_processes.py.
@pytest.mark.parametrize("new_state", ["memory"], indirect=True)
def test_a_task_whose_worker_died_is_reported_failed(new_state: Backend) -> None:

    async def body() -> None:
        hub = new_state[2]
        assert hub is not None
        async with fleet(new_state, 2) as (url, http, servers, probes):
            client = Stateless(http, url)
            created = await client.call("tools/call", {"name": "hold", "arguments": {}}, **on(0))
            await probes[0].started.wait()
            dead = servers[0].tasks.worker_id
            hub.kill(dead)  # as kill -9 would: its lease and its listeners are gone
            task = await client.call("tasks/get", {"taskId": created["taskId"]}, **on(1))
            assert task["status"] == "failed"
            assert task["error"]["code"] == -32603 and dead in task["error"]["message"]
            assert "stopped before the task finished" in task["statusMessage"]

    run(body)


def test_tasks_result_on_one_worker_relays_the_questions_of_a_task_on_another(new_state: Backend) -> None:
    async def body() -> None:
        async with fleet(new_state, 2) as (url, http, _, _):
            client = Session(http, url, **on(0))
            await client.open()
            answers = iter(["left", "right"])
            client.answer = lambda request: accept(next(answers))
            client.headers.update(on(1))
            created = (await client.call("tools/call", {"name": "steps", "arguments": {"rounds": 2}, "task": {}}))[
                "task"
            ]
            client.headers.update(on(0))  # the result is asked of worker 0; the answers go to worker 0 too
            result = await client.call("tasks/result", {"taskId": created["taskId"]})
            assert result["content"][0]["text"] == "left, right @w1"  # it ran on worker 1
            assert len(client.asked) == 2

    run(body)


def test_a_listen_stream_on_one_worker_hears_a_task_running_on_another(new_state: Backend) -> None:
    async def body() -> None:
        async with fleet(new_state, 2) as (url, http, _, probes):
            client = Stateless(http, url)
            created = await client.call("tools/call", {"name": "hold", "arguments": {}}, **on(0))
            await probes[0].started.wait()
            asked = {"notifications": {"taskIds": [created["taskId"]]}}
            statuses = []
            async for message in client.stream("subscriptions/listen", asked, **on(1)):
                if message["method"] == "notifications/subscriptions/acknowledged":
                    await client.call("tasks/cancel", {"taskId": created["taskId"]}, **on(0))
                elif message["method"] == "notifications/tasks":
                    statuses.append(message["params"]["status"])
                    break
            assert statuses == ["cancelled"]

    run(body)
