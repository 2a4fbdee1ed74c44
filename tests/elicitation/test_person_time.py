"""Time spent waiting for the person does not count against the tool call's own timeout (issue #4)."""

from __future__ import annotations

import asyncio

import pytest

from backchannel import Client, Context, Server
from backchannel.transports.memory import memory_pair


def _server() -> Server:
    server = Server("slow-person")

    @server.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", {"type": "object", "properties": {"name": {"type": "string"}}})
        return f"hello {answer.data['name']}" if answer.accepted else answer.action

    return server


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_a_slow_person_does_not_time_out_the_call(era: str) -> None:
    async def person(params: dict[str, object]) -> dict[str, object]:
        await asyncio.sleep(0.6)  # longer than the call's timeout below
        return {"action": "accept", "content": {"name": "Ada"}}

    async def body() -> str:
        client_side, server_side = memory_pair()
        serving = asyncio.create_task(_server().serve(server_side))
        async with Client(client_side, era=era, elicitation=person, request_timeout=0.3) as client:  # type: ignore[arg-type]
            result = await client.call_tool("ask")
        await server_side.close()
        await serving
        return result.content[0].text  # type: ignore[union-attr]

    assert asyncio.run(asyncio.wait_for(body(), 10)) == "hello Ada"


def test_the_clock_still_runs_when_nobody_is_asked() -> None:
    server = Server("slow-tool")

    @server.tool()
    async def slow() -> str:
        await asyncio.sleep(5)
        return "late"

    async def body() -> None:
        client_side, server_side = memory_pair()
        serving = asyncio.create_task(server.serve(server_side))
        async with Client(client_side, era="handshake", request_timeout=0.2) as client:
            with pytest.raises(TimeoutError):
                await client.call_tool("slow")
        await server_side.close()
        await serving

    asyncio.run(asyncio.wait_for(body(), 10))
