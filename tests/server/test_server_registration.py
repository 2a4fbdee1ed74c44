"""Registration mistakes fail at registration time, with messages that name the culprit."""

from __future__ import annotations

from typing import Any

import pytest
from _server_harness import connected, run

from backchannel import Server


def test_duplicate_tool_name_is_refused_and_keeps_the_first() -> None:
    server = Server("dup")

    def first() -> str:
        return "first"

    def second() -> str:
        return "second"

    server.add_tool(first, name="same")
    with pytest.raises(ValueError, match="'same' is already registered"):
        server.add_tool(second, name="same")
    with pytest.raises(ValueError, match="already registered"):
        server.tool(name="same")(second)

    async def body() -> Any:
        async with connected(server) as (client, _):
            return await client.call_tool("same")

    assert run(body).content[0].text == "first"


@pytest.mark.parametrize("name", ["", "has space", "comma,name", "x" * 129, "naïve", "semi;colon", "slash/name"])
def test_invalid_tool_names_are_refused(name: str) -> None:
    server = Server("names")
    with pytest.raises(ValueError, match="SEP-986"):
        server.add_tool(lambda: "x", name=name)
    assert server.capabilities() == {"logging": {}}


@pytest.mark.parametrize("name", ["getUser", "DATA_EXPORT_v2", "admin.tools.list", "a-b", "x" * 128])
def test_valid_tool_names_are_accepted(name: str) -> None:
    server = Server("names")
    assert server.add_tool(lambda: "x", name=name).name == name


def test_star_args_are_refused_naming_the_function() -> None:
    """*args never fits a JSON object; **kwargs is a tool's way to take unknown arguments, and
    means nothing for a prompt, whose arguments are listed one by one."""
    server = Server("stars")

    def gather(*values: int) -> int:
        return sum(values)

    def options(**extra: str) -> str:
        return ""

    with pytest.raises(TypeError, match=r"gather.*\*values"):
        server.add_tool(gather)
    with pytest.raises(TypeError, match=r"gather.*\*values"):
        server.add_prompt(gather)
    with pytest.raises(TypeError, match=r"options.*\*\*extra"):
        server.add_prompt(options)
    assert server.add_tool(options).definition["inputSchema"]["additionalProperties"] == {"type": "string"}


def test_template_variables_must_match_the_parameters() -> None:
    server = Server("templates")

    def item(item_id: int) -> str:
        return ""

    with pytest.raises(TypeError) as caught:
        server.add_resource("res://items/{id}", item)
    message = str(caught.value)
    assert "res://items/{id}" in message and "item()" in message
    assert "item_id" in message and "no parameter: id" in message

    def optional_extra(id: int, verbose: bool = False) -> str:
        return ""

    server.add_resource("res://items/{id}", optional_extra)  # an optional extra parameter is fine
    assert "resources" in server.capabilities()


def test_duplicate_prompts_and_resources_are_refused() -> None:
    server = Server("dups")
    server.add_prompt(lambda: "a", name="p")
    server.add_resource("res://a", lambda: "a")
    server.add_resource("res://t/{x}", lambda x: x)
    with pytest.raises(ValueError, match="prompt named 'p'"):
        server.add_prompt(lambda: "b", name="p")
    with pytest.raises(ValueError, match="res://a"):
        server.add_resource("res://a", lambda: "b")
    with pytest.raises(ValueError, match=r"res://t/\{x\}"):
        server.add_resource("res://t/{x}", lambda x: x)


def test_static_resource_cannot_require_arguments() -> None:
    def needs(x: int) -> str:
        return ""

    with pytest.raises(TypeError, match="res://static"):
        Server("static").add_resource("res://static", needs)
