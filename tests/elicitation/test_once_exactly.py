"""``ctx.once`` is exactly once for as long as a ``requestState`` that can replay it is valid
(issue 12, item 4; 2026-07-28 mrtr.mdx: a handler re-runs from the top on every retry).

The results live in the server's ``StateStore``, bounded per caller: a full bucket is a
clear -32603 and the work does not run, never a silent second run. Time is a fake clock
shared by the sealer and the store, so no test sleeps out a TTL.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from _elicit_wire import RawPeer, error_of, result_of, run

from backchannel import Context, Server
from backchannel.http_host.authenticator import BearerTokens
from backchannel.server.state import MemoryStore
from backchannel.state.sealer import StateSealer
from backchannel.types import meta as M

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "http"))

from _http_harness import BASE, modern_headers

FORM = {"type": "object", "properties": {"name": {"type": "string"}}}
CAPS = {M.CLIENT_CAPABILITIES: {"elicitation": {"form": {}}}}
TTL = 600.0
FULL = "exactly-once store is full for this caller"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def shop(clock: Clock, charges: list[str], **options: Any) -> Server:
    """``buy`` charges once, then asks two questions (so it runs three times in the stateless era)."""
    server = Server("shop", state=MemoryStore(clock=clock), state_ttl=TTL, **options)
    server.state_sealer = StateSealer(b"k" * 32, TTL, clock=clock)

    @server.tool()
    async def buy(item: str, ctx: Context, slow_after_charge: float = 0.0) -> str:
        receipt = await ctx.once("charge", lambda: charges.append(item) or f"receipt-{item}-{len(charges)}")
        clock.now += slow_after_charge  # work between the charge and the question
        first = await ctx.elicit("Ship to?", FORM, key="ship")
        second = await ctx.elicit("Gift note?", FORM, key="note")
        return f"{receipt}: {first.data['name']} / {second.data['name']}"  # type: ignore[index]

    return server


def accept(name: str) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": name}}


async def buy(peer: RawPeer, item: str = "book", **params: Any) -> dict[str, Any]:
    arguments = {"item": item, **params.pop("arguments", {})}
    return await peer.modern("tools/call", {"name": "buy", "arguments": arguments, **params}, **CAPS)


def test_ten_thousand_other_first_rounds_do_not_evict_a_valid_result() -> None:
    clock, charges = Clock(), []
    server = shop(clock, charges, once_limit=20_000)

    async def body() -> None:
        async with RawPeer(server) as peer:
            state = result_of(await buy(peer))["requestState"]
            # 10,001 other first rounds, each charging once, sent as one batch.
            others = [
                {
                    "jsonrpc": "2.0",
                    "id": f"other-{n}",
                    "method": "tools/call",
                    "params": {"name": "buy", "arguments": {"item": f"i{n}"}, "_meta": {**peer_envelope(), **CAPS}},
                }
                for n in range(10_001)
            ]
            peer.client_side.write(others)
            answered = 0
            while answered < len(others):
                batch = await peer.client_side.receive()
                assert batch is not None
                answered += sum(1 for item in batch if str(item.get("id", "")).startswith("other-"))
            assert len(charges) == 10_002
            clock.now += TTL - 1  # the first state is still valid
            replay = result_of(await buy(peer, inputResponses={"ship": accept("Ada")}, requestState=state))
            assert list(replay["inputRequests"]) == ["note"]
        assert charges.count("book") == 1  # the replay read the result back; the work did not run again

    run(body, timeout=120)


def peer_envelope() -> dict[str, Any]:
    return {M.PROTOCOL_VERSION: "2026-07-28"}


def test_replaying_an_old_valid_state_returns_the_stored_result_without_running_the_work() -> None:
    clock, charges = Clock(), []

    async def body() -> None:
        async with RawPeer(shop(clock, charges)) as peer:
            first = result_of(await buy(peer))
            clock.now += 300
            second = result_of(
                await buy(peer, inputResponses={"ship": accept("Ada")}, requestState=first["requestState"])
            )
            done = result_of(
                await buy(peer, inputResponses={"note": accept("Hi")}, requestState=second["requestState"])
            )
            assert done["content"][0]["text"] == "receipt-book-1: Ada / Hi"
            # Each replay re-runs the handler from the top; the charge is read back every time.
            for state in (first["requestState"], second["requestState"]):
                clock.now += 250  # the first state is 550 s old, then the second 500 s old: both valid
                answers = {"ship": accept("Ada"), "note": accept("Hi")}
                again = result_of(await buy(peer, inputResponses=answers, requestState=state))
                assert again["content"][0]["text"] == "receipt-book-1: Ada / Hi"
        assert charges == ["book"]

    run(body)


def test_after_expiry_the_state_itself_is_refused_so_nothing_runs_again() -> None:
    clock, charges = Clock(), []

    async def body() -> None:
        async with RawPeer(shop(clock, charges)) as peer:
            state = result_of(await buy(peer))["requestState"]
            clock.now += TTL + 1
            response = await buy(peer, inputResponses={"ship": accept("Ada")}, requestState=state)
            assert error_of(response)["code"] == -32602
            assert "expired" in error_of(response)["message"]
        assert charges == ["book"]

    run(body)


def test_a_state_never_outlives_the_result_it_would_replay() -> None:
    """Work that takes long between the charge and the question: the state sealed after it
    expires when the charge's result would be forgotten, not ``state_ttl`` after sealing."""
    clock, charges = Clock(), []

    async def body() -> None:
        async with RawPeer(shop(clock, charges)) as peer:
            state = result_of(await buy(peer, arguments={"slow_after_charge": 100.0}))["requestState"]
            clock.now += TTL - 100 + 6  # past the charge's result (and its grace), within TTL of the seal
            response = await buy(
                peer, arguments={"slow_after_charge": 100.0}, inputResponses={"ship": accept("A")}, requestState=state
            )
            assert "expired" in error_of(response)["message"]
        assert charges == ["book"]

    run(body)


def test_concurrent_replays_of_one_state_run_the_work_once() -> None:
    server = Server("shop")
    reached: list[int] = []
    all_reached = asyncio.Event()
    release = asyncio.Event()
    charges: list[str] = []

    async def charge() -> str:
        await release.wait()
        charges.append("x")
        return f"receipt-{len(charges)}"

    @server.tool()
    async def pay(ctx: Context) -> str:
        who = await ctx.elicit("Who pays?", FORM, key="who")  # the charge comes after a question
        reached.append(1)
        if len(reached) == 2:
            all_reached.set()
        receipt = await ctx.once("charge", charge)
        return f"{receipt} for {who.data['name']}"  # type: ignore[index]

    async def body() -> None:
        async with RawPeer(server) as peer:
            state = result_of(await peer.modern("tools/call", {"name": "pay", "arguments": {}}, **CAPS))["requestState"]
            retry = {"name": "pay", "arguments": {}, "inputResponses": {"who": accept("Ada")}, "requestState": state}
            envelope = {M.PROTOCOL_VERSION: "2026-07-28", **CAPS}
            peer.client_side.write(
                [
                    {
                        "jsonrpc": "2.0",
                        "id": f"replay-{n}",
                        "method": "tools/call",
                        "params": {**retry, "_meta": envelope},
                    }
                    for n in (1, 2)
                ]
            )
            await all_reached.wait()  # both replays are at the once call before the work ends
            release.set()
            answers: dict[str, dict[str, Any]] = {}
            while len(answers) < 2:
                batch = await peer.client_side.receive()
                assert batch is not None
                answers.update((item["id"], item) for item in batch if str(item.get("id")).startswith("replay-"))
        assert [result_of(answer)["content"][0]["text"] for answer in answers.values()] == ["receipt-1 for Ada"] * 2
        assert charges == ["x"]

    run(body)


@dataclass
class Receipt:
    number: int


def test_a_result_that_is_not_json_is_a_clear_error_and_is_not_run_again(caplog: pytest.LogCaptureFixture) -> None:
    server = Server("shop")
    charges: list[int] = []

    @server.tool()
    async def pay(ctx: Context) -> str:
        who = await ctx.elicit("Who pays?", FORM, key="who")
        receipt = await ctx.once("charge", lambda: charges.append(1) or Receipt(len(charges)))
        return f"{receipt} for {who.data['name']}"  # type: ignore[index]

    async def body() -> None:
        async with RawPeer(server) as peer:
            state = result_of(await peer.modern("tools/call", {"name": "pay", "arguments": {}}, **CAPS))["requestState"]
            retry = {"name": "pay", "arguments": {}, "inputResponses": {"who": accept("Ada")}, "requestState": state}
            for _ in range(2):
                assert error_of(await peer.modern("tools/call", retry, **CAPS))["code"] == -32603
        assert charges == [1]  # the replay did not charge again

    with caplog.at_level(logging.ERROR):
        run(body)
    logged = "\n".join(
        f"{record.getMessage()} {record.exc_info[1] if record.exc_info else ''}" for record in caplog.records
    )
    assert logged.count("ctx.once('charge') returned a Receipt, which the exactly-once store cannot keep") == 2


def test_work_that_raises_is_not_remembered_and_a_retry_runs_it() -> None:
    server = Server("shop")
    attempts: list[int] = []

    def charge() -> str:
        attempts.append(1)
        if len(attempts) == 1:
            raise RuntimeError("the card network is down")
        return "receipt"

    @server.tool()
    async def pay(ctx: Context) -> str:
        who = await ctx.elicit("Who pays?", FORM, key="who")
        return f"{await ctx.once('charge', charge)} for {who.data['name']}"  # type: ignore[index]

    async def body() -> None:
        async with RawPeer(server) as peer:
            state = result_of(await peer.modern("tools/call", {"name": "pay", "arguments": {}}, **CAPS))["requestState"]
            retry = {"name": "pay", "arguments": {}, "inputResponses": {"who": accept("Ada")}, "requestState": state}
            assert error_of(await peer.modern("tools/call", retry, **CAPS))["code"] == -32603
            assert result_of(await peer.modern("tools/call", retry, **CAPS))["content"][0]["text"] == "receipt for Ada"
            assert result_of(await peer.modern("tools/call", retry, **CAPS))["content"][0]["text"] == "receipt for Ada"
        assert attempts == [1, 1]

    run(body)


# ------------------------------------------------------------------ the bound per caller, over HTTP


def test_a_full_bucket_is_a_clear_error_for_that_caller_only() -> None:
    clock, charges = Clock(), []
    server = shop(clock, charges, once_limit=2)
    app = server.http_app(authenticator=BearerTokens({"tok-a": "alice", "tok-b": "bob"}))

    async def post(client: httpx.AsyncClient, token: str, item: str, **params: Any) -> dict[str, Any]:
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": "buy",
                "arguments": {"item": item},
                **params,
                "_meta": {M.PROTOCOL_VERSION: "2026-07-28", M.CLIENT_INFO: {"name": "t", "version": "0"}, **CAPS},
            },
        }
        headers = {**modern_headers(message), "authorization": f"Bearer {token}"}
        response = await client.post("/mcp", json=message, headers=headers)
        return response.json()  # type: ignore[no-any-return]

    async def body() -> None:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=BASE, timeout=5) as client:
            one = result_of(await post(client, "tok-a", "one"))
            result_of(await post(client, "tok-a", "two"))
            refused = await post(client, "tok-a", "three")
            assert error_of(refused)["code"] == -32603
            assert FULL in error_of(refused)["message"]
            assert charges == ["one", "two"]  # the third was not run
            # Another principal has a bucket of its own.
            result_of(await post(client, "tok-b", "four"))
            assert charges == ["one", "two", "four"]
            # Alice's kept results still replay (no re-run), full bucket or not.
            replay = await post(
                client, "tok-a", "one", inputResponses={"ship": accept("A")}, requestState=one["requestState"]
            )
            assert list(result_of(replay)["inputRequests"]) == ["note"]
            assert charges == ["one", "two", "four"]
            # Once her results expire with their states, she may go on.
            clock.now += TTL + 10
            result_of(await post(client, "tok-a", "five"))
            assert charges == ["one", "two", "four", "five"]
        await app.aclose()

    run(body)
