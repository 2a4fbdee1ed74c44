"""Faults of a fleet, with real processes (issue #14, "Faults"): four workers, each its own
process on its own port (``fault_worker.py``), one ``redis-server``, nginx round-robin in front.

- A worker killed with ``kill -9`` while it runs a call: the client (ours, and the official
  Python SDK's) gets a clear JSON-RPC error for that call within 2 s of the kill, from the
  worker its stream reconnects to; another session is untouched, during and after.
- A message for an owner that no longer exists (the answer to a dead worker's question) is
  refused with an HTTP 4xx and a JSON-RPC error, not dropped in silence.
- Redis restarted mid-run: what needs it fails at once with a JSON-RPC error naming the shared
  state; service resumes by itself when it is back; no worker dies.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from _fault_fleet import FaultFleet, answer_of, fault_fleet
from _fleet import INITIALIZE, session_headers, sse_events
from mcp.client.client import Client as SdkClient
from mcp.shared.exceptions import MCPError as SdkError

from backchannel import Client
from backchannel.testing import run
from backchannel.types import meta as M
from backchannel.types.errors import RequestError

STATELESS = "2026-07-28"
#: The issue's bound on telling the client that the worker running its call is gone, from the kill.
DETECTED_WITHIN = 2.0
ACCEPT_NAME = {"action": "accept", "content": {"name": "grace"}}
ACCEPT_OK = {"action": "accept", "content": {"ok": True}}
GONE = "stopped before it answered"


@pytest.fixture(scope="module")
def running() -> Iterator[FaultFleet]:
    with fault_fleet(4) as fleet:
        yield fleet


@pytest.fixture
def fleet(running: FaultFleet) -> FaultFleet:
    running.revive()  # a worker an earlier test killed comes back on its port
    return running


def _pid(text: str) -> int:
    found = re.search(r"pid (\d+)", text)
    assert found is not None, text
    return int(found.group(1))


def _text(result: Any) -> str:
    assert not result.is_error, result
    return str(result.content[0].text)


async def _open(http: httpx2.AsyncClient, url: str) -> str:
    response = await http.post(url, json=INITIALIZE, headers=session_headers())
    assert response.status_code == 200, response.text
    session = response.headers["mcp-session-id"]
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await http.post(url, json=initialized, headers=session_headers(session))).status_code == 202
    return session


def _stateless(request_id: int, name: str, arguments: dict[str, Any], **extra: Any) -> dict[str, Any]:
    meta = {M.PROTOCOL_VERSION: STATELESS, M.CLIENT_CAPABILITIES: {"elicitation": {}}}
    params = {"name": name, "arguments": arguments, "_meta": meta, **extra}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def _stateless_headers(name: str) -> dict[str, str]:
    return {**session_headers(), "mcp-protocol-version": STATELESS, "mcp-method": "tools/call", "mcp-name": name}


def test_kill_9_of_the_worker_running_a_call_fails_it_within_2s_and_spares_another_session(
    fleet: FaultFleet,
) -> None:
    async def body() -> None:
        other_asked: asyncio.Queue[int] = asyncio.Queue()
        victim_asked: asyncio.Queue[int] = asyncio.Queue()
        release = asyncio.Event()
        other_pid = 0

        async def other_person(params: dict[str, Any]) -> dict[str, Any]:
            other_asked.put_nowait(_pid(params["message"]))
            await release.wait()  # its question stays open across the kill
            return ACCEPT_NAME

        async def victim_person(params: dict[str, Any]) -> dict[str, Any]:
            asker = _pid(params["message"])
            if asker != other_pid:
                victim_asked.put_nowait(asker)
                await release.wait()  # answered after the kill: to a worker that is gone
            return ACCEPT_NAME

        async with (
            Client.http(fleet.url, era="handshake", elicitation=other_person) as other,
            Client.http(fleet.url, era="handshake", elicitation=victim_person) as victim,
        ):
            other_call = asyncio.ensure_future(other.call_tool("ask", {}))
            other_pid = await asyncio.wait_for(other_asked.get(), 10)
            for _ in range(12):  # until the victim's call runs on another worker than the other's
                victim_call = asyncio.ensure_future(victim.call_tool("ask", {}))
                asked = asyncio.ensure_future(victim_asked.get())
                done, _ = await asyncio.wait({victim_call, asked}, timeout=10, return_when=asyncio.FIRST_COMPLETED)
                if asked in done:
                    break
                asked.cancel()
                assert _text(victim_call.result()) == f"accept:grace@{other_pid}"
            else:
                pytest.fail("no call of the victim's session ran on a worker of its own")
            victim_pid = asked.result()
            failed_at: list[float] = []
            victim_call.add_done_callback(lambda _: failed_at.append(time.monotonic()))

            killed_at = fleet.kill(victim_pid)  # its call's stream has started: the question is out
            release.set()
            during = [_text(await other.call_tool("pid", {})) for _ in range(4)]
            assert _text(await asyncio.wait_for(other_call, 10)) == f"accept:grace@{other_pid}"
            with pytest.raises(RequestError) as failure:
                await asyncio.wait_for(victim_call, 10)
            assert failure.value.code == -32603 and GONE in failure.value.message
            assert failed_at[0] - killed_at < DETECTED_WITHIN, f"{failed_at[0] - killed_at:.2f} s after the kill"

            after = [_text(await other.call_tool("pid", {})) for _ in range(4)]
            assert str(victim_pid) not in during + after
            assert _text(await victim.call_tool("pid", {})) != str(victim_pid)  # its session goes on
        survivors = [p for p in fleet.processes.values() if p.pid != victim_pid]
        assert all(process.poll() is None for process in survivors), fleet.logs()

    run(body, timeout=40)


def test_kill_9_fails_the_official_sdk_clients_call_within_2s(fleet: FaultFleet) -> None:
    async def body() -> None:
        progressed: asyncio.Queue[str] = asyncio.Queue()

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            progressed.put_nowait(message or "")

        async with SdkClient(fleet.url, mode="legacy") as client:
            call = asyncio.ensure_future(client.call_tool("hold", {}, progress_callback=on_progress))
            holder = _pid(await asyncio.wait_for(progressed.get(), 10))  # its stream has started
            failed_at: list[float] = []
            call.add_done_callback(lambda _: failed_at.append(time.monotonic()))
            killed_at = fleet.kill(holder)
            with pytest.raises(SdkError) as failure:
                await asyncio.wait_for(call, 10)
            assert failure.value.code == -32603 and GONE in failure.value.message
            assert failed_at[0] - killed_at < DETECTED_WITHIN, f"{failed_at[0] - killed_at:.2f} s after the kill"
            result = await client.call_tool("pid", {})  # the session goes on, on the workers left
            assert result.content[0].text != str(holder)  # type: ignore[union-attr]

    run(body, timeout=30)


def test_an_answer_for_a_worker_that_is_gone_is_refused_and_the_call_answered_for(fleet: FaultFleet) -> None:
    async def body() -> None:
        async with httpx2.AsyncClient(timeout=10) as http:
            session = await _open(http, fleet.url)
            call = {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "ask", "arguments": {}}}
            question: dict[str, Any] = {}
            last_id = ""
            async with http.stream("POST", fleet.url, json=call, headers=session_headers(session)) as response:
                async for chunk in response.aiter_text():
                    for event_id, message in sse_events(chunk):
                        last_id = event_id or last_id
                        question = message if message.get("method") == "elicitation/create" else question
                    if question:
                        break
            killed_at = fleet.kill(_pid(question["params"]["message"]))

            answer = {"jsonrpc": "2.0", "id": question["id"], "result": ACCEPT_NAME}
            refused = await http.post(fleet.url, json=answer, headers=session_headers(session))
            assert 400 <= refused.status_code < 500, refused.text
            error = refused.json()["error"]
            assert error["code"] == -32600 and repr(question["id"]) in error["message"]
            assert "has stopped" in error["message"]

            # The call itself is answered for, by whichever worker the client resumes on.
            resumed = await http.get(fleet.url, headers={**session_headers(session), "last-event-id": last_id})
            answered_at = time.monotonic()
            assert resumed.status_code == 200, resumed.text
            ((_, failure),) = sse_events(resumed.text)
            assert failure["id"] == 9 and failure["error"]["code"] == -32603 and GONE in failure["error"]["message"]
            assert answered_at - killed_at < DETECTED_WITHIN

    run(body, timeout=30)


def test_redis_restarted_mid_run_fails_what_needs_it_clearly_then_service_resumes(fleet: FaultFleet) -> None:
    async def body() -> None:
        async with (
            httpx2.AsyncClient(timeout=10) as http,
            Client.http(fleet.url, era="handshake", elicitation=lambda _: ACCEPT_NAME) as before,
        ):
            assert _text(await before.call_tool("ask", {})).startswith("accept:grace@")
            first = answer_of(
                await http.post(
                    fleet.url, json=_stateless(1, "deploy", {"target": "a"}), headers=_stateless_headers("deploy")
                )
            )
            (key,) = first["result"]["inputRequests"]
            replay = {"inputResponses": {key: ACCEPT_OK}, "requestState": first["result"]["requestState"]}

            fleet.redis.stop()
            for attempt in range(4):  # lands on each worker in turn; each answers at once, none hangs
                response = await asyncio.wait_for(http.post(fleet.url, json=INITIALIZE, headers=session_headers()), 5)
                assert response.status_code == 503 and response.headers["retry-after"], response.text
                error = response.json()["error"]
                assert error["code"] == -32603 and "shared state" in error["message"], (attempt, error)

                message = _stateless(2 + attempt, "deploy", {"target": "a"}, **replay)  # ctx.once needs the state
                response = await asyncio.wait_for(
                    http.post(fleet.url, json=message, headers=_stateless_headers("deploy")), 5
                )
                error = answer_of(response)["error"]
                assert error["code"] == -32603 and "shared state" in error["message"], (attempt, error)

                try:  # the open session: served where its replica is, else refused naming the state
                    await asyncio.wait_for(before.call_tool("pid", {}), 5)
                except RequestError as refused:
                    assert refused.code == -32603 and "shared state" in refused.message
            with pytest.raises(RequestError, match="shared state"):
                async with Client.http(fleet.url, era="handshake"):
                    pass
            assert fleet.ledger.read_text() == ""  # the work that needed the state never ran
            fleet.check_all_running()

            fleet.redis.start()  # empty: what the fleet kept there is gone
            deadline = time.monotonic() + 10
            while True:  # back by itself: four new sessions in a row, one per worker
                codes = [
                    (await http.post(fleet.url, json=INITIALIZE, headers=session_headers())).status_code
                    for _ in range(4)
                ]
                if codes == [200] * 4:
                    break
                assert time.monotonic() < deadline, f"the fleet did not take new sessions again: {codes}"
                await asyncio.sleep(0.1)

        async with Client.http(fleet.url, era="handshake", elicitation=lambda _: ACCEPT_NAME) as after:
            for _ in range(4):  # each answer POST follows its call's POST: nginx hands it to another
                # worker, which forwards it to the asker through Redis (its channel is back)
                assert _text(await asyncio.wait_for(after.call_tool("ask", {}), 5)).startswith("accept:grace@")
        async with Client.http(fleet.url, era="stateless", elicitation=lambda _: ACCEPT_OK) as stateless:
            assert _text(await stateless.call_tool("deploy", {"target": "b"})).startswith("deployed b by pid")
        assert fleet.ledger.read_text().split()[0] == "b"
        fleet.check_all_running()

    run(body, timeout=50)
