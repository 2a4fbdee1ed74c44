"""A form field of a set type refuses a repeated choice, as a tool's set parameter does (issue #18, item 6).

A ``set[Literal[...]]`` (or ``frozenset``, or of a str-Enum) form field is a multi-select. The
flat ``requestedSchema`` has no ``uniqueItems`` (a multi-select's shape does not take it,
2025-11-25 ``PrimitiveSchemaDefinition``), so the answer's checker refuses a repeat itself
(EL-62): ``FormSpec.parse`` raises, and a tool's ``ctx.elicit`` asks again saying why, instead
of quietly folding ``["a", "a"]`` into ``{"a"}``; backchannel's own client will not even send
one. Checked in process and on the wire.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import pytest

from backchannel import Context, RequestError, Server
from backchannel.forms import FormContentError, FormSpec
from backchannel.testing import connected, run
from backchannel.transports.memory import memory_pair


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclass
class Toppings:
    picked: set[Literal["cheese", "olives", "basil"]]
    colours: frozenset[Colour] = frozenset()


def test_a_set_field_is_a_multi_select_without_unique_items() -> None:
    schema = FormSpec.from_type(Toppings).requested_schema
    assert schema["properties"]["picked"] == {
        "type": "array",
        "items": {"type": "string", "enum": ["cheese", "olives", "basil"]},
    }
    assert "uniqueItems" not in schema["properties"]["colours"]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ({"picked": ["cheese", "cheese"]}, "picked: 'cheese' is chosen more than once"),
        ({"picked": ["basil"], "colours": ["red", "blue", "red"]}, "colours: 'red' is chosen more than once"),
    ],
)
def test_a_repeated_choice_is_refused_not_folded(content: dict[str, Any], problem: str) -> None:
    with pytest.raises(FormContentError) as caught:
        FormSpec.from_type(Toppings).parse(content)
    assert caught.value.problems == [problem]


def test_distinct_choices_come_back_as_the_set() -> None:
    parsed = FormSpec.from_type(Toppings).parse({"picked": ["olives", "cheese"], "colours": ["blue"]})
    assert parsed == Toppings({"olives", "cheese"}, frozenset({Colour.BLUE}))


def test_over_the_wire_the_server_asks_again_saying_why() -> None:
    """The server's own check (EL-62), for a client that sends what it likes: raw JSON-RPC, handshake era."""
    server = Server("pizza")

    @server.tool()
    async def order(ctx: Context) -> str:
        answer = await ctx.elicit("Toppings?", Toppings)
        return f"{answer.action}: {sorted(answer.data.picked)}" if answer.accepted else answer.action

    async def main() -> tuple[list[str], dict[str, Any]]:
        client, server_side = memory_pair()
        serving = asyncio.create_task(server.serve(server_side))
        init = {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": CLIENT}
        client.write([{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}])
        await next_message(client, lambda m: m.get("id") == 1)
        client.write([{"jsonrpc": "2.0", "method": "notifications/initialized"}])
        client.write([{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "order"}}])
        messages = []
        for picked in (["cheese", "cheese"], ["cheese", "basil"]):
            asked = await next_message(client, lambda m: m.get("method") == "elicitation/create")
            messages.append(asked["params"]["message"])
            content = {"action": "accept", "content": {"picked": picked}}
            client.write([{"jsonrpc": "2.0", "id": asked["id"], "result": content}])
        result = await next_message(client, lambda m: m.get("id") == 2 and "method" not in m)
        await client.close()
        await serving
        return messages, result["result"]

    messages, result = run(main())
    assert messages == ["Toppings?", "Toppings?\n\nPlease correct: picked: 'cheese' is chosen more than once"]
    assert result["content"] == [{"type": "text", "text": "accept: ['basil', 'cheese']"}]


def test_the_client_refuses_to_send_a_repeat() -> None:
    """backchannel's own client checks an accepted answer before sending it (EL-61)."""
    server = Server("pizza")

    @server.tool()
    async def order(ctx: Context) -> str:
        answer = await ctx.elicit("Toppings?", Toppings)
        return answer.action

    def person(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"picked": ["olives", "olives"]}}

    async def main() -> None:
        async with connected(server, "handshake", elicitation=person) as client:
            await client.call_tool("order", {})

    with pytest.raises(RequestError, match="picked: 'olives' is chosen more than once"):
        run(main())


CLIENT = {"name": "raw", "version": "1"}


async def next_message(transport: Any, wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The next message ``wanted`` picks, within a bound."""
    async with asyncio.timeout(10):
        while True:
            batch = await transport.receive()
            assert batch is not None, "the server closed the connection"
            for message in batch:
                if isinstance(message, dict) and wanted(message):
                    return message
