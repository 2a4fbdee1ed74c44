"""Tools that are not plain functions are served by what they return, in both eras, and a bad
tool name is a -32602 naming the problem (not an internal error)."""

from __future__ import annotations

import asyncio
import functools
from typing import Any

import pytest
from _server_harness import RawPeer, error_of, result_of, run

from backchannel import Server


class Greeter:
    async def __call__(self, name: str) -> str:
        return f"hello {name}"


async def _shout(text: str, suffix: str) -> str:
    await asyncio.sleep(0)
    return text.upper() + suffix


def _server() -> Server:
    server = Server("callables")
    server.add_tool(Greeter(), name="greet")
    server.add_tool(functools.partial(_shout, suffix="!"), name="shout")
    server.add_tool(lambda text: _shout(text, "?"), name="ask_back")  # a plain lambda returning a coroutine
    return server


@pytest.mark.parametrize(
    ("tool", "arguments", "text"),
    [("greet", {"name": "Ada"}, "hello Ada"), ("shout", {"text": "hi"}, "HI!"), ("ask_back", {"text": "hi"}, "HI?")],
)
def test_async_callables_are_awaited(tool: str, arguments: dict[str, Any], text: str) -> None:
    async def body() -> list[dict[str, Any]]:
        async with RawPeer(_server()) as peer:
            await peer.initialize()
            # twice: the second call takes whatever path the first one settled on
            return [result_of(await peer.send("tools/call", {"name": tool, "arguments": arguments})) for _ in range(2)]

    for result in run(body):
        assert result["content"] == [{"type": "text", "text": text}]


@pytest.mark.parametrize("name", [["echo"], {"a": 1}, 7, None])
def test_a_tool_name_that_is_not_a_string_is_invalid_params(name: object) -> None:
    async def body() -> dict[str, Any]:
        async with RawPeer(_server()) as peer:
            await peer.initialize()
            return error_of(await peer.send("tools/call", {"name": name}))

    error = run(body)
    assert error["code"] == -32602
    assert "name" in error["message"]


def test_image_and_audio_read_files_with_a_guessed_type(tmp_path: Any) -> None:
    from backchannel import Audio, Image

    png = tmp_path / "dot.png"
    png.write_bytes(b"\x89PNG-ish")
    wav = tmp_path / "beep.wav"
    wav.write_bytes(b"RIFF-ish")
    assert Image.from_file(png).to_block() == {"type": "image", "data": "iVBORy1pc2g=", "mimeType": "image/png"}
    audio = Audio.from_file(wav).to_block()
    assert audio["type"] == "audio" and audio["mimeType"] in ("audio/wav", "audio/x-wav")
    assert Image.from_file(png, "image/x-custom").mime_type == "image/x-custom"
