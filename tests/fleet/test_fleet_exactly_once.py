"""Exactly-once across worker processes, and a Redis that forgets what the fleet is done with
(issue #14): four workers (``fault_worker.py``, each its own process and port), one
``redis-server``, nginx round-robin in front.

- 1,000 replays of one ``requestState`` (a stateless-era multi-round ``tools/call`` whose tool
  does its work in ``ctx.once`` after a question), sent concurrently in batches and spread over
  the four workers: the work ran once (the tool appends a line to a file per run) and every
  replay got the same result.
- Every key has a TTL, and Redis returns to its baseline key count once the sessions end
  (DELETE) or expire (short TTLs: ``session_idle_timeout`` and the requestState's TTL).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from typing import Any

import httpx2
from _fault_fleet import answer_of, fault_fleet, key_count, keys_naming, keys_without_ttl

from backchannel import Client
from backchannel.testing import run
from backchannel.types import meta as M

STATELESS = "2026-07-28"
HANDSHAKE = "2025-11-25"
REPLAYS = 1000
BATCH = 50
ACCEPT_OK = {"action": "accept", "content": {"ok": True}}
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
DEPLOY_HEADERS = {**HEADERS, "mcp-protocol-version": STATELESS, "mcp-method": "tools/call", "mcp-name": "deploy"}


def _deploy(request_id: int, target: str, **extra: Any) -> dict[str, Any]:
    meta = {M.PROTOCOL_VERSION: STATELESS, M.CLIENT_CAPABILITIES: {"elicitation": {}}}
    params = {"name": "deploy", "arguments": {"target": target}, "_meta": meta, **extra}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def test_a_thousand_replays_of_one_request_state_over_four_workers_run_the_work_once() -> None:
    with fault_fleet(4) as fleet:

        async def body() -> None:
            limits = httpx2.Limits(max_connections=BATCH, max_keepalive_connections=BATCH)
            async with httpx2.AsyncClient(timeout=30, limits=limits) as http:
                first = answer_of(await http.post(fleet.url, json=_deploy(0, "prod"), headers=DEPLOY_HEADERS))
                result = first["result"]
                assert result["resultType"] == "input_required"
                (key,) = result["inputRequests"]
                replay = {"inputResponses": {key: ACCEPT_OK}, "requestState": result["requestState"]}

                async def one(request_id: int) -> str:
                    response = await http.post(
                        fleet.url, json=_deploy(request_id, "prod", **replay), headers=DEPLOY_HEADERS
                    )
                    answer = answer_of(response)
                    assert "result" in answer, answer
                    return str(answer["result"]["content"][0]["text"])

                texts: list[str] = []
                for start in range(1, REPLAYS + 1, BATCH):  # the first batch races for the work
                    texts += await asyncio.gather(*(one(i) for i in range(start, start + BATCH)))

            results = Counter(text.split(" | ")[0] for text in texts)
            served = Counter(text.split(" | served by pid ")[1] for text in texts)
            assert len(texts) == REPLAYS
            ((outcome, _),) = results.items()  # one result, for every replay
            assert outcome.startswith("deployed prod by pid ")
            assert set(served) == {str(pid) for pid in fleet.pids().values()}
            assert min(served.values()) >= REPLAYS // 8, served  # spread over all four
            assert fleet.ledger.read_text().splitlines() == [f"prod {outcome.rsplit(' ', 1)[1]}"]  # ran once

        run(body, timeout=60)
        fleet.check_all_running()


def test_redis_returns_to_its_baseline_key_count_once_sessions_end_or_expire() -> None:
    with fault_fleet(4, idle=3.0, state_ttl=1.0) as fleet:
        baseline = key_count(fleet.redis.url)  # the workers' leases and the keyring

        async def body() -> None:
            accept = {"action": "accept", "content": {"name": "ada"}}
            for _ in range(2):  # sessions that end: our client sends DELETE as it closes
                async with Client.http(fleet.url, era="handshake", elicitation=lambda _: accept) as client:
                    session_id = client.transport.session_id  # type: ignore[attr-defined]
                    for _ in range(3):  # answers forwarded between workers; streams in the log
                        result = await client.call_tool("ask", {})
                        assert result.content[0].text.startswith("accept:ada@")  # type: ignore[union-attr]
                    assert keys_naming(fleet.redis.url, session_id)  # its record, its streams
                # Gone with the DELETE (the other workers' replicas drop their streams as they hear
                # of it), well before the 3 s TTL would have taken them.
                deadline = time.monotonic() + 1.0
                while keys_naming(fleet.redis.url, session_id):
                    assert time.monotonic() < deadline, keys_naming(fleet.redis.url, session_id)
                    await asyncio.sleep(0.02)
            async with httpx2.AsyncClient(timeout=10) as http:  # a session left to expire: no DELETE
                await _leave_mid_call(http, fleet.url)
            # Stateless era: a multi-round call whose ctx.once result is kept until its state expires.
            async with Client.http(fleet.url, era="stateless", elicitation=lambda _: ACCEPT_OK) as client:
                result = await client.call_tool("deploy", {"target": "x"})
                assert result.content[0].text.startswith("deployed x")  # type: ignore[union-attr]

        run(body, timeout=30)
        assert key_count(fleet.redis.url) > baseline  # the expiring session, its stream, the once result
        assert keys_without_ttl(fleet.redis.url) == []  # every key expires by itself
        deadline = time.monotonic() + 20
        while key_count(fleet.redis.url) > baseline:  # Redis expires keys itself: nothing to wait on but it
            assert time.monotonic() < deadline, f"keys left: {key_count(fleet.redis.url)} > {baseline}"
            time.sleep(0.2)
        assert key_count(fleet.redis.url) == baseline
        fleet.check_all_running()


async def _leave_mid_call(http: httpx2.AsyncClient, url: str) -> None:
    """Open a session, start a call that streams, and go once its first event is in the log."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "t"}},
    }
    response = await http.post(url, json=initialize, headers=HEADERS)
    session = {**HEADERS, "mcp-session-id": response.headers["mcp-session-id"], "mcp-protocol-version": HANDSHAKE}
    await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
    params = {"name": "hold", "arguments": {}, "_meta": {"progressToken": "p"}}
    hold = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    async with http.stream("POST", url, json=hold, headers=session) as stream:
        async for chunk in stream.aiter_text():
            if "notifications/progress" in chunk:
                return
