"""``ctx.gather``: several questions in one stateless-era round (mrtr.mdx: inputRequests is a map),
and concurrently in the handshake era."""

from __future__ import annotations

import asyncio
import gc
import warnings
from typing import Any

import pytest

from backchannel import Client, Context, Server
from backchannel.testing import Tap, connected
from backchannel.transports.memory import memory_pair
from backchannel.types.errors import RequestError

FORM = {"type": "object", "properties": {"name": {"type": "string"}}}


def _server() -> Server:
    server = Server("gathering")

    @server.tool()
    async def survey(ctx: Context) -> str:
        first, second = await ctx.gather(ctx.elicit("First?", FORM), ctx.elicit("Second?", FORM))
        return f"{first.data['name']} and {second.data['name']}"

    return server


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_two_questions_are_answered_in_order(era: str) -> None:
    async def person(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": params["message"].rstrip("?").lower()}}

    async def body() -> tuple[str, list[dict[str, Any]]]:
        tap = Tap()  # the client's end: what the server sent
        async with connected(_server(), era, wrap_client=tap.around, elicitation=person) as client:  # type: ignore[arg-type]
            result = await client.call_tool("survey")
        return result.content[0].text, tap.received  # type: ignore[union-attr]

    text, seen = asyncio.run(asyncio.wait_for(body(), 10))
    assert text == "first and second"
    if era == "stateless":
        rounds = [m["result"] for m in seen if m.get("result", {}).get("resultType") == "input_required"]
        assert len(rounds) == 1  # both questions in one InputRequiredResult
        assert [r["method"] for r in rounds[0]["inputRequests"].values()] == ["elicitation/create"] * 2
    else:
        asked = [m for m in seen if m.get("method") == "elicitation/create"]
        assert sorted(m["params"]["message"] for m in asked) == ["First?", "Second?"]


def test_a_question_that_fails_leaves_no_question_unawaited() -> None:
    """A client without elicitation: the first question fails (-32021), and the ones after it,
    never awaited, are closed rather than left to warn "coroutine ... was never awaited"."""

    async def body() -> RequestError:
        client_side, server_side = memory_pair()
        serving = asyncio.create_task(_server().serve(server_side))
        async with Client(client_side, era="stateless") as client:
            with pytest.raises(RequestError) as caught:
                await client.call_tool("survey")
        await server_side.close()
        await serving
        return caught.value

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        error = asyncio.run(asyncio.wait_for(body(), 10))
        gc.collect()
    assert error.code == -32021
    assert not [w for w in seen if "never awaited" in str(w.message)], [str(w.message) for w in seen]
