"""The tool API of ``Server``, seen from a client over an in-memory wire, in both eras."""

from __future__ import annotations

import base64
import json
from typing import Annotated, Any, Literal, Optional

import pytest
from _server_harness import ERAS, connected, run

from _shapes import Order, Person, Point
from backchannel import Audio, Context, Image, RequestError, Server, ToolError
from backchannel.types.content import (
    BlobResourceContents,
    EmbeddedResource,
    ResourceLink,
    TextContent,
    TextResourceContents,
)
from backchannel.types.tools import CallToolResult

PNG = b"\x89PNG\r\n\x1a\n fake png"
WAV = b"RIFF fake wav"


POINT_SCHEMA = {
    "type": "object",
    "title": "Point",
    "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 0}},
    "required": ["x"],
}


def plan(
    start: Point,
    owner: Person,
    order: Order,
    unit: Literal["C", "F"] = "C",
    note: Optional[str] = None,  # noqa: UP045 - Optional is what this test is about
    steps: Annotated[int, "how many steps to take"] = 3,
) -> Point:
    """Plan a route."""
    return start


async def call_raw(client: Any, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    return await client.connection.request("tools/call", params)  # type: ignore[no-any-return]


def tool_server() -> Server:
    server = Server("tools")
    server.add_tool(
        plan,
        title="Route planner",
        annotations={"readOnlyHint": True, "openWorldHint": False},
        icons=[{"src": "https://example.com/route.png", "mimeType": "image/png"}],
        meta={"example.com/tier": "gold"},
    )
    return server


# -- tools/list --------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
def test_tools_list_describes_the_signature(era: str) -> None:
    async def body() -> dict[str, Any]:
        async with connected(tool_server(), era) as (client, wire):
            await client.list_tools()
            return wire.results()[-1]

    result = run(body)
    assert result["tools"] == [
        {
            "name": "plan",
            "title": "Route planner",
            "description": "Plan a route.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "start": {"$ref": "#/$defs/Point"},
                    "owner": {"$ref": "#/$defs/Person"},
                    "order": {"$ref": "#/$defs/Order"},
                    "unit": {"type": "string", "enum": ["C", "F"], "default": "C"},
                    "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
                    "steps": {"type": "integer", "default": 3, "description": "how many steps to take"},
                },
                "required": ["start", "owner", "order"],
                "additionalProperties": False,
                "$defs": {
                    "Point": POINT_SCHEMA,
                    "Person": {
                        "type": "object",
                        "title": "Person",
                        "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
                        "required": ["name", "age"],
                    },
                    "Order": {
                        "type": "object",
                        "title": "Order",
                        "properties": {
                            "item": {"type": "string"},
                            "quantity": {"type": "integer", "default": 1},
                        },
                        "required": ["item"],
                    },
                },
            },
            "outputSchema": POINT_SCHEMA,
            "annotations": {"readOnlyHint": True, "openWorldHint": False},
            "icons": [{"src": "https://example.com/route.png", "mimeType": "image/png"}],
            "_meta": {"example.com/tier": "gold"},
        }
    ]


def test_output_schema_follows_the_return_annotation() -> None:
    server = Server("out")

    @server.tool()
    def count() -> int:
        return 1

    @server.tool()
    def names() -> list[str]:
        return []

    @server.tool()
    def greet() -> str:
        return "hi"

    @server.tool()
    def nothing() -> None:
        return None

    async def body() -> dict[str, Any]:
        async with connected(server) as (client, _):
            return {tool.name: tool for tool in await client.list_tools()}

    tools = run(body)
    assert tools["count"].output_schema == {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    }
    assert tools["names"].output_schema == {
        "type": "object",
        "properties": {"result": {"type": "array", "items": {"type": "string"}}},
        "required": ["result"],
    }
    assert tools["greet"].output_schema is None
    assert tools["nothing"].output_schema is None
    assert tools["greet"].input_schema == {"type": "object", "properties": {}, "additionalProperties": False}


# -- tools/call --------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
def test_arguments_arrive_as_the_declared_types(era: str) -> None:
    seen: list[Any] = []
    server = Server("types")

    @server.tool()
    def take(start: Point, owner: Person, order: Order, when: float, flag: bool = False) -> str:
        seen.extend([start, owner, order, when, flag])
        return "ok"

    arguments = {
        "start": {"x": 1, "y": 2},
        "owner": {"name": "Ada", "age": 36},
        "order": {"item": "tea"},
        "when": 3,
    }

    async def body() -> dict[str, Any]:
        async with connected(server, era) as (client, _):
            return await call_raw(client, "take", arguments)

    result = run(body)
    assert result["content"] == [{"type": "text", "text": "ok"}]
    assert "structuredContent" not in result
    start, owner, order, when, flag = seen
    assert start == Point(1, 2) and type(start) is Point
    assert owner == {"name": "Ada", "age": 36}
    assert order == Order(item="tea", quantity=1) and type(order) is Order
    assert when == 3.0 and type(when) is float
    assert flag is False


@pytest.mark.parametrize("era", ERAS)
def test_structured_output_and_its_json_text(era: str) -> None:
    server = Server("structured")

    @server.tool()
    def count(n: int) -> int:
        return n + 1

    @server.tool()
    async def corner(x: int) -> Point:
        return Point(x, 7)

    @server.tool()
    def tags() -> list[str]:
        return ["a", "b"]

    async def body() -> list[dict[str, Any]]:
        async with connected(server, era) as (client, _):
            return [
                await call_raw(client, "count", {"n": 41}),
                await call_raw(client, "corner", {"x": 5}),
                await call_raw(client, "tags"),
            ]

    count_result, corner_result, tags_result = run(body)
    assert count_result["structuredContent"] == {"result": 42}
    assert count_result["content"] == [{"type": "text", "text": '{"result":42}'}]
    assert corner_result["structuredContent"] == {"x": 5, "y": 7}
    assert json.loads(corner_result["content"][0]["text"]) == {"x": 5, "y": 7}
    assert len(corner_result["content"]) == 1
    assert tags_result["structuredContent"] == {"result": ["a", "b"]}
    for result in (count_result, corner_result, tags_result):
        assert "isError" not in result


def content_server() -> Server:
    server = Server("content")
    link = ResourceLink(uri="file:///notes.txt", name="notes", mime_type="text/plain")
    text_resource = EmbeddedResource(resource=TextResourceContents(uri="mem://a", text="alpha", mime_type="text/plain"))
    blob_resource = EmbeddedResource(
        resource=BlobResourceContents(uri="mem://b", blob=base64.b64encode(b"\x00\x01").decode())
    )

    @server.tool()
    def text() -> str:
        return "plain words"

    @server.tool()
    def image() -> Image:
        return Image(PNG, "image/png")

    @server.tool()
    def audio() -> Audio:
        return Audio(WAV, "audio/wav")

    @server.tool()
    def link_to() -> ResourceLink:
        return link

    @server.tool()
    def embedded_text() -> EmbeddedResource:
        return text_resource

    @server.tool()
    def embedded_blob() -> EmbeddedResource:
        return blob_resource

    @server.tool()
    async def mixed() -> list[str | Image | ResourceLink | TextContent]:
        return ["first", Image(PNG, "image/png"), link, TextContent(text="last")]

    @server.tool()
    def empty() -> None:
        return None

    @server.tool()
    def passthrough() -> CallToolResult:
        return CallToolResult(content=[TextContent(text="made by hand")], structured_content={"k": 1}, is_error=True)

    return server


PNG_BLOCK = {"type": "image", "data": base64.b64encode(PNG).decode(), "mimeType": "image/png"}
LINK_BLOCK = {"type": "resource_link", "uri": "file:///notes.txt", "name": "notes", "mimeType": "text/plain"}
CONTENT_CASES = {
    "text": [{"type": "text", "text": "plain words"}],
    "image": [PNG_BLOCK],
    "audio": [{"type": "audio", "data": base64.b64encode(WAV).decode(), "mimeType": "audio/wav"}],
    "link_to": [LINK_BLOCK],
    "embedded_text": [{"type": "resource", "resource": {"uri": "mem://a", "mimeType": "text/plain", "text": "alpha"}}],
    "embedded_blob": [{"type": "resource", "resource": {"uri": "mem://b", "blob": "AAE="}}],
    "mixed": [{"type": "text", "text": "first"}, PNG_BLOCK, LINK_BLOCK, {"type": "text", "text": "last"}],
    "empty": [],
}


@pytest.mark.parametrize("era", ERAS)
def test_every_content_block_type(era: str) -> None:
    async def body() -> dict[str, dict[str, Any]]:
        async with connected(content_server(), era) as (client, _):
            tools = await client.list_tools()
            assert all(tool.output_schema is None for tool in tools)
            return {name: await call_raw(client, name) for name in [*CONTENT_CASES, "passthrough"]}

    results = run(body)
    for name, content in CONTENT_CASES.items():
        assert results[name]["content"] == content, name
        assert "structuredContent" not in results[name], name
    assert results["passthrough"]["content"] == [{"type": "text", "text": "made by hand"}]
    assert results["passthrough"]["structuredContent"] == {"k": 1}
    assert results["passthrough"]["isError"] is True


@pytest.mark.parametrize("era", ERAS)
def test_tool_error_is_a_result_and_context_is_not_an_argument(era: str) -> None:
    server = Server("errors")

    @server.tool()
    async def divide(a: int, b: int, ctx: Context) -> float:
        if b == 0:
            raise ToolError("cannot divide by zero")
        return a / b

    async def body() -> tuple[Any, dict[str, Any], dict[str, Any]]:
        async with connected(server, era) as (client, _):
            (tool,) = await client.list_tools()
            return (
                tool,
                await call_raw(client, "divide", {"a": 1, "b": 0}),
                await call_raw(client, "divide", {"a": 1, "b": 4}),
            )

    tool, failed, ok = run(body)
    assert set(tool.input_schema["properties"]) == {"a", "b"}
    assert failed["isError"] is True
    assert failed["content"] == [{"type": "text", "text": "cannot divide by zero"}]
    assert "structuredContent" not in failed
    assert ok["structuredContent"] == {"result": 0.25}


@pytest.mark.parametrize("era", ERAS)
def test_bad_calls_are_protocol_errors(era: str) -> None:
    server = Server("bad")

    @server.tool()
    def order(quantity: int, start: Point) -> int:
        return quantity

    @server.tool()
    def liar() -> int:
        return "secret-value-9f3"  # type: ignore[return-value]

    @server.tool()
    async def crash() -> str:
        raise RuntimeError("password=hunter2")

    async def body() -> dict[str, RequestError]:
        errors: dict[str, RequestError] = {}
        async with connected(server, era) as (client, _):
            for label, name, arguments in [
                ("not an object", "order", ["quantity"]),
                ("unknown tool", "nope", {}),
                ("mismatch", "liar", {}),
                ("crash", "crash", {}),
            ]:
                with pytest.raises(RequestError) as caught:
                    await call_raw(client, name, arguments)  # type: ignore[arg-type]
                errors[label] = caught.value
        return errors

    errors = run(body)
    for label in ("not an object", "unknown tool"):
        assert errors[label].code == -32602, label
    assert "expected an object" in errors["not an object"].message
    assert errors["unknown tool"].message == "Unknown tool: nope"
    assert errors["mismatch"].code == -32603
    assert "secret-value-9f3" not in errors["mismatch"].message
    assert errors["mismatch"].data is None
    assert errors["crash"].code == -32603
    assert "hunter2" not in errors["crash"].message


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_arguments_that_fail_validation_are_a_tool_execution_error(era: str, is_async: bool) -> None:
    """tools.mdx "Error Handling" (SEP-1303): a result with isError naming each field, not -32602;
    the same on the inline path of a plain function and on the task path of a coroutine."""
    server = Server("bad")
    calls: list[int] = []

    def order(quantity: int, start: Point) -> int:
        calls.append(quantity)
        return quantity

    async def order_async(quantity: int, start: Point) -> int:
        return order(quantity, start)

    server.add_tool(order_async if is_async else order, name="order")

    async def body() -> dict[str, dict[str, Any]]:
        async with connected(server, era) as (client, _):
            return {
                label: await call_raw(client, "order", arguments)
                for label, arguments in [
                    ("wrong type", {"quantity": "many", "start": {"x": 1}}),
                    ("missing", {"start": {"x": 1}}),
                    ("nested", {"quantity": 1, "start": {"x": "left"}}),
                    ("unknown", {"quantity": 1, "start": {"x": 1}, "colour": "red"}),
                    ("all at once", {"quantity": "many", "start": {}, "colour": "red"}),
                ]
            }

    results = run(body)
    texts = {}
    for label, result in results.items():
        assert result["isError"] is True, label
        assert "structuredContent" not in result, label
        (block,) = result["content"]
        assert block["type"] == "text", label
        texts[label] = block["text"]
    assert texts["wrong type"] == "Invalid arguments for tool 'order': quantity: expected an integer, got \"many\""
    assert texts["missing"] == "Invalid arguments for tool 'order': quantity: required field missing"
    assert texts["nested"] == "Invalid arguments for tool 'order': start.x: expected an integer, got \"left\""
    assert texts["unknown"] == "Invalid arguments for tool 'order': colour: unexpected argument"
    assert texts["all at once"] == (
        "Invalid arguments for tool 'order': quantity: expected an integer, got \"many\"; "
        "start.x: required field missing; colour: unexpected argument"
    )
    assert calls == []  # the function never ran
