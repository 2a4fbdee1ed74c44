"""The terminal's sampling handler in process, on the wire: tools offered in sampling, answered by
an endpoint (``tool_calls``) or by the person (``use <tool> {json}``), the multi-turn tool loop of
``client/sampling.mdx``, and the capability ``connect`` declares."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from _fake_model import fake_chat
from rich.console import Console

from backchannel.cli.loader import load_server
from backchannel.testing import Tap, connected
from backchannel.testing import run as kit_run
from backchannel.ui import Question, TerminalSession, scripted
from backchannel.ui.sampling_models import EndpointModel, SamplingModel

SERVER = Path(__file__).resolve().parent / "sampling_server.py"
#: The endpoint's tool call, as OpenAI writes it.
CALL_P = {"id": "call_p", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}


class Driven:
    def __init__(self, session: TerminalSession, asked: list[Question]) -> None:
        self.session = session
        self.asked = asked

    @property
    def output(self) -> str:
        file = self.session.console.file
        assert isinstance(file, io.StringIO)
        return file.getvalue()


@asynccontextmanager
async def driven(
    era: str, answers: list[str], model: SamplingModel | None = None, tap: Tap | None = None
) -> AsyncIterator[Driven]:
    console = Console(file=io.StringIO(), width=200, color_system=None, highlight=False)
    asked: list[Question] = []
    session = TerminalSession(console, scripted(answers, asked))
    session.sampling.model = model
    wrap = tap.around if tap is not None else None
    async with connected(load_server(str(SERVER)), era, wrap_server=wrap, **session.client_options()) as client:
        await session.start(client)
        yield Driven(session, asked)


def tool_text(output: str) -> str:
    return output.rsplit("forecast", 1)[-1]


def test_connect_declares_sampling_with_tools() -> None:
    async def main() -> None:
        async with driven("handshake", []) as ui:
            await ui.session.execute("call capabilities")
            assert '"sampling": {' in ui.output and '"tools": {}' in ui.output

    kit_run(main(), 30)


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_an_endpoint_runs_the_tool_loop_with_the_person_approving_each_step(era: str) -> None:
    tap = Tap()

    async def main(chat: Any) -> None:
        chat.replies.append(
            {
                "text": None,
                "tool_calls": [CALL_P],
            }
        )
        chat.replies.append({"text": "Mild in Paris: 18C."})
        async with driven(era, ["y", "y", "y", "y"], EndpointModel(chat.url, "fake-1"), tap) as ui:
            assert await ui.session.execute("call forecast city=Paris")
            out = ui.output
        assert "tools offered (tool choice auto):" in out and "get_weather: Current weather for a city" in out
        assert 'assistant: [uses tool get_weather {"city": "Paris"} (id call_p)]' in out  # the reply, shown
        assert "user: [result of call_p: Paris: 18C]" in out  # the continuation, shown
        assert "fake-1-2025 after 1 tool use(s): Mild in Paris: 18C." in out
        assert [question.prompt.split("?")[0] for question in ui.asked] == [
            f"Send it to the model fake-1 at {chat.url}",
            "Return it to the server",
        ] * 2

    with fake_chat() as chat:
        kit_run(main(chat), 30)
    first, second = (body for _, body in chat.requests)
    assert first["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Current weather for a city",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
            },
        }
    ]
    assert first["tool_choice"] == "auto" and second["tool_choice"] == "none"
    assert second["messages"][1:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [CALL_P],
        },
        {"role": "tool", "tool_call_id": "call_p", "content": "Paris: 18C"},
    ]
    if era == "handshake":  # the server got the model's tool use, as the spec's example shows it
        (request,) = tap.requests_written("sampling/createMessage")[:1]
        (response,) = tap.responses_received(request["id"])
        assert response["result"] == {
            "role": "assistant",
            "content": {"type": "tool_use", "id": "call_p", "name": "get_weather", "input": {"city": "Paris"}},
            "model": "fake-1-2025",
            "stopReason": "toolUse",
        }


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_the_person_uses_a_tool_then_answers(era: str) -> None:
    tap = Tap()

    async def main() -> None:
        answers = ['use get_weather {"city": Paris}', 'use get_weather {"city": "Paris"}', "Mild, 18C."]
        async with driven(era, answers, tap=tap) as ui:
            assert await ui.session.execute("call forecast city=Paris")
            out = ui.output
        assert "use <tool> {json} calls one of the tools offered" in out
        assert "the arguments of get_weather must be a JSON object" in out  # asked again, nothing sent
        assert "user: [result of call_" in out and ": Paris: 18C]" in out
        assert "human after 1 tool use(s): Mild, 18C." in out
        assert ui.asked[0].completions == ("use get_weather",)

    kit_run(main(), 30)
    if era == "handshake":
        request = tap.requests_written("sampling/createMessage")[0]
        (response,) = tap.responses_received(request["id"])
        result = response["result"]
        assert result["stopReason"] == "toolUse" and result["model"] == "human"
        assert result["content"]["type"] == "tool_use" and result["content"]["input"] == {"city": "Paris"}


def test_a_reply_that_names_no_tool_offered_is_text() -> None:
    async def main() -> None:
        async with driven("handshake", ["use the sunshine, it is 18C"]) as ui:
            assert await ui.session.execute("call forecast city=Paris")
            assert "human without tools: use the sunshine, it is 18C" in ui.output

    kit_run(main(), 30)


def test_an_endpoint_that_fails_is_said_and_the_server_told() -> None:
    async def main(chat: Any) -> None:
        chat.replies.append(401)
        async with driven("handshake", ["y"], EndpointModel(chat.url, "fake-1", "sk-secret-1")) as ui:
            assert await ui.session.execute("call forecast city=Paris")
            out = ui.output
        assert f"No reply from the model fake-1 at {chat.url}: {chat.url} answered HTTP 401" in out
        assert "the client's model could not answer the sampling request" in out  # the tool's error, from the server
        assert "sk-secret-1" not in out
        assert "sk-secret-1" not in repr(EndpointModel(chat.url, "fake-1", "sk-secret-1"))

    with fake_chat() as chat:
        kit_run(main(chat), 30)
    assert json.dumps(chat.requests[0][1]).count("Paris") == 1
