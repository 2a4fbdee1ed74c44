"""A Redis without persistence restarts, and ``ctx.once`` still runs its work once (issue #26,
item 2): two workers (``fault_worker.py``, each its own process), one ``redis-server`` run with
persistence off, nginx round-robin in front, stateless-era multi-round ``tools/call`` by hand.

The workers keep their sealing keys through the restart (and put them back into the keyring),
so a ``requestState`` sealed before it still opens; but the ``ctx.once`` results it relies on
are gone. Each state names the generation of the store its request began in, and the store
names its own: a retry from before the loss is refused with -32602 saying why, never run again.

- ``charge``: ``ctx.once`` first, then a question; its retry comes after the restart.
- ``deploy``: a question, then ``ctx.once``; the request completed before the restart, and its
  first state is replayed after it (a state sealed before the work ran).
- New requests after the restart are served, and run their work once.

And in one process: a server restarted with the same ``state_key`` opens its predecessor's
states, but its in-process store starts empty: the same refusal. A store that loses some
results and keeps its generation (Redis evicting keys) is caught by the state itself, which
names the results its request kept.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import pytest
import redis
from _fault_fleet import FaultFleet, answer_of, fault_fleet

from _services import RedisServer, redis_server
from backchannel import Context, Server
from backchannel.state.redis import RedisState
from backchannel.testing import run, serve_on_loopback
from backchannel.types import meta as M

STATELESS = "2026-07-28"
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
ACCEPT_OK = {"action": "accept", "content": {"ok": True}}
LOST = "requestState dates from before the server's state store lost its data"


def _call(request_id: int, tool: str, arguments: dict[str, Any], **extra: Any) -> dict[str, Any]:
    meta = {M.PROTOCOL_VERSION: STATELESS, M.CLIENT_CAPABILITIES: {"elicitation": {}}}
    params = {"name": tool, "arguments": arguments, "_meta": meta, **extra}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


async def _post(http: httpx2.AsyncClient, fleet: FaultFleet, message: dict[str, Any]) -> dict[str, Any]:
    """The answer to ``message``; while Redis is still coming back (503, or -32603 naming the
    shared state), the same request again, a bounded number of times."""
    headers = {**HEADERS, "mcp-protocol-version": STATELESS, "mcp-method": "tools/call"}
    headers["mcp-name"] = message["params"]["name"]
    for _ in range(50):
        response = await http.post(fleet.url, json=message, headers=headers)
        if response.status_code != 503:
            answer = answer_of(response)
            error = answer.get("error") or {}
            if "shared state" not in str(error.get("message", "")):
                return answer
        await asyncio.sleep(0.1)  # Redis restarting: a client retries later
    raise AssertionError(f"the fleet did not come back after the Redis restart:\n{fleet.logs()}")


def _answering(first: dict[str, Any]) -> dict[str, Any]:
    result = first["result"]
    assert result["resultType"] == "input_required", result
    (key,) = result["inputRequests"]
    return {"inputResponses": {key: ACCEPT_OK}, "requestState": result["requestState"]}


def test_a_state_sealed_before_redis_lost_its_once_results_is_refused_never_run_twice() -> None:
    with fault_fleet(2) as fleet:

        async def body() -> None:
            async with httpx2.AsyncClient(timeout=30) as http:
                charged = await _post(http, fleet, _call(1, "charge", {"amount": 5}))
                charge_retry = _answering(charged)  # the charge ran; the question waits
                deploy_first = _answering(await _post(http, fleet, _call(2, "deploy", {"target": "prod"})))
                deployed = await _post(http, fleet, _call(3, "deploy", {"target": "prod"}, **deploy_first))
                assert deployed["result"]["content"][0]["text"].startswith("deployed prod by pid ")
                assert len(fleet.ledger.read_text().splitlines()) == 2

                fleet.redis.restart()  # no persistence: it comes back empty

                late = await _post(http, fleet, _call(4, "charge", {"amount": 5}, **charge_retry))
                assert late.get("error", {}).get("code") == -32602, late
                assert late["error"]["message"].startswith(LOST)
                replayed = await _post(http, fleet, _call(5, "deploy", {"target": "prod"}, **deploy_first))
                assert replayed.get("error", {}).get("code") == -32602, replayed
                assert replayed["error"]["message"].startswith(LOST)
                ledger = fleet.ledger.read_text().splitlines()
                assert [line.split()[0] for line in ledger] == ["charge", "prod"], ledger  # each ran once

                # New requests are served on every worker, and run their work once.
                served: set[str] = set()
                for request_id in range(10, 20):
                    fresh = _answering(await _post(http, fleet, _call(request_id, "charge", {"amount": 7})))
                    done = await _post(http, fleet, _call(request_id + 100, "charge", {"amount": 7}, **fresh))
                    text = done["result"]["content"][0]["text"]
                    assert text.startswith("charged 7 by pid ") and "| accept |" in text, done
                    served |= {text.split(" |")[0].rsplit(" ", 1)[1], text.rsplit(" ", 1)[1]}  # (its two rounds)
                    if len(served) == 2:
                        break
                assert served == {str(pid) for pid in fleet.pids().values()}
                charges = [line for line in fleet.ledger.read_text().splitlines() if line.startswith("charge 7 ")]
                assert len(charges) == request_id - 9  # one run per request, its retry included

        run(body, timeout=90)
        fleet.check_all_running()


def test_a_server_restarted_with_the_same_key_refuses_its_predecessors_once_states() -> None:
    charges: list[int] = []
    form = {"type": "object", "properties": {"ok": {"type": "boolean"}}}

    def shop() -> Server:  # the same code, started again: the same key, a new store in memory
        server = Server("shop", state_key=b"k" * 32)

        @server.tool()
        async def charge(amount: int, ctx: Context) -> str:
            charged = await ctx.once("charge", lambda: charges.append(amount) or f"charge #{len(charges)}")
            answer = await ctx.elicit("Send the receipt?", form)
            return f"{charged} | {answer.action}"

        return server

    async def post(base: str, message: dict[str, Any]) -> dict[str, Any]:
        headers = {**HEADERS, "mcp-protocol-version": STATELESS, "mcp-method": "tools/call", "mcp-name": "charge"}
        async with httpx2.AsyncClient(timeout=10) as http:
            return answer_of(await http.post(base + "/mcp", json=message, headers=headers))

    async def body() -> None:
        async with serve_on_loopback(shop().http_app()) as base:
            retry = _answering(await post(base, _call(1, "charge", {"amount": 5})))
        async with serve_on_loopback(shop().http_app()) as base:
            late = await post(base, _call(2, "charge", {"amount": 5}, **retry))
            assert late.get("error", {}).get("code") == -32602, late
            assert late["error"]["message"].startswith(LOST)
            fresh = _answering(await post(base, _call(3, "charge", {"amount": 6})))
            done = await post(base, _call(4, "charge", {"amount": 6}, **fresh))
            assert done["result"]["content"][0]["text"] == "charge #2 | accept"
        assert charges == [5, 6]  # each charge once

    run(body)


def test_a_result_evicted_under_a_live_generation_is_refused_too(fleet_redis: RedisServer) -> None:
    charges: list[int] = []
    form = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    server = Server("shop")

    @server.tool()
    async def charge(amount: int, ctx: Context) -> str:
        charged = await ctx.once("charge", lambda: charges.append(amount) or f"charge #{len(charges)}")
        answer = await ctx.elicit("Send the receipt?", form)
        return f"{charged} | {answer.action}"

    async def post(base: str, message: dict[str, Any]) -> dict[str, Any]:
        headers = {**HEADERS, "mcp-protocol-version": STATELESS, "mcp-method": "tools/call", "mcp-name": "charge"}
        async with httpx2.AsyncClient(timeout=10) as http:
            return answer_of(await http.post(base + "/mcp", json=message, headers=headers))

    async def body() -> None:
        with redis.Redis.from_url(fleet_redis.url) as client:
            client.flushall()
        async with serve_on_loopback(server.http_app(redis=fleet_redis.url)) as base:
            retry = _answering(await post(base, _call(1, "charge", {"amount": 5})))
            with redis.Redis.from_url(fleet_redis.url) as client:  # evicted: the results, nothing else
                evicted = [key for key in client.scan_iter("bc:once:*")]
                assert evicted and client.delete(*evicted) == len(evicted)
            late = await post(base, _call(2, "charge", {"amount": 5}, **retry))
            assert late.get("error", {}).get("code") == -32602, late
            assert late["error"]["message"].startswith(
                "the result of ctx.once('charge') this requestState relies on is gone from the server's state store"
            )
        assert charges == [5]

    run(body)


# The first state of a request that asks before any ctx.once names the generation the worker's
# heartbeat saw lately, read with each renewal of its lease (state/generation.py): no Redis read
# of its own. These workers renew every 30 s, so only the join's read and the rules below count.
LONG_BEAT = {"heartbeat": 30.0, "lease": 60.0}


def _store(deploys: list[str]) -> Server:
    server = Server("store")
    form = {"type": "object", "properties": {"ok": {"type": "boolean"}}}

    @server.tool()
    async def deploy(target: str, ctx: Context) -> str:  # a question, then the work
        answer = await ctx.elicit(f"Deploy {target}?", form)
        return await ctx.once("deploy", lambda: deploys.append(target) or f"deployed {target}") + f" | {answer.action}"

    @server.tool()
    async def charge(amount: int, ctx: Context) -> str:  # the work, then a question
        charged = await ctx.once("charge", lambda: f"charged {amount}")
        answer = await ctx.elicit("Send the receipt?", form)
        return f"{charged} | {answer.action}"

    return server


async def _post_to(base: str, message: dict[str, Any]) -> dict[str, Any]:
    headers = {**HEADERS, "mcp-protocol-version": STATELESS, "mcp-method": "tools/call"}
    headers["mcp-name"] = message["params"]["name"]
    async with httpx2.AsyncClient(timeout=10) as http:
        return answer_of(await http.post(base + "/mcp", json=message, headers=headers))


def _commands(client: redis.Redis) -> dict[str, int]:
    stats: dict[str, Any] = client.info("commandstats")  # type: ignore[assignment]
    return {name.removeprefix("cmdstat_"): int(value["calls"]) for name, value in stats.items()}


def test_a_stateless_ask_costs_redis_no_read_of_the_generation(fleet_redis: RedisServer) -> None:
    """Before: one GET of the store's generation per request's first InputRequiredResult."""
    deploys: list[str] = []
    server = _store(deploys)
    server.use_state(RedisState(fleet_redis.url, **LONG_BEAT))

    async def body() -> None:
        with redis.Redis.from_url(fleet_redis.url) as client:
            client.flushall()
            async with serve_on_loopback(server.http_app()) as base:
                await _post_to(base, _call(1, "deploy", {"target": "warm"}))  # joined the fleet: read once
                before = _commands(client)
                asks = 40
                for number in range(asks):
                    first = await _post_to(base, _call(10 + number, "deploy", {"target": "t"}))
                    assert first["result"]["resultType"] == "input_required", first
                after = _commands(client)
        gets = after.get("get", 0) - before.get("get", 0)
        # (Sharing's keyring check every 5 s reads twice, if the asks outlast it.)
        assert gets < asks // 4, f"{gets} GETs for {asks} first rounds"

    run(body)


def test_after_a_loss_redis_did_not_reveal_a_stale_generation_refuses_and_never_runs(
    fleet_redis: RedisServer,
) -> None:
    """The window this opens: for up to a lease after a FLUSHALL (no connection lost), a request's
    first state may name the old generation; its ctx.once is refused, and nothing runs twice."""
    deploys: list[str] = []
    server = _store(deploys)
    server.use_state(RedisState(fleet_redis.url, **LONG_BEAT))

    async def body() -> None:
        with redis.Redis.from_url(fleet_redis.url) as client:
            client.flushall()
            async with serve_on_loopback(server.http_app()) as base:
                done_first = _answering(await _post_to(base, _call(1, "deploy", {"target": "a"})))
                done = await _post_to(base, _call(2, "deploy", {"target": "a"}, **done_first))
                assert done["result"]["content"][0]["text"] == "deployed a | accept", done

                for _ in range(3):
                    client.flushall()  # everything lost, and the worker's connections still up
                    stale_first = _answering(await _post_to(base, _call(3, "deploy", {"target": "b"})))
                    if not client.exists("bc:store-generation"):  # no worker read the store since
                        break  # (else its keyring check, every 5 s, did just then: once more)
                else:
                    pytest.fail("the store's generation was read again within every attempt")
                stale = await _post_to(base, _call(4, "deploy", {"target": "b"}, **stale_first))
                assert stale.get("error", {}).get("code") == -32602, stale
                assert stale["error"]["message"].startswith(LOST)
                replayed = await _post_to(base, _call(5, "deploy", {"target": "a"}, **done_first))
                assert replayed.get("error", {}).get("code") == -32602, replayed  # its work ran: not again

                # ctx.once read the new generation: requests begun from now on are served.
                fresh_first = _answering(await _post_to(base, _call(6, "deploy", {"target": "c"})))
                fresh = await _post_to(base, _call(7, "deploy", {"target": "c"}, **fresh_first))
                assert fresh["result"]["content"][0]["text"] == "deployed c | accept", fresh
        assert deploys == ["a", "c"]

    run(body)


def test_a_request_begun_after_redis_restarted_empty_names_the_new_generation() -> None:
    """The window closed: the worker finds its connection to Redis lost, so the first state of a
    request begun after the restart reads the store (a new generation), and its work runs."""
    deploys: list[str] = []
    server = _store(deploys)

    async def body(service: RedisServer) -> None:
        server.use_state(RedisState(service.url, **LONG_BEAT))
        async with serve_on_loopback(server.http_app()) as base:
            before = _answering(await _post_to(base, _call(1, "deploy", {"target": "a"})))
            await asyncio.to_thread(service.restart)  # the worker's loop runs on: it hears Redis go
            after_first = _answering(await _post_to(base, _call(2, "deploy", {"target": "b"})))
            after = await _post_to(base, _call(3, "deploy", {"target": "b"}, **after_first))
            assert "result" in after, after
            assert after["result"]["content"][0]["text"] == "deployed b | accept", after
            late = await _post_to(base, _call(4, "deploy", {"target": "a"}, **before))
            assert late.get("error", {}).get("code") == -32602, late  # begun before: refused
        assert deploys == ["b"]

    with redis_server() as service:
        run(lambda: body(service))
