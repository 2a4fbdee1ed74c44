"""``backchannel call`` answers sampling requests from its answers file, an endpoint or a command.

Against server-everything's ``trigger-sampling-request`` (handshake era: it echoes on the wire
the ``CreateMessageResult`` it received, or the error) and the demo's ``haiku`` tool (both eras).
``client/sampling.mdx``: a refusal is error -1, "User rejected sampling request"; in 2026-07-28
(mrtr.mdx) nothing is sent for it, and the call ends.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from _fake_model import fake_chat

from backchannel.cli.main import main
from peers.paths import EVERYTHING_STDIO_CMD, TESTS_DIR, have_npm_peers

ROOT = Path(__file__).resolve().parents[2]
DEMO = [sys.executable, "-m", "backchannel", "run", str(ROOT / "examples" / "demo_server.py")]
ECHO_MODEL = f"{sys.executable} {Path(__file__).resolve().parent / 'echo_model.py'}"
SAMPLE = "trigger-sampling-request"
needs_npm = pytest.mark.skipif(not have_npm_peers(), reason="the npm test peers are not installed")


def call(capsys: pytest.CaptureFixture[str], *args: str, server: list[str] = DEMO) -> tuple[int, Any, str]:
    """``backchannel call ... --json -- SERVER`` in this process: (exit status, the JSON printed, stderr)."""
    status = main(["call", *args, "--json", "--", *server])
    out, err = capsys.readouterr()
    return status, json.loads(out) if out.strip() else None, err


def answers(tmp_path: Path, value: Any) -> str:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(value))
    return str(path)


def text(result: dict[str, Any]) -> str:
    return "\n".join(block.get("text", "") for block in result["content"])


def sampled(result: dict[str, Any]) -> dict[str, Any]:
    """The ``CreateMessageResult`` server-everything received, as its tool reports it."""
    body = text(result)
    assert body.startswith("LLM sampling result:"), body
    received: dict[str, Any] = json.loads(body.removeprefix("LLM sampling result:"))
    return received


# -- the answers file ------------------------------------------------------------------------------


@needs_npm
def test_everything_gets_the_reply_from_the_answers_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(TESTS_DIR)
    file = answers(tmp_path, {"context: ducks": "Ducks paddle.", "*": "decline"})
    status, result, err = call(capsys, SAMPLE, "--args", "prompt=ducks", "--answers", file, server=EVERYTHING_STDIO_CMD)
    assert status == 0, err
    assert sampled(result) == {
        "role": "assistant",
        "content": {"type": "text", "text": "Ducks paddle."},
        "model": "answers-file",
        "stopReason": "endTurn",
    }


@needs_npm
def test_everything_hears_error_minus_one_when_the_file_declines(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(TESTS_DIR)
    file = answers(tmp_path, {"*": "decline"})
    status, result, err = call(capsys, SAMPLE, "--args", "prompt=x", "--answers", file, server=EVERYTHING_STDIO_CMD)
    assert status == 1, err  # the tool failed: it got our error, which it reports with its code
    assert result["isError"] is True and text(result) == "MCP error -1: User rejected sampling request"


@needs_npm
def test_without_a_way_to_answer_sampling_is_not_declared(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """server-everything lists its sampling tool only for a client that declared ``sampling``."""
    monkeypatch.chdir(TESTS_DIR)
    status, result, err = call(capsys, SAMPLE, "--args", "prompt=x", server=EVERYTHING_STDIO_CMD)
    assert status == 1 and result["isError"] is True  # it answers an unknown tool with isError
    assert "no tool named 'trigger-sampling-request'" in err


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_the_demo_haiku_from_the_answers_file(capsys: pytest.CaptureFixture[str], tmp_path: Path, era: str) -> None:
    poem = {"content": {"type": "text", "text": "Rain on the tin roof"}, "model": "poet-9"}
    file = answers(tmp_path, [poem])
    status, result, err = call(capsys, "haiku", "--args", "topic=rain", "--answers", file, "--era", era)
    assert status == 0, err
    assert text(result) == "A haiku about rain, by poet-9:\nRain on the tin roof"


def test_a_refusal_in_the_stateless_era_ends_the_call(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """mrtr.mdx: the server waits for nothing, so a refused sample is not sent; the call ends with -1."""
    file = answers(tmp_path, {"haiku": "decline"})
    status, result, err = call(capsys, "haiku", "--args", "topic=rain", "--answers", file, "--era", "stateless")
    assert status == 2
    assert result["error"]["code"] == -1 and "refused" in result["error"]["message"]
    assert "the sampling request was refused" in err


def test_a_refusal_in_the_handshake_era_reaches_the_server(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    file = answers(tmp_path, ["decline"])
    status, result, _ = call(capsys, "haiku", "--args", "topic=rain", "--answers", file, "--era", "handshake")
    assert status == 1
    assert text(result) == "No haiku: the client answered 'User rejected sampling request' (-1)."


def test_an_answer_that_is_not_a_reply_is_never_sent(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A form's answer given to a sampling request: refused, and the exit status says it went wrong."""
    file = answers(tmp_path, [{"name": "Ada"}])
    status, result, err = call(capsys, "haiku", "--args", "topic=rain", "--answers", file, "--era", "handshake")
    assert status == 2
    assert "User rejected sampling request" in text(result)
    assert "is not a reply" in err


# -- an endpoint, a command --------------------------------------------------------------------------


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_an_endpoint_answers_with_the_key_from_the_environment(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, era: str
) -> None:
    monkeypatch.setenv("FAKE_CHAT_KEY", "sk-test-0042")
    with fake_chat() as chat:
        key = ["--sampling-key-env", "FAKE_CHAT_KEY"]
        endpoint = ["--sampling-endpoint", chat.url, "--sampling-model", "fake-1", *key]
        status, result, err = call(capsys, "haiku", "--args", "topic=rain", "--era", era, *endpoint)
    assert status == 0, err
    assert text(result) == "A haiku about rain, by fake-1-2025:\nfake says: Write a haiku about rain."
    ((headers, body),) = chat.requests
    assert headers["authorization"] == "Bearer sk-test-0042"
    assert body == {
        "model": "fake-1",
        "messages": [
            {"role": "system", "content": "You are a poet who answers only in haiku."},
            {"role": "user", "content": "Write a haiku about rain."},
        ],
        "max_tokens": 60,
        "temperature": 0.8,
    }
    assert "sk-test-0042" not in err and f"answered by the model fake-1 at {chat.url}" in err


@needs_npm
def test_everything_gets_what_the_endpoint_answered(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(TESTS_DIR)
    with fake_chat() as chat:
        chat.replies.append({"text": "Quack.", "finish_reason": "length"})
        endpoint = ["--sampling-endpoint", chat.url, "--sampling-model", "fake-1"]
        status, result, err = call(capsys, SAMPLE, "--args", "prompt=ducks", *endpoint, server=EVERYTHING_STDIO_CMD)
    assert status == 0, err
    assert sampled(result) == {
        "role": "assistant",
        "content": {"type": "text", "text": "Quack."},
        "model": "fake-1-2025",
        "stopReason": "maxTokens",
    }
    ((headers, body),) = chat.requests
    assert "authorization" not in headers  # no --sampling-key-env: no key
    assert body["messages"][-1] == {"role": "user", "content": "Resource trigger-sampling-request context: ducks"}
    assert body["max_tokens"] == 100 and body["temperature"] == 0.7


def test_an_endpoint_that_fails_is_never_passed_off_as_a_reply(capsys: pytest.CaptureFixture[str]) -> None:
    with fake_chat() as chat:
        chat.replies.append(500)
        endpoint = ["--sampling-endpoint", chat.url, "--sampling-model", "fake-1"]
        status, result, err = call(capsys, "haiku", "--args", "topic=rain", "--era", "handshake", *endpoint)
    assert status == 2
    assert "could not answer the sampling request" in text(result)
    assert "answered HTTP 500" in err


@pytest.mark.parametrize("era", ["handshake", "stateless"])
@pytest.mark.parametrize("plain", [False, True], ids=["json", "plain"])
def test_a_command_answers(capsys: pytest.CaptureFixture[str], tmp_path: Path, era: str, plain: bool) -> None:
    kept = tmp_path / "request.json"
    command = f"{ECHO_MODEL} --keep {kept}" + (" --plain" if plain else "")
    status, result, err = call(capsys, "haiku", "--args", "topic=snow", "--era", era, "--sampling-command", command)
    assert status == 0, err
    by = Path(sys.executable).name if plain else "echo-model"  # plain text: the model is the program's name
    assert text(result).startswith(f"A haiku about snow, by {by}") and "echo: Write a haiku about snow." in text(result)
    given = json.loads(kept.read_text())
    assert given["systemPrompt"] == "You are a poet who answers only in haiku." and given["maxTokens"] == 60


@needs_npm
def test_a_failing_command_fails_the_request(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(TESTS_DIR)
    command = ["--sampling-command", f"{ECHO_MODEL} --fail"]
    status, result, err = call(capsys, SAMPLE, "--args", "prompt=x", *command, server=EVERYTHING_STDIO_CMD)
    assert status == 2
    assert "-32603" in text(result) and "could not answer the sampling request" in text(result)
    assert "exited with status 3: echo_model: out of ideas" in err


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["--sampling-model", "m"], "need --sampling-endpoint"),
        (["--sampling-endpoint", "http://127.0.0.1:9/v1/chat/completions"], "needs --sampling-model"),
        (
            ["--sampling-endpoint", "http://127.0.0.1:9/x", "--sampling-model", "m", "--sampling-key-env", "NO_KEY"],
            "the environment has no NO_KEY",
        ),
        (["--sampling-endpoint", "http://127.0.0.1:9/x", "--sampling-command", "cat"], "give one"),
    ],
)
def test_sampling_options_that_do_not_fit_stop_before_anything_starts(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, options: list[str], said: str
) -> None:
    monkeypatch.delenv("NO_KEY", raising=False)
    status = main(["call", "haiku", *options, "--", "/nonexistent/server"])
    assert status == 2 and said in capsys.readouterr().err
