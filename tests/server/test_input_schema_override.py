"""``add_tool(..., input_schema=...)``: the schema is published verbatim, arguments pass through."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from _server_harness import ERAS, connected, run

from backchannel import Context, Server
from backchannel.types.errors import RequestError

SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {"city": {"type": "string"}}}},
    "properties": {
        "name": {"type": "string", "x-custom": "kept"},
        "address": {"$ref": "#/$defs/address"},
        "count": {"type": "integer"},
    },
    "allOf": [{"anyOf": [{"required": ["name"]}, {"required": ["address"]}]}],
    "if": {"required": ["count"]},
    "then": {"properties": {"count": {"minimum": 1}}},
    "else": {},
    "additionalProperties": False,
}


def _server() -> tuple[Server, list[dict[str, Any]]]:
    server = Server("override")
    seen: list[dict[str, Any]] = []

    def echo(ctx: Context, name: Any = None, count: Any = None) -> str:
        seen.append({"name": name, "count": count, "era": ctx.era})
        return f"{name}:{count}"

    server.add_tool(echo, description="echo", input_schema=copy.deepcopy(SCHEMA))
    return server, seen


@pytest.mark.parametrize("era", ERAS)
def test_schema_is_listed_verbatim(era: str) -> None:
    server, _ = _server()

    async def body() -> Any:
        async with connected(server, era) as (client, _):
            return await client.list_tools()

    (tool,) = run(body)
    assert tool.input_schema == SCHEMA


@pytest.mark.parametrize("era", ERAS)
def test_arguments_pass_through_unconverted(era: str) -> None:
    server, seen = _server()

    async def body() -> Any:
        async with connected(server, era) as (client, _):
            # "count" is declared an integer but is not converted or checked; "address" is in the
            # schema but names no parameter.
            return await client.call_tool("echo", {"name": "a", "count": "7", "address": {}})

    result = run(body)
    assert result.content[0].text == "a:7"
    assert seen == [{"name": "a", "count": "7", "era": era}]


@pytest.mark.parametrize("era", ERAS)
def test_arguments_the_schema_does_not_allow_are_a_tool_execution_error(era: str) -> None:
    server, seen = _server()

    async def body() -> Any:
        async with connected(server, era) as (client, _):
            return await client.call_tool("echo", {"name": "a", "extra": [1], "more": 2})

    result = run(body)
    assert result.is_error is True
    assert (
        result.content[0].text
        == "Invalid arguments for tool 'echo': extra: unexpected argument; more: unexpected argument"
    )
    assert seen == []


@pytest.mark.parametrize("era", ERAS)
def test_an_open_schema_ignores_or_passes_unknown_arguments(era: str) -> None:
    server = Server("open")
    seen: list[dict[str, Any]] = []

    def named(name: Any = None) -> str:
        seen.append({"name": name})
        return "named"

    def gather(name: Any = None, **rest: Any) -> str:
        seen.append({"name": name, **rest})
        return "gather"

    def pattern(**rest: Any) -> str:
        seen.append(rest)
        return "pattern"

    open_schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    server.add_tool(named, input_schema=open_schema)
    server.add_tool(gather, input_schema=open_schema)
    patterned = {"type": "object", "patternProperties": {"^x-": {}}, "additionalProperties": False}
    server.add_tool(pattern, input_schema=patterned)

    async def body() -> list[Any]:
        async with connected(server, era) as (client, _):
            return [
                await client.call_tool("named", {"name": "a", "extra": 1}),
                await client.call_tool("gather", {"name": "a", "extra": 1}),
                await client.call_tool("pattern", {"x-one": 1}),
                await client.call_tool("pattern", {"x-one": 1, "y": 2}),
            ]

    named_result, gather_result, pattern_result, refused = run(body)
    assert not any(result.is_error for result in (named_result, gather_result, pattern_result))
    assert refused.is_error is True and refused.content[0].text.endswith("y: unexpected argument")
    assert seen == [{"name": "a"}, {"name": "a", "extra": 1}, {"x-one": 1}]


@pytest.mark.parametrize("era", ERAS)
def test_missing_arguments_use_the_function_defaults(era: str) -> None:
    server, seen = _server()

    async def body() -> Any:
        async with connected(server, era) as (client, _):
            return await client.call_tool("echo")

    assert run(body).content[0].text == "None:None"
    assert seen[0]["name"] is None


def test_non_object_arguments_are_refused() -> None:
    server, seen = _server()

    async def body() -> Any:
        async with connected(server) as (client, _):
            return await client.request("tools/call", {"name": "echo", "arguments": [1, 2]})

    with pytest.raises(RequestError) as caught:
        run(body)
    assert caught.value.code == -32602
    assert "expected an object" in caught.value.message
    assert seen == []


def test_schema_without_object_type_is_refused_at_registration() -> None:
    server = Server("bad")
    with pytest.raises(ValueError, match="input_schema"):
        server.add_tool(lambda: "x", name="x", input_schema={"type": "string"})
    assert server.capabilities() == {"logging": {}}
