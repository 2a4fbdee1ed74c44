"""The translation between ``sampling/createMessage`` and an OpenAI-compatible chat completion
(``ui/openai_chat.py``), and what a sampling command may write (``ui/sampling_models.py``)."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from backchannel.protocol.sampling import check_result
from backchannel.testing import run
from backchannel.ui.openai_chat import ChatAnswerError, chat_request, sampling_result
from backchannel.ui.sampling import describe_block
from backchannel.ui.sampling_models import CommandModel, ModelFailed, sampling_model

ECHO_MODEL = Path(__file__).resolve().parent / "echo_model.py"
PIXEL = "iVBORw0KGgo="


def answer(message: dict[str, Any], finish: str | None = "stop") -> dict[str, Any]:
    return {"model": "m-1", "choices": [{"index": 0, "message": message, "finish_reason": finish}]}


def test_images_and_audio_become_content_parts() -> None:
    params = {
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is this?"},
                    {"type": "image", "data": PIXEL, "mimeType": "image/png"},
                    {"type": "audio", "data": "UklGRg==", "mimeType": "audio/mpeg"},
                ],
            }
        ],
        "maxTokens": 5,
        "stopSequences": ["END"],
        "modelPreferences": {"hints": [{"name": "claude"}]},  # the endpoint's model was chosen by the person
    }
    assert chat_request(params, "m") == {
        "model": "m",
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is this?"},
                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PIXEL}"}},
                    {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "mp3"}},
                ],
            }
        ],
        "max_tokens": 5,
        "stop": ["END"],
    }


@pytest.mark.parametrize(
    ("finish", "stop_reason"),
    [("stop", "endTurn"), ("length", "maxTokens"), ("content_filter", "content_filter"), (None, None)],
)
def test_finish_reasons_become_stop_reasons(finish: str | None, stop_reason: str | None) -> None:
    result = sampling_result(answer({"role": "assistant", "content": "Hi."}, finish), "asked-for")
    assert result.get("stopReason") == stop_reason
    assert result["content"] == {"type": "text", "text": "Hi."} and result["model"] == "m-1"
    check_result(result, tools_offered=False)


def test_text_beside_tool_calls_is_kept_before_them() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}
    result = sampling_result(answer({"content": "Looking.", "tool_calls": [call]}, "tool_calls"), "m")
    assert result["content"] == [
        {"type": "text", "text": "Looking."},
        {"type": "tool_use", "id": "c1", "name": "f", "input": {"x": 1}},
    ]
    assert result["stopReason"] == "toolUse"
    check_result(result, tools_offered=True)


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ({"choices": []}, "no choices[0].message"),
        ({"error": "x"}, "no choices[0].message"),
        (answer({"content": None}), "neither text nor tool calls"),
        (answer({"tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{"}}]}), "are not JSON"),
        (answer({"tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "[1]"}}]}), "not a JSON object"),
    ],
)
def test_an_answer_we_cannot_read_is_an_error(body: Any, said: str) -> None:
    with pytest.raises(ChatAnswerError, match=re.escape(said)):
        sampling_result(body, "m")


def test_blocks_are_described_by_kind_and_size() -> None:
    image = {"type": "image", "data": "A" * 4000, "mimeType": "image/png"}
    assert describe_block(image) == "[image image/png, 3,000 bytes]"
    error = {"type": "tool_result", "toolUseId": "c", "isError": True, "content": [{"type": "text", "text": "no"}]}
    assert describe_block(error) == "[result of c (an error): no]"


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ('{"content": {"type": "text", "text": "hi"}}', {"type": "text", "text": "hi"}),
        ("just words\n", {"type": "text", "text": "just words"}),
        ('"a JSON string"', {"type": "text", "text": '"a JSON string"'}),
    ],
)
def test_what_a_command_writes_becomes_a_result(written: str, expected: dict[str, Any]) -> None:
    model = CommandModel("tool-x --flag")
    result = model._result(written)
    assert result["content"] == expected and result["role"] == "assistant" and result["model"] == "tool-x"


def test_a_command_that_cannot_start_or_writes_nothing_fails() -> None:
    with pytest.raises(ModelFailed, match="could not start /nonexistent/model"):
        run(CommandModel("/nonexistent/model").complete({"messages": []}))
    with pytest.raises(ModelFailed, match="wrote nothing on stdout"):
        run(CommandModel(f"{sys.executable} -c pass").complete({"messages": []}))


def test_no_sampling_options_mean_the_person_answers() -> None:
    assert sampling_model() is None
    with pytest.raises(ValueError, match="empty"):
        sampling_model(command="  ")


def test_a_command_does_not_outlive_a_cancelled_request(tmp_path: Path) -> None:
    """Ctrl-C (or ``call``'s timeout) cancels the request: the command is killed, not left running."""
    told = tmp_path / "pid"
    os.mkfifo(told)  # the command says its pid through it once it runs: reading waits for that
    script = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(600)"
    model = CommandModel(f'{sys.executable} -c "{script}" {told}')

    async def main() -> int:
        task = asyncio.ensure_future(model.complete({"messages": []}))
        pid = int(await asyncio.to_thread(told.read_text))
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return pid

    pid = run(main(), 20)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
