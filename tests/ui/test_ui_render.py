"""Results pretty-printed: text, structured content as a table or JSON, media saved to files."""

from __future__ import annotations

import base64
import tempfile
from pathlib import Path

import msgspec
import pytest
from _ui_harness import captured_console, text

from backchannel.types.content import (
    AudioContent,
    EmbeddedResource,
    ImageContent,
    ResourceContents,
    ResourceLink,
    TextContent,
)
from backchannel.types.prompts import GetPromptResult, PromptMessage
from backchannel.types.resources import ReadResourceResult
from backchannel.types.tools import CallToolResult, Tool
from backchannel.ui import Renderer
from backchannel.ui.render import arguments_summary

PNG = b"\x89PNG\r\n\x1a\n fake"


def render(tmp_path: Path) -> tuple[Renderer, callable]:  # type: ignore[valid-type]
    console = captured_console()
    return Renderer(console, tmp_path / "out"), lambda: text(console)


def test_text_content_is_printed_as_text(tmp_path: Path) -> None:
    renderer, shown = render(tmp_path)
    renderer.tool_result("echo", CallToolResult(content=[TextContent(text="hello [bold]world[/]")]))
    assert shown() == "hello [bold]world[/]\n"  # never read as markup


def test_json_text_is_pretty_printed(tmp_path: Path) -> None:
    renderer, shown = render(tmp_path)
    renderer.tool_result("j", CallToolResult(content=[TextContent(text='{"a":1,"b":[1,2]}')]))
    assert '"a": 1' in shown() and shown().count("\n") > 3


def test_flat_structured_content_is_a_table_and_its_text_twin_is_not_repeated(tmp_path: Path) -> None:
    renderer, shown = render(tmp_path)
    result = CallToolResult(
        content=[TextContent(text='{"city":"Oslo","temperature":14.0}')],
        structured_content={"city": "Oslo", "temperature": 14.0},
    )
    renderer.tool_result("weather", result)
    lines = shown().splitlines()
    assert any("field" in line and "value" in line for line in lines)
    assert any("city" in line and "Oslo" in line for line in lines)
    assert any("temperature" in line and "14.0" in line for line in lines)
    assert '"city"' not in shown()


def test_a_list_of_records_is_a_table_with_a_column_per_key(tmp_path: Path) -> None:
    renderer, shown = render(tmp_path)
    rows = [{"name": "a", "size": 1}, {"name": "b", "owner": "ada"}]
    renderer.tool_result("ls", CallToolResult(content=[], structured_content=rows))
    header = next(line for line in shown().splitlines() if "name" in line)
    assert header.index("name") < header.index("size") < header.index("owner")
    assert any("ada" in line and "b" in line for line in shown().splitlines())


def test_nested_structured_content_is_json(tmp_path: Path) -> None:
    renderer, shown = render(tmp_path)
    renderer.tool_result("n", CallToolResult(content=[], structured_content={"a": {"b": [1, 2]}}))
    assert '"b": [' in shown()


def test_an_image_is_saved_to_a_file_and_its_path_shown(tmp_path: Path) -> None:
    renderer, shown = render(tmp_path)
    image = ImageContent(data=base64.b64encode(PNG).decode(), mime_type="image/png")
    renderer.tool_result("picture", CallToolResult(content=[TextContent(text="look"), image, image]))
    first, second = renderer.saved
    assert first.read_bytes() == PNG and first.suffix == ".png" and first.parent == tmp_path / "out"
    assert first != second and second.name == "picture-2.png"
    assert f"[image image/png, {len(PNG)} bytes] saved to {first}" in shown()
    assert shown().startswith("look\n")


def test_audio_and_binary_resources_are_saved_too(tmp_path: Path) -> None:
    renderer, shown = render(tmp_path)
    audio = AudioContent(data=base64.b64encode(b"RIFF").decode(), mime_type="audio/wav")
    blob = EmbeddedResource(
        resource=ResourceContents(uri="file:///x/data.bin", blob=base64.b64encode(b"\0\1").decode())
    )
    renderer.tool_result("media", CallToolResult(content=[audio, blob]))
    wav, binary = renderer.saved
    assert wav.suffix == ".wav" and wav.read_bytes() == b"RIFF"
    assert binary.read_bytes() == b"\0\1" and binary.name.startswith("data.bin-")
    assert "binary content saved to" in shown()


def test_the_save_directory_defaults_to_a_new_temporary_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The files are the person's to open after the session, so the code leaves them; the test
    # makes its "temporary folder" one of pytest's, which pytest removes.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    renderer = Renderer(captured_console())
    path = renderer.save(base64.b64encode(PNG).decode(), "image/png", "../../evil name")
    assert path.read_bytes() == PNG and path.parent == renderer.save_dir
    assert path.parent.parent == tmp_path and path.parent.name.startswith("backchannel-")
    assert path.name == "evil_name-1.png"


def test_links_and_embedded_text(tmp_path: Path) -> None:
    renderer, shown = render(tmp_path)
    link = ResourceLink(uri="demo://readme", name="readme", mime_type="text/markdown")
    embedded = EmbeddedResource(resource=ResourceContents(uri="demo://note", text="a note", mime_type="text/plain"))
    renderer.tool_result("t", CallToolResult(content=[link, embedded]))
    assert "[link] readme: demo://readme (text/markdown)" in shown()
    assert "demo://note (text/plain)\na note" in shown()


def test_a_tool_error_is_marked(tmp_path: Path) -> None:
    renderer, shown = render(tmp_path)
    renderer.tool_result("weather", CallToolResult(content=[TextContent(text="Tell me which city.")], is_error=True))
    assert shown() == "weather failed:\nTell me which city.\n"


def test_empty_results(tmp_path: Path) -> None:
    renderer, shown = render(tmp_path)
    renderer.tool_result("nothing", CallToolResult(content=[]))
    renderer.resource_result("x://", ReadResourceResult(contents=[]))
    assert shown() == "(no content)\n(empty)\n"
    assert CallToolResult(content=[]).structured_content is msgspec.UNSET


def test_prompt_messages_and_resources(tmp_path: Path) -> None:
    renderer, shown = render(tmp_path)
    renderer.prompt_result(
        "review",
        GetPromptResult(
            description="A review", messages=[PromptMessage(role="user", content=TextContent(text="Check this"))]
        ),
    )
    renderer.resource_result(
        "demo://readme",
        ReadResourceResult(
            contents=[ResourceContents(uri="demo://readme", text="# Title\nBody", mime_type="text/markdown")]
        ),
    )
    out = shown()
    assert "A review\nuser:\nCheck this\n" in out
    assert "Title" in out and "# Title" not in out  # markdown rendered
    assert "Body" in out


def test_lists_are_tables(tmp_path: Path) -> None:
    renderer, shown = render(tmp_path)
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"default": 1}}, "required": ["a"]}
    renderer.tools([Tool(name="add", description="Add two integers.\nMore.", input_schema=schema)])
    assert arguments_summary(schema) == "a*, b=1"
    assert "1 tool" in shown()
    assert any("add" in line and "a*, b=1" in line and "Add two integers." in line for line in shown().splitlines())
    assert "More." not in shown()
    renderer.tools([])
    renderer.prompts([])
    renderer.resources([])
    renderer.templates([])
    assert "No tools.\nNo prompts.\nNo resources.\nNo resource templates.\n" in shown()
