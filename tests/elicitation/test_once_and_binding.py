"""Replays in the stateless era: work done once stays done once, and a sealed state is bound to its caller."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from backchannel import Client, Context, Server
from backchannel.server.mrtr import Round
from backchannel.state.sealer import StateSealer
from backchannel.transports.memory import memory_pair
from backchannel.types import meta as M
from backchannel.types.errors import InvalidParams

FORM = {"type": "object", "properties": {"name": {"type": "string"}}}
ENVELOPE = {M.PROTOCOL_VERSION: "2026-07-28", M.CLIENT_CAPABILITIES: {"elicitation": {}}}


def _charging_server(charges: list[str]) -> Server:
    server = Server("shop")

    @server.tool()
    async def buy(item: str, ctx: Context) -> str:
        receipt = await ctx.once("charge", lambda: charges.append(item) or f"receipt-{len(charges)}")
        first = await ctx.elicit("Ship to?", FORM)
        second = await ctx.elicit("Gift note?", FORM)
        return f"{receipt}: {first.data['name']} / {second.data['name']}"

    return server


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_work_in_once_runs_once_across_rounds(era: str) -> None:
    charges: list[str] = []

    async def body() -> str:
        client_side, server_side = memory_pair()
        serving = asyncio.create_task(_charging_server(charges).serve(server_side))
        answer = {"action": "accept", "content": {"name": "Ada"}}
        async with Client(client_side, era=era, elicitation=lambda params: answer) as client:  # type: ignore[arg-type]
            result = await client.call_tool("buy", {"item": "book"})
        await server_side.close()
        await serving
        return result.content[0].text  # type: ignore[union-attr]

    assert asyncio.run(asyncio.wait_for(body(), 10)) == "receipt-1: Ada / Ada"
    assert charges == ["book"]  # three runs of the handler in the stateless era, one charge


def test_replaying_an_older_state_does_not_repeat_the_work() -> None:
    charges: list[str] = []
    server = _charging_server(charges)

    async def body() -> None:
        client, server_side = memory_pair()
        serving = asyncio.create_task(server.serve(server_side))

        async def call(request_id: int, extra: dict[str, Any]) -> dict[str, Any]:
            params = {"name": "buy", "arguments": {"item": "book"}, "_meta": ENVELOPE, **extra}
            client.write([{"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}])
            (reply,) = await client.receive() or []
            return reply["result"]  # type: ignore[no-any-return]

        first = await call(1, {})  # charges, then asks "Ship to?"
        (key,) = first["inputRequests"]
        answered = {"inputResponses": {key: {"action": "accept", "content": {"name": "Ada"}}}}
        await call(2, {**answered, "requestState": first["requestState"]})
        await call(3, {**answered, "requestState": first["requestState"]})  # the same state, replayed
        await client.close()
        await serving

    asyncio.run(asyncio.wait_for(body(), 10))
    assert charges == ["book"]


def test_a_state_sealed_for_one_principal_is_refused_for_another() -> None:
    sealer = StateSealer()
    params = {"name": "buy", "arguments": {"item": "book"}}
    mine = Round.start(sealer, "tools/call", params, principal="alice")
    state = sealer.seal({"answers": mine.answers, "memo": mine.memo}, mine.binding)
    with pytest.raises(InvalidParams, match="another user"):
        Round.start(sealer, "tools/call", {**params, "requestState": state}, principal="mallory")
    assert Round.start(sealer, "tools/call", {**params, "requestState": state}, principal="alice").memo == mine.memo
