"""A first decline in a process: until one is written, an ask does not look for one in an
in-process store, so the decline's key is worked out when the person declines."""

from __future__ import annotations

import dataclasses

import pytest
from _elicit_wire import run, session

from backchannel import Context, Server
from backchannel.server import elicitation


@dataclasses.dataclass
class Age:
    name: str
    age: int


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_the_first_decline_of_a_process_is_remembered(era: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(elicitation, "_declined_here", False)  # as in a server that never saw one
    server = Server("s")

    @server.tool()
    async def ask(ctx: Context) -> str:
        return (await ctx.elicit("Your age?", Age)).action

    async def body() -> None:
        async with session(server, era, elicitation=lambda p: {"action": "decline"}) as (client, tap):
            for _ in range(3):
                result = await client.call_tool("ask", {})
                assert result.content[0].text == "decline"
            assert tap.forms_shown(era) == 1  # the second and third were answered without asking

    run(body)
