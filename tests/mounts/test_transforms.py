"""Transforms and visibility on the wire, in both eras, on a server's own tools and a mount's
(issue #30, "Transforms and visibility"; ``composition/transforms.py``, ``docs/gateway.md``).

A transform shows a tool renamed, with a new description, an argument hidden (the tool's default
is used) and one fixed (always sent with the given value, which no client can change); the old
name is refused as an unknown tool. Disabling hides an item from the lists and refuses it exactly
as an unknown one, for every client or for one session, and tells those it concerns that the list
changed (tools.mdx "List Changed Notification"; subscriptions.mdx in the stateless era).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from backchannel import Context, Server
from backchannel.client.events import ListChanged
from backchannel.testing import Tap, connected
from backchannel.types.errors import RequestError
from mounts._mounting import ERAS, KINDS, bounded, client_of, close_mounts, mount_upstream, person, text

PAIRS = [(era, kind) for era in ERAS for kind in KINDS]
WAIT = 20.0


def _gateway(kind: str) -> Server:
    gateway = Server("gateway")

    @gateway.tool()
    def area(width: int, height: int = 1, unit: str = "m", verbose: bool = False) -> str:
        """The gateway's own tool."""
        return f"{width * height}{unit}2{' exactly' if verbose else ''}"

    @gateway.tool()
    def lock(ctx: Context, pattern: str) -> str:
        """Hide the tools matching ``pattern`` from this session."""
        ctx.disable("tool", pattern)
        return "locked"

    @gateway.tool()
    def unlock(ctx: Context, pattern: str) -> str:
        ctx.enable("tool", pattern)
        return "unlocked"

    mount_upstream(gateway, kind)
    return gateway


def _transformed(kind: str) -> Server:
    gateway = _gateway(kind)
    gateway.transform_tool(
        "ev_measure", name="length", description="A length in centimetres.", hide=["debug"], fix={"units": "cm"}
    )
    gateway.transform_tool("area", name="square_metres", hide=["verbose"], fix={"unit": "m"}, title="Area")
    return gateway


async def _refused(call: Any) -> RequestError:
    with pytest.raises(RequestError) as refused:
        await call
    return refused.value


@pytest.mark.parametrize(("era", "kind"), PAIRS)
@bounded
async def test_a_transformed_tool_is_listed_and_called_as_clients_see_it(era: str, kind: str) -> None:
    async with client_of(_transformed(kind), era) as (client, tap):
        tools = {tool.name: tool for tool in await client.list_tools()}
        assert "length" in tools and "square_metres" in tools
        assert "ev_measure" not in tools and "area" not in tools
        length = tools["length"]
        assert length.description == "A length in centimetres."
        assert set(length.input_schema["properties"]) == {"length"} and length.input_schema["required"] == ["length"]
        assert tools["square_metres"].title == "Area"
        assert set(tools["square_metres"].input_schema["properties"]) == {"width", "height"}
        assert text(await client.call_tool("length", {"length": 7})) == "7cm"  # fixed units, default debug
        assert text(await client.call_tool("square_metres", {"width": 2, "height": 3})) == "6m2"
        # A client cannot set what is fixed or hidden: refused as a tool's arguments are (SEP-1303).
        refused = await client.call_tool("length", {"length": 7, "units": "km"})
        assert refused.is_error and "units: unexpected argument" in text(refused)
        refused = await client.call_tool("square_metres", {"width": 2, "verbose": True})
        assert refused.is_error and "verbose: unexpected argument" in text(refused)
        # The old names are gone, refused as a tool that does not exist.
        for old in ("ev_measure", "area"):
            error = await _refused(client.call_tool(old, {"length": 1, "width": 1}))
            assert error.code == -32602 and error.message == f"Unknown tool: {old}"
    listed = next(m["result"]["tools"] for m in tap.received if "tools" in m.get("result", {}))
    wire = {tool["name"]: tool for tool in listed}
    assert wire["length"]["inputSchema"]["properties"] == {"length": {"type": "integer"}}


@pytest.mark.parametrize("era", ERAS)
@bounded
async def test_a_transform_refuses_what_cannot_work(era: str) -> None:
    gateway = _gateway("server")
    with pytest.raises(ValueError, match="required, so it cannot be hidden"):
        gateway.transform_tool("area", hide=["width"])
    with pytest.raises(ValueError, match="has no argument colour"):
        gateway.transform_tool("area", fix={"colour": "red"})
    with pytest.raises(ValueError, match="is shown already"):
        gateway.transform_tool("area", name="lock")
    with pytest.raises(ValueError, match="not a valid tool name"):
        gateway.transform_tool("area", name="an area")
    gateway.transform_tool("area", name="size")
    with pytest.raises(ValueError, match="transformed already"):
        gateway.transform_tool("area", name="other")
    gateway.transforms.remove_tool("area")
    async with client_of(gateway, era) as (client, _):
        assert "area" in {tool.name for tool in await client.list_tools()}
        assert text(await client.call_tool("area", {"width": 2})) == "2m2"


@pytest.mark.parametrize(("era", "kind"), PAIRS)
@bounded
async def test_disabled_items_are_hidden_and_refused_as_unknown_ones_and_clients_are_told(era: str, kind: str) -> None:
    gateway = _gateway(kind)
    async with client_of(gateway, era) as (client, tap):
        unknown = await _refused(client.call_tool("ev_nothing", {}))
        unknown_prompt = await _refused(client.get_prompt("ev_nothing"))
        unknown_uri = await _refused(client.read_resource("memo://nothing"))
        async with asyncio.timeout(WAIT), client.listen(tools=True, prompts=True, resources=True) as events:
            gateway.disable("tool", "ev_*")
            gateway.enable("tool", "ev_echo")  # the later rule wins
            gateway.disable("prompt", "ev_greet")
            gateway.disable("resource", "ev+memo://*")
            heard: set[str] = set()
            async for event in events:
                if isinstance(event, ListChanged):
                    heard.add(event.kind)
                if heard == {"tools", "prompts", "resources"}:
                    break
        tools = {tool["name"] for tool in (await client.request("tools/list", cached=False))["tools"]}
        assert tools == {"area", "lock", "unlock", "ev_echo"}
        prompts = {p["name"] for p in (await client.request("prompts/list", cached=False))["prompts"]}
        assert "ev_greet" not in prompts and "ev_trip" in prompts
        resources = (await client.request("resources/list", cached=False))["resources"]
        assert resources == []
        assert text(await client.call_tool("ev_echo", {"text": "still"})) == "still"
        hidden = await _refused(client.call_tool("ev_ask", {}))
        assert (hidden.code, hidden.message) == (unknown.code, "Unknown tool: ev_ask")
        hidden = await _refused(client.get_prompt("ev_greet", {"name": "x"}))
        assert (hidden.code, hidden.message) == (unknown_prompt.code, "Unknown prompt: ev_greet")
        hidden = await _refused(client.read_resource("ev+memo://note"))
        assert (hidden.code, hidden.message) == (unknown_uri.code, "Resource not found: ev+memo://note")
        gateway.enable("tool", "ev_*")
        assert "ev_ask" in {tool["name"] for tool in (await client.request("tools/list", cached=False))["tools"]}
    changed = {m["method"] for m in tap.received if str(m.get("method", "")).endswith("/list_changed")}
    assert changed >= {
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
    }


@pytest.mark.parametrize("era", ERAS)
@bounded
async def test_a_session_s_own_rule_hides_for_it_alone_and_tells_it_alone(era: str) -> None:
    gateway = _gateway("server")
    mine, theirs = Tap(), Tap()
    try:
        async with (
            connected(gateway, era, wrap_client=mine.around, elicitation=person) as me,
            connected(gateway, era, wrap_client=theirs.around, elicitation=person) as other,
        ):
            async with asyncio.timeout(WAIT), me.listen(tools=True) as events, other.listen(tools=True):
                assert text(await me.call_tool("lock", {"pattern": "ev_*"})) == "locked"
                async for event in events:
                    if isinstance(event, ListChanged):
                        break
            mine_now = {tool["name"] for tool in (await me.request("tools/list", cached=False))["tools"]}
            theirs_now = {tool["name"] for tool in (await other.request("tools/list", cached=False))["tools"]}
            assert not [name for name in mine_now if name.startswith("ev_")] and "area" in mine_now
            assert "ev_echo" in theirs_now
            assert (await _refused(me.call_tool("ev_echo", {"text": "x"}))).code == -32602
            assert text(await other.call_tool("ev_echo", {"text": "x"})) == "x"
            assert text(await me.call_tool("unlock", {"pattern": "ev_echo"})) == "unlocked"  # the session's later rule
            assert text(await me.call_tool("ev_echo", {"text": "y"})) == "y"
    finally:
        await close_mounts(gateway)
    told = [m for m in mine.received if m.get("method") == "notifications/tools/list_changed"]
    # Lock and unlock; in the stateless era only what happened while it listened (the lock).
    assert len(told) == (2 if era == "handshake" else 1)
    assert not [m for m in theirs.received if m.get("method") == "notifications/tools/list_changed"]
