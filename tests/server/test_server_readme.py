"""The README's server example, run as written: its claims must hold."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _server_harness import ERAS, connected, run

from backchannel import Server


def readme_server() -> Server:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    source = readme.split("## A server", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    namespace: dict[str, Any] = {"__name__": "readme_example"}
    exec(compile(source, "README.md", "exec", dont_inherit=True), namespace)
    server = namespace["server"]
    assert isinstance(server, Server)
    return server


@pytest.mark.parametrize("era", ERAS)
def test_readme_server_example_does_what_it_says(era: str) -> None:
    progress: list[tuple[float, float | None, str | None]] = []

    async def body() -> tuple[Any, ...]:
        async with connected(readme_server(), era) as (client, _):
            tools = await client.list_tools()
            ok = await client.call_tool(
                "forecast", {"city": "Oslo"}, on_progress=lambda p: progress.append((p.progress, p.total, p.message))
            )
            failed = await client.call_tool("forecast", {"city": ""})
            prompt = await client.get_prompt("summarize", {"text": "words"})
            station = await client.read_resource("weather://stations/7")
            return tools, ok, failed, prompt, station

    tools, ok, failed, prompt, station = run(body)
    (forecast,) = tools
    assert forecast.input_schema["properties"]["city"] == {"type": "string", "description": "a city name"}
    assert forecast.output_schema["properties"] == {"city": {"type": "string"}, "temperature": {"type": "number"}}
    assert ok.structured_content == {"city": "Oslo", "temperature": 21.5}
    assert progress == [(0.5, 1.0, "asking the sky")]
    assert failed.is_error is True and failed.content[0].text == "Which city?"
    assert prompt.messages[0].content.text == "Summarize:\nwords"
    assert station.contents[0].text == '{"id":7}'
