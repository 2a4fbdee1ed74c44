"""The stateless era across a fleet in one process (``MemoryHub``): a multi-round request whose
rounds land on different workers (one keyring), ``ctx.once`` run once whichever worker replays
it, and a list change on one worker reaching a ``subscriptions/listen`` stream held by another."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx2
from _fleet import RoundRobin, Worker, fleet_server

from backchannel import Client
from backchannel.state.shared import SharedState
from backchannel.testing import run, serve_on_loopback
from backchannel.types import meta as M

STATELESS = "2026-07-28"


@contextlib.asynccontextmanager
async def fleet(
    new_state: Callable[[], SharedState], n: int = 2
) -> AsyncIterator[tuple[str, RoundRobin, list[Worker]]]:
    workers = [Worker(f"w{i}") for i in range(n)]
    apps = [fleet_server(w, state=new_state()).http_app() for w in workers]
    balancer = RoundRobin(apps)
    async with serve_on_loopback(balancer) as base:
        yield base + "/mcp", balancer, workers


def _request(request_id: int, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    meta = {M.PROTOCOL_VERSION: STATELESS, M.CLIENT_CAPABILITIES: {"elicitation": {}}}
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": meta}}
    headers = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": STATELESS,
        "mcp-method": method,
    }
    if "name" in params:
        headers["mcp-name"] = params["name"]
    return message, headers


def _answers(response: httpx2.Response) -> list[dict[str, Any]]:
    if response.headers["content-type"].startswith("application/json"):
        return [response.json()]
    return [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: ")]


def test_a_multi_round_call_runs_its_work_once_whichever_worker_serves_each_round(
    new_state: Callable[[], SharedState],
) -> None:
    async def body() -> None:
        async with fleet(new_state, 3) as (url, balancer, workers), httpx2.AsyncClient(timeout=10) as http:
            message, headers = _request(1, "tools/call", {"name": "deploy", "arguments": {"target": "prod"}})
            (first,) = _answers(await http.post(url, json=message, headers=headers))
            result = first["result"]
            assert result["resultType"] == "input_required"
            (key,) = result["inputRequests"]
            retry = {
                **message["params"],
                "inputResponses": {key: {"action": "accept", "content": {"ok": True}}},
                "requestState": result["requestState"],
            }
            texts = set()
            for attempt in range(9):  # the same retry replayed: three times on each worker
                message, headers = _request(2 + attempt, "tools/call", retry)
                (answer,) = _answers(await http.post(url, json=message, headers=headers))
                texts.add(answer["result"]["content"][0]["text"])
            assert len({index for index, _, _ in balancer.served}) == 3
            ran = [entry for w in workers for entry in w.ran if entry.startswith("deploy ")]
            assert ran == ["deploy prod"]  # once, on one worker, for ten rounds over three workers
            assert len(texts) == 1 and texts.pop().startswith("deployed prod@")

    run(body)


def test_the_client_api_completes_a_multi_round_call_across_workers(new_state: Callable[[], SharedState]) -> None:
    async def body() -> None:
        async with fleet(new_state, 2) as (url, _, workers):
            async with Client.http(
                url, era="stateless", elicitation=lambda p: {"action": "accept", "content": {"ok": True}}
            ) as client:
                result = await client.call_tool("deploy", {"target": "staging"})
                assert result.content[0].text.startswith("deployed staging@")  # type: ignore[union-attr]
            assert sum(w.ran.count("deploy staging") for w in workers) == 1

    run(body)


def test_a_list_change_on_one_worker_reaches_a_listen_stream_on_another(new_state: Callable[[], SharedState]) -> None:
    async def body() -> None:
        async with fleet(new_state, 2) as (url, balancer, _), httpx2.AsyncClient(timeout=10) as http:
            listen, headers = _request(1, "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
            got: list[dict[str, Any]] = []
            acknowledged = asyncio.Event()
            changed = asyncio.Event()

            async def hold_stream() -> None:
                async with http.stream("POST", url, json=listen, headers=headers) as response:
                    async for line in response.aiter_lines():
                        if line.startswith("data: "):
                            got.append(json.loads(line[6:]))
                            acknowledged.set()
                            if got[-1].get("method") == "notifications/tools/list_changed":
                                changed.set()
                                return

            holder = asyncio.ensure_future(hold_stream())
            await asyncio.wait_for(acknowledged.wait(), 5)
            listener_worker = balancer.served[0][0]
            call, call_headers = _request(2, "tools/call", {"name": "add_tool", "arguments": {"name": "fresh"}})
            (answer,) = _answers(await http.post(url, json=call, headers=call_headers))
            assert balancer.served[1][0] != listener_worker  # the change was made on the other worker
            assert answer["result"]["content"][0]["text"].startswith("added fresh@")
            await asyncio.wait_for(changed.wait(), 5)
            holder.cancel()
            assert got[-1]["params"]["_meta"][M.SUBSCRIPTION_ID] == 1

    run(body)
