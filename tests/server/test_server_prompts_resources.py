"""Prompts, resources and resource templates of ``Server``, over an in-memory wire."""

from __future__ import annotations

import base64
from typing import Annotated, Any

import pytest
from _server_harness import ERAS, connected, run

from backchannel import Image, RequestError, Server, assistant, user

PNG = b"\x89PNG\r\n\x1a\n fake png"
PNG_BLOCK = {"type": "image", "data": base64.b64encode(PNG).decode(), "mimeType": "image/png"}


def prompt_server() -> Server:
    server = Server("prompts")

    @server.prompt(title="Code review")
    def review(code: Annotated[str, "the code to read"], language: str = "python") -> str:
        """Ask for a review."""
        return f"Review this {language}:\n{code}"

    @server.prompt()
    def chat(topic: str) -> list[Any]:
        return [
            f"Tell me about {topic}.",
            assistant("Gladly."),
            user("Go on."),
            assistant(Image(PNG, "image/png")),
        ]

    @server.prompt()
    async def picture() -> list[Any]:
        return [user(Image(PNG, "image/png")), Image(PNG, "image/png")]

    @server.prompt()
    def repeat(word: str, times: int) -> str:
        assert type(times) is int
        return " ".join([word] * times)

    return server


def user_text(text: str) -> dict[str, Any]:
    return {"role": "user", "content": {"type": "text", "text": text}}


@pytest.mark.parametrize("era", ERAS)
def test_prompts_list_arguments_come_from_the_signature(era: str) -> None:
    async def body() -> dict[str, Any]:
        async with connected(prompt_server(), era) as (client, wire):
            await client.list_prompts()
            return wire.results()[-1]

    prompts = {prompt["name"]: prompt for prompt in run(body)["prompts"]}
    assert list(prompts) == ["review", "chat", "picture", "repeat"]
    assert prompts["review"] == {
        "name": "review",
        "title": "Code review",
        "description": "Ask for a review.",
        "arguments": [
            {"name": "code", "description": "the code to read", "required": True},
            {"name": "language", "required": False},
        ],
    }
    assert prompts["repeat"]["arguments"] == [
        {"name": "word", "required": True},
        {"name": "times", "required": True},
    ]
    assert prompts["picture"] == {"name": "picture"}  # no arguments, no description: keys left out


@pytest.mark.parametrize("era", ERAS)
def test_get_prompt_builds_messages(era: str) -> None:
    async def body() -> list[dict[str, Any]]:
        async with connected(prompt_server(), era) as (client, wire):
            await client.get_prompt("review", {"code": "x = 1"})
            await client.get_prompt("chat", {"topic": "owls"})
            await client.get_prompt("picture")
            await client.get_prompt("repeat", {"word": "ho", "times": "3"})
            return wire.results()[-4:]

    review, chat, picture, repeat = run(body)
    assert review["messages"] == [user_text("Review this python:\nx = 1")]
    assert review["description"] == "Ask for a review."
    assert chat["messages"] == [
        user_text("Tell me about owls."),
        {"role": "assistant", "content": {"type": "text", "text": "Gladly."}},
        user_text("Go on."),
        {"role": "assistant", "content": PNG_BLOCK},
    ]
    assert "description" not in chat
    assert picture["messages"] == [{"role": "user", "content": PNG_BLOCK}] * 2
    assert repeat["messages"] == [user_text("ho ho ho")]


@pytest.mark.parametrize("era", ERAS)
def test_get_prompt_errors_are_invalid_params(era: str) -> None:
    async def body() -> list[RequestError]:
        errors = []
        async with connected(prompt_server(), era) as (client, _):
            for name, arguments in [
                ("review", {"language": "go"}),
                ("repeat", {"word": "ho", "times": "lots"}),
                ("missing", {}),
            ]:
                with pytest.raises(RequestError) as caught:
                    await client.get_prompt(name, arguments)
                errors.append(caught.value)
        return errors

    missing_code, bad_times, unknown = run(body)
    assert missing_code.code == bad_times.code == unknown.code == -32602
    assert "code" in missing_code.message and "required field missing" in missing_code.message
    assert "times" in bad_times.message
    assert unknown.message == "Unknown prompt: missing"


# -- resources -----------------------------------------------------------------------------------


def resource_server() -> Server:
    server = Server("resources")
    seen: list[Any] = []
    server.seen = seen  # type: ignore[attr-defined]

    @server.resource("res://readme", mime_type="text/markdown", title="Read me", size=7)
    def readme() -> str:
        """The readme."""
        return "# hello"

    @server.resource("res://logo", mime_type="image/png")
    def logo() -> bytes:
        return PNG

    @server.resource("res://raw")
    async def raw() -> bytes:
        return b"\x00\xff"

    @server.resource("res://config")
    def config() -> dict[str, Any]:
        return {"debug": True, "level": 3}

    @server.resource("res://items/{id}", description="One item.")
    def item(id: int) -> str:
        seen.append(id)
        return f"item {id + 1}"

    @server.resource("res://files/{+path}", mime_type="text/plain")
    def file(path: str) -> str:
        seen.append(path)
        return f"contents of {path}"

    return server


@pytest.mark.parametrize("era", ERAS)
def test_resources_and_templates_are_listed(era: str) -> None:
    async def body() -> list[dict[str, Any]]:
        async with connected(resource_server(), era) as (client, wire):
            await client.list_resources()
            await client.list_resource_templates()
            return wire.results()[-2:]

    resources, templates = run(body)
    assert resources["resources"] == [
        {
            "uri": "res://readme",
            "name": "readme",
            "title": "Read me",
            "description": "The readme.",
            "mimeType": "text/markdown",
            "size": 7,
        },
        {"uri": "res://logo", "name": "logo", "mimeType": "image/png"},
        {"uri": "res://raw", "name": "raw"},
        {"uri": "res://config", "name": "config"},
    ]
    assert templates["resourceTemplates"] == [
        {
            "uriTemplate": "res://items/{id}",
            "name": "item",
            "description": "One item.",
            # {id} is an int: said under backchannel's own key, for a client to ask for a number
            "_meta": {
                "dev.backchannel/argumentSchema": {
                    "type": "object",
                    "properties": {"id": {"type": "integer"}},
                    "required": ["id"],
                }
            },
        },
        {"uriTemplate": "res://files/{+path}", "name": "file", "mimeType": "text/plain"},  # str only: no _meta
    ]


@pytest.mark.parametrize("era", ERAS)
def test_read_resource_contents(era: str) -> None:
    server = resource_server()
    uris = [
        "res://readme",
        "res://logo",
        "res://raw",
        "res://config",
        "res://items/41",
        "res://files/a/b c.txt",
    ]

    async def body() -> list[dict[str, Any]]:
        async with connected(server, era) as (client, wire):
            for uri in uris:
                await client.read_resource(uri)
            return wire.results()[-len(uris) :]

    readme, logo, raw, config, item, file = (result["contents"] for result in run(body))
    assert readme == [{"uri": "res://readme", "mimeType": "text/markdown", "text": "# hello"}]
    assert logo == [{"uri": "res://logo", "mimeType": "image/png", "blob": base64.b64encode(PNG).decode()}]
    assert raw == [{"uri": "res://raw", "mimeType": "application/octet-stream", "blob": "AP8="}]
    assert config == [{"uri": "res://config", "mimeType": "application/json", "text": '{"debug":true,"level":3}'}]
    assert item == [{"uri": "res://items/41", "text": "item 42"}]
    assert file == [{"uri": "res://files/a/b c.txt", "mimeType": "text/plain", "text": "contents of a/b c.txt"}]
    assert server.seen == [41, "a/b c.txt"]  # type: ignore[attr-defined]


def test_unknown_resource_code_depends_on_the_era() -> None:
    async def body(era: str) -> RequestError:
        async with connected(resource_server(), era) as (client, _):
            with pytest.raises(RequestError) as caught:
                await client.read_resource("res://nothing")
            return caught.value

    legacy = run(lambda: body("handshake"))
    modern = run(lambda: body("stateless"))
    assert legacy.code == -32002
    assert modern.code == -32602
    assert legacy.data == modern.data == {"uri": "res://nothing"}
    assert "res://nothing" in legacy.message


@pytest.mark.parametrize("era", ERAS)
def test_template_variable_of_the_wrong_type_is_invalid_params(era: str) -> None:
    async def body() -> RequestError:
        async with connected(resource_server(), era) as (client, _):
            with pytest.raises(RequestError) as caught:
                await client.read_resource("res://items/forty")
            return caught.value

    error = run(body)
    assert error.code == -32602
    assert "id" in error.message
