"""``backchannel call``: one call, questions answered from a file, the result as JSON, the exit status."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _ui_harness import ROOT, UI_SERVER, run

from backchannel.cli.main import main
from backchannel.client.url_flow import UrlElicitation
from backchannel.ui.batch import Answers, AnswersError, split_target
from peers.paths import EVERYTHING_STDIO_CMD, have_npm_peers

ISSUES = f"{shlex.quote(sys.executable)} {shlex.quote(str(ROOT / 'examples' / 'issue_tracker.py'))}"
UITEST = f"{shlex.quote(sys.executable)} {shlex.quote(str(UI_SERVER))}"
EVERYTHING = shlex.join(EVERYTHING_STDIO_CMD)
needs_npm = pytest.mark.skipif(not have_npm_peers(), reason="the npm test peers are not installed")
FORM = {
    "type": "object",
    "properties": {"name": {"type": "string", "minLength": 2}, "plan": {"type": "string", "enum": ["a", "b"]}},
    "required": ["name"],
}


def call(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    """``backchannel call ... --json`` in this process: (exit status, the JSON printed, stderr)."""
    status = main(["call", *args, "--json"])
    out, err = capsys.readouterr()
    return status, json.loads(out) if out.strip() else None, err


def answers_file(tmp_path: Path, answers: Any) -> str:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(answers))
    return str(path)


def texts(result: dict[str, Any]) -> str:
    return "\n".join(block.get("text", "") for block in result["content"])


# -- the answers file --------------------------------------------------------------------------------


def test_answers_keyed_by_message_are_reused_and_star_answers_the_rest() -> None:
    notes: list[str] = []
    answers = Answers({"sign up": {"name": "Ada"}, "Delete": "decline", "*": {"action": "cancel"}}, notes.append)
    ask = {"message": "Please sign up.", "requestedSchema": FORM}
    assert run(answers.form(ask)) == {"action": "accept", "content": {"name": "Ada"}}
    assert run(answers.form(ask)) == {"action": "accept", "content": {"name": "Ada"}}
    assert run(answers.form({"message": "Delete it?"})) == {"action": "decline"}
    assert run(answers.form({"message": "Anything else?"})) == {"action": "cancel"}
    assert notes == [] and answers.problems == []


def test_answers_in_order_are_used_once_then_questions_are_cancelled() -> None:
    notes: list[str] = []
    answers = Answers([{"action": "accept", "content": {"name": "Bo", "plan": "b"}}, "decline"], notes.append)
    ask = {"message": "Who?", "requestedSchema": FORM}
    assert run(answers.form(ask)) == {"action": "accept", "content": {"name": "Bo", "plan": "b"}}
    assert run(answers.form(ask)) == {"action": "decline"}
    assert run(answers.form(ask)) == {"action": "cancel"}
    assert notes == ["no answer for the question 'Who?': cancelled"]


def test_an_answer_that_does_not_fit_the_form_is_never_sent() -> None:
    answers = Answers([{"name": "A"}, {"name": "Ada", "plan": "z"}, "maybe", 7], lambda text: None)
    ask = {"message": "Who?", "requestedSchema": FORM}
    for _ in range(4):
        assert run(answers.form(ask)) == {"action": "cancel"}
    assert len(answers.problems) == 4
    assert "does not fit the form" in answers.problems[0] and "unknown action 'maybe'" in answers.problems[2]


def test_url_requests_are_declined_unless_the_file_accepts_them() -> None:
    notes: list[str] = []
    request = UrlElicitation("https://auth.example.com/x", "Connect.\n\nConfirmation code: 1234-5678.", "srv")
    assert run(Answers({}, notes.append).url(request)) == "decline"
    assert run(Answers({"Connect": "cancel"}, notes.append).url(request)) == "cancel"
    assert run(Answers({"Connect": {"action": "accept"}}, notes.append).url(request)) == "accept"
    assert notes == [
        "srv asks to open https://auth.example.com/x (site auth.example.com)",
        "the page asks for the confirmation code 1234-5678",
    ]


def test_a_file_that_is_not_answers_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AnswersError, match="object"):
        Answers("decline")
    (tmp_path / "bad.json").write_text("{nope")
    with pytest.raises(AnswersError, match="not valid JSON"):
        Answers.load(tmp_path / "bad.json")
    with pytest.raises(AnswersError, match="cannot read"):
        Answers.load(tmp_path / "missing.json")


def test_the_server_is_a_command_line_or_a_url() -> None:
    assert split_target("python 'my server.py' --x") == ["python", "my server.py", "--x"]
    assert split_target("https://example.com/mcp") == ["https://example.com/mcp"]


# -- against our examples ------------------------------------------------------------------------------


def test_issue_tracker_with_an_answers_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    answers = answers_file(tmp_path, {"Where should": {"project_key": "API", "issue_type": "bug", "labels": ["docs"]}})
    status, result, _ = call(capsys, ISSUES, "create_issue", "--args", '{"summary": "Docs 404"}', "--answers", answers)
    assert status == 0 and result["isError"] is False
    assert texts(result) == "Filed API-1 (bug): Docs 404 — priority medium; labels docs"
    # key=value arguments follow the tool's schema; a declined form is the tool's business.
    declined = answers_file(tmp_path, ["decline"])
    status, result, _ = call(capsys, ISSUES, "create_issue", "--args", "summary=Later", "--answers", declined)
    assert status == 0 and texts(result).startswith("Understood: nothing was filed")


def test_exit_status_1_for_a_tool_error_and_2_for_a_protocol_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, result, _ = call(capsys, ISSUES, "create_issue", "--args", '{"summary": " "}')
    assert status == 1 and result["isError"] is True and "The summary is empty" in texts(result)
    status, result, _ = call(capsys, ISSUES, "no_such_tool")
    assert status == 2 and result["error"]["code"] == -32602
    # Arguments that fail validation are a tool execution error too (SEP-1303), naming the field.
    status, result, _ = call(capsys, ISSUES, "create_issue", "--args", '{"summary": 3}')
    assert status == 1 and result["isError"] is True and "summary: expected a string, got 3" in texts(result)
    # An answer that does not fit the form: the question is cancelled and the status says so.
    bad = answers_file(tmp_path, [{"project_key": "NOPE", "issue_type": "bug"}])
    status, result, err = call(capsys, ISSUES, "create_issue", "--args", '{"summary": "x"}', "--answers", bad)
    assert status == 2 and texts(result).startswith("Cancelled: nothing was filed")
    assert "does not fit the form" in err
    status, result, err = call(capsys, ISSUES, "create_issue", "--answers", str(tmp_path / "missing.json"))
    assert status == 2 and result is None and "cannot read the answers file" in err
    status, result, err = call(capsys, "/nonexistent/server-binary", "x")
    assert status == 2 and "could not talk to the server" in err


def test_a_slow_call_times_out_and_logs_go_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    status, result, err = call(capsys, UITEST, "chatty", "--log-level", "info")
    assert status == 0 and texts(result) == "done"
    assert "[info] an info line" in err and "[warning] a warning line" in err and "debug" not in err
    status, result, err = call(capsys, UITEST, "slow", "--args", "steps=100", "--timeout", "1")
    assert status == 2 and "no answer within 1 second" in err


def test_the_console_script_prints_text_without_json() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "backchannel", "call", ISSUES, "create_issue", "--args", '{"summary": " "}'],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=ROOT,
    )
    assert done.returncode == 1 and "create_issue failed:" in done.stdout and "The summary is empty" in done.stdout
    shown = subprocess.run(
        [sys.executable, "-m", "backchannel", "call", "--help"], capture_output=True, text=True, timeout=30
    )
    assert "The answers file" in shown.stdout and "keyed answer is used as often" in shown.stdout


# -- against server-everything -------------------------------------------------------------------------


@needs_npm
def test_server_everything_echo_sum_and_a_form(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, result, _ = call(capsys, EVERYTHING, "echo", "--args", '{"message": "hello"}')
    assert status == 0 and texts(result) == "Echo: hello"
    status, result, _ = call(capsys, EVERYTHING, "get-sum", "--args", "a=2 b=3")
    assert status == 0 and texts(result) == "The sum of 2 and 3 is 5."
    answers = answers_file(tmp_path, {"Please provide inputs": {"name": "Ada", "check": True, "integer": 7}})
    status, result, _ = call(capsys, EVERYTHING, "trigger-elicitation-request", "--answers", answers)
    shown = texts(result)
    assert status == 0 and "User provided the requested information" in shown
    assert "- Name: Ada" in shown and "- Favorite Integer: 7" in shown
    assert "- Favorite Number: 3.14" in shown  # a default filled in by the client
    declined = answers_file(tmp_path, ["decline"])
    status, result, _ = call(capsys, EVERYTHING, "trigger-elicitation-request", "--answers", declined)
    assert status == 0 and "User declined" in texts(result)
