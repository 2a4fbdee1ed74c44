"""Handshake-era sessions served by a fleet of workers in one process (``MemoryHub``): every
request of a session lands on another worker than the one before, and the reverse channel
holds. The same routing runs across processes with Redis (``test_fleet_redis.py``)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx2
from _fleet import HANDSHAKE, RoundRobin, Worker, fleet_server, open_session, post, session_headers, sse_events

from backchannel import Client
from backchannel.protocol.events import ProgressReceived
from backchannel.state.memory import MemoryState
from backchannel.state.shared import SharedState
from backchannel.testing import run, serve_on_loopback, within


@contextlib.asynccontextmanager
async def fleet(
    new_state: Callable[[], SharedState], n: int = 2
) -> AsyncIterator[tuple[str, RoundRobin, list[Worker], list[Any]]]:
    workers = [Worker(f"w{i}") for i in range(n)]
    apps = [fleet_server(w, state=new_state()).http_app() for w in workers]
    balancer = RoundRobin(apps)
    async with serve_on_loopback(balancer) as base:
        yield base + "/mcp", balancer, workers, apps


def test_an_elicitation_answered_on_another_worker_reaches_the_tool(new_state: Callable[[], SharedState]) -> None:
    async def body() -> None:
        async with fleet(new_state, 3) as (url, balancer, workers, _):
            asked: list[str] = []

            def person(params: dict[str, Any]) -> dict[str, Any]:
                asked.append(params["message"])
                return {"action": "accept", "content": {"name": "ada"}}

            async with Client.http(url, era="handshake", elicitation=person) as client:
                for _ in range(3):  # each call, and each answer, lands on the next worker
                    result = await client.call_tool("ask", {})
                    assert result.content[0].text.startswith("accept:ada@")  # type: ignore[union-attr]
            assert asked == ["Your name?"] * 3
            # Round robin over three workers: the calls ran on more than one, and every answer POST
            # reached a worker other than the one that asked, which forwarded it.
            assert len([w for w in workers if w.ran]) >= 2
            assert balancer.answers_forwarded() == (3, 3)

    run(body)


def test_progress_and_logs_follow_the_session_across_workers(new_state: Callable[[], SharedState]) -> None:
    async def body() -> None:
        async with fleet(new_state) as (url, _, _, _):
            seen: list[float] = []
            logs: list[Any] = []

            def on_progress(event: ProgressReceived) -> None:
                seen.append(event.progress)

            async with Client.http(url, era="handshake", on_log=lambda p: logs.append(p["data"])) as client:
                result = await client.call_tool("count", {"to": 50}, on_progress=on_progress)
                assert result.content[0].text.startswith("counted 50@")  # type: ignore[union-attr]
                assert seen == [float(i) for i in range(1, 51)]
                await client.set_logging_level("debug")  # on one worker...
                for _ in range(2):  # ...honoured by both
                    await client.call_tool("say", {"text": "hi"})
                await within(lambda: len(logs) == 4)
                assert logs == ["debug: hi", "info: hi"] * 2

    run(body)


def test_a_cancel_that_lands_on_another_worker_stops_the_call(new_state: Callable[[], SharedState]) -> None:
    async def body() -> None:
        async with fleet(new_state) as (url, _, workers, _), Client.http(url, era="handshake") as client:
            call = asyncio.ensure_future(client.call_tool("wait", {}))
            await within(lambda: any(w.ran for w in workers))
            call.cancel()  # notifications/cancelled: a POST the balancer sends to the other worker
            with contextlib.suppress(asyncio.CancelledError):
                await call
            runner = next(w for w in workers if w.ran)
            await asyncio.wait_for(runner.cancelled.wait(), 5)
            assert not (await client.call_tool("say", {"text": "still here"})).is_error

    run(body)


def test_a_stream_resumes_on_another_worker_with_nothing_lost_or_repeated(new_state: Callable[[], SharedState]) -> None:
    async def body() -> None:
        async with fleet(new_state) as (url, _, _, _), httpx2.AsyncClient(timeout=10) as http:
            session = await open_session(http, url)
            call = {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "tools/call",
                "params": {"name": "ask", "arguments": {}, "_meta": {"progressToken": "p"}},
            }
            headers = session_headers(session)
            question: dict[str, Any] = {}
            last_id = ""
            async with http.stream("POST", url, content=json.dumps(call), headers=headers) as response:
                async for chunk in response.aiter_text():
                    for event_id, message in sse_events(chunk):
                        last_id = event_id or last_id
                        if message.get("method") == "elicitation/create":
                            question = message
                    if question:
                        break  # the client's connection drops here
            assert ":" in question["id"]  # the asking worker's name leads the id
            answer = {"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": {"name": "x"}}}
            assert (await post(http, url, session, answer)).status_code == 202
            resumed = await http.get(url, headers={**headers, "last-event-id": last_id})
            events = sse_events(resumed.text)
            assert [m["result"]["content"][0]["text"].split("@")[0] for _, m in events] == ["accept:x"]
            assert events[0][0].endswith("_2")  # the event after the question, none repeated

    run(body)


def test_a_worker_that_dies_mid_call_is_answered_for_by_the_one_the_client_resumes_on(
    new_state: Callable[[], SharedState],
) -> None:
    async def body() -> None:
        async with fleet(new_state) as (url, _, _, apps), httpx2.AsyncClient(timeout=10) as http:
            session = await open_session(http, url)
            call = {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "ask", "arguments": {}}}
            headers = session_headers(session)
            question: dict[str, Any] = {}
            last_id = ""
            async with http.stream("POST", url, content=json.dumps(call), headers=headers) as response:
                async for chunk in response.aiter_text():
                    for event_id, message in sse_events(chunk):
                        last_id = event_id or last_id
                        question = message if message.get("method") == "elicitation/create" else question
                    if question:
                        break
            owner = question["id"].split(":")[0]
            (dead,) = [app.state for app in apps if app.state.worker_id == owner]
            if isinstance(dead, MemoryState):
                dead.hub.kill(owner)  # as kill -9: no lease, no listener
            else:
                await dead.aclose()  # its lease and its listener end (kill -9 itself: test_fleet_faults.py)
            loop = asyncio.get_running_loop()
            started = loop.time()
            while True:  # the balancer alternates: resume until a live worker takes it
                resumed = await http.get(url, headers={**headers, "last-event-id": last_id})
                if resumed.status_code == 200 and sse_events(resumed.text):
                    break
            assert loop.time() - started < 2.0
            ((_, error),) = sse_events(resumed.text)
            assert error["id"] == 9 and error["error"]["code"] == -32603
            assert "stopped before it answered" in error["error"]["message"]

    run(body)


def test_the_get_stream_is_one_per_session_and_freed_by_a_dead_holder(new_state: Callable[[], SharedState]) -> None:
    async def body() -> None:
        async with fleet(new_state, 2) as (url, balancer, _, apps), httpx2.AsyncClient(timeout=10) as http:
            session = await open_session(http, url)
            headers = {
                "accept": "text/event-stream",
                "mcp-session-id": session,
                "mcp-protocol-version": HANDSHAKE,
            }
            async with http.stream("GET", url, headers=headers) as first:
                assert first.status_code == 200
                holder = apps[balancer.served[-1][0]].state
                second = await http.get(url, headers=headers)  # the other worker: refused
                assert second.status_code == 409
                if isinstance(holder, MemoryState):
                    holder.hub.kill(holder.worker_id)
                else:
                    await holder.aclose()
                for _ in range(2):  # whichever worker takes it now, the dead holder's claim is void
                    async with http.stream("GET", url, headers=headers) as third:
                        if balancer.served[-1][0] != apps.index(next(a for a in apps if a.state is holder)):
                            assert third.status_code == 200
                            return
            raise AssertionError("no live worker took the GET stream")

    run(body)


def test_the_roots_a_worker_fetched_are_in_the_record_for_every_other(new_state: Callable[[], SharedState]) -> None:
    async def body() -> None:
        async with fleet(new_state, 3) as (url, _, _, _):
            asked: list[int] = []
            current = ["alpha"]

            def roots() -> list[dict[str, str]]:
                asked.append(1)
                return [{"uri": f"file:///tmp/{name}", "name": name} for name in current]

            async with Client.http(url, era="handshake", roots=roots) as client:
                for _ in range(4):  # four calls over three workers: the client is asked once
                    assert (await client.call_tool("where", {})).content[0].text == "alpha"  # type: ignore[union-attr]
                assert len(asked) == 1
                current[:] = ["beta"]
                await client.set_roots(roots)  # notifications/roots/list_changed: every worker drops them
                # The change reaches the other workers as a Redis message: a request that lands on one
                # in the same instant may still see the old roots (docs/deploy.md), never for long.
                seen = [(await client.call_tool("where", {})).content[0].text for _ in range(12)]  # type: ignore[union-attr]
                assert seen[-6:] == ["beta"] * 6, seen
                assert len(asked) <= 4  # asked again, not on every call

    run(body)
