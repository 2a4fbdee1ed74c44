"""A prompt's or template's arguments that are not plain text are described in ``_meta`` (issue #18,
item 7), under backchannel's own key ``dev.backchannel/argumentSchema``.

The protocol gives prompt arguments and template variables no type, so a client had nothing
to go on but "text" for ``countdown(start: int)``. The key carries the arguments' JSON Schema
(spec, basic/index.mdx, ``_meta``: a vendor prefix, second label not ``modelcontextprotocol``
or ``mcp``), only when some argument is more than text, so a str-only prompt's listing is as
it was; an author's own ``meta`` keys are kept, and win. Checked on the wire in both eras.
"""

from __future__ import annotations

import re
from typing import Any, Literal

import pytest
from _server_harness import ERAS, connected, run

from backchannel import Server
from backchannel.types.meta import ARGUMENT_SCHEMA

KEY = "dev.backchannel/argumentSchema"


def typed_server() -> Server:
    server = Server("typed")

    @server.prompt()
    def countdown(start: int, style: Literal["plain", "loud"] = "plain") -> str:
        return f"{start}..."

    @server.prompt(meta={"example.com/owner": "docs", KEY: {"theirs": True}})
    def owned(start: int) -> str:
        return str(start)

    @server.prompt()
    def review(code: str, language: str = "python") -> str:
        return code

    @server.resource("items://{n}")
    def item(n: int) -> str:
        return f"item {n}"

    @server.resource("words://{word}")
    def word(word: str) -> str:
        return word

    return server


def test_the_key_is_a_vendor_key_the_spec_allows() -> None:
    assert ARGUMENT_SCHEMA == KEY
    prefix, _, name = KEY.partition("/")
    labels = prefix.split(".")
    assert all(re.fullmatch(r"[A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?", label) for label in labels)
    assert labels[1] not in ("modelcontextprotocol", "mcp")  # reserved for MCP
    assert re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?", name)


@pytest.mark.parametrize("era", ERAS)
def test_prompts_and_templates_say_their_argument_types(era: str) -> None:
    async def body() -> list[dict[str, Any]]:
        async with connected(typed_server(), era) as (client, wire):
            await client.list_prompts()
            await client.list_resource_templates()
            return wire.results()[-2:]

    prompts, templates = run(body)
    listed = {prompt["name"]: prompt for prompt in prompts["prompts"]}
    assert listed["countdown"]["_meta"] == {
        KEY: {
            "type": "object",
            "properties": {
                "start": {"type": "integer"},
                "style": {"type": "string", "enum": ["plain", "loud"], "default": "plain"},
            },
            "required": ["start"],
        }
    }
    # The arguments themselves are as the spec has them: names and requiredness, no types.
    assert listed["countdown"]["arguments"] == [
        {"name": "start", "required": True},
        {"name": "style", "required": False},
    ]
    assert listed["owned"]["_meta"] == {"example.com/owner": "docs", KEY: {"theirs": True}}  # the author's win
    assert "_meta" not in listed["review"]  # text only: nothing to add
    by_template = {item["uriTemplate"]: item for item in templates["resourceTemplates"]}
    assert by_template["items://{n}"]["_meta"][KEY]["properties"] == {"n": {"type": "integer"}}
    assert "_meta" not in by_template["words://{word}"]
