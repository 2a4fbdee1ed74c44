"""``backchannel call`` on a tool the server runs as a task: it waits for the end and exits with it.

0 completed, 2 failed (the task's error is the answer), 3 cancelled; ``--json`` prints the
result or the error with the task's id and status; each status change is noted on stderr.
The server is ``tasks_wire_server.py`` (by hand on the wire), in both eras.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from backchannel.cli.main import main

SERVER = [sys.executable, str(Path(__file__).resolve().parent / "tasks_wire_server.py")]
ERAS = ["handshake", "stateless"]


def call(capsys: pytest.CaptureFixture[str], era: str, tool: str, *options: str) -> tuple[int, Any, str]:
    """``backchannel call TOOL --json --era ERA -- SERVER``: (exit status, the JSON printed, stderr)."""
    status = main(["call", tool, "--json", "--era", era, *options, "--", *SERVER])
    out, err = capsys.readouterr()
    return status, json.loads(out) if out.strip() else None, err


@pytest.mark.parametrize("era", ERAS)
def test_a_task_that_completes_exits_0_with_its_result(capsys: pytest.CaptureFixture[str], era: str) -> None:
    status, result, err = call(capsys, era, "deploy", "--args", '{"steps": 3}')
    assert status == 0, err
    assert result["content"] == [{"type": "text", "text": "worked 3 steps"}] and result["isError"] is False
    assert ": working: step 2 of 3" in err and ": completed" in err  # "backchannel call: task <id>: ..."


@pytest.mark.parametrize("era", ERAS)
def test_a_task_that_fails_exits_2_with_its_error(capsys: pytest.CaptureFixture[str], era: str) -> None:
    status, printed, _err = call(capsys, era, "fail")
    assert status == 2
    assert printed["error"] == {"code": -32000, "message": "the disk is full"}
    assert printed["task"]["status"] == "failed" and printed["task"]["taskId"]


@pytest.mark.parametrize("era", ERAS)
def test_a_task_the_server_cancels_exits_3(capsys: pytest.CaptureFixture[str], era: str) -> None:
    status, printed, err = call(capsys, era, "doomed")
    assert status == 3, err
    assert printed["task"]["status"] == "cancelled"
    assert "the operator cancelled it" in printed["error"]["message"]


@pytest.mark.parametrize("era", ERAS)
def test_a_tasks_question_is_answered_from_the_answers_file(
    capsys: pytest.CaptureFixture[str], era: str, tmp_path: Path
) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"Your name": {"name": "Ada"}}))
    status, result, err = call(capsys, era, "ask", "--answers", str(answers))
    assert status == 0, err
    assert result["content"] == [{"type": "text", "text": "hello Ada"}]


@pytest.mark.parametrize("era", ERAS)
def test_a_task_out_of_time_is_cancelled_on_the_server(
    capsys: pytest.CaptureFixture[str], era: str, tmp_path: Path
) -> None:
    record = tmp_path / "received.jsonl"
    status = main(["call", "wait", "--json", "--era", era, "--timeout", "1", "--", *SERVER, "--record", str(record)])
    printed = json.loads(capsys.readouterr().out)
    assert status == 2 and printed["error"]["code"] == -32001
    received = [json.loads(line) for line in record.read_text().splitlines()]
    [created] = [m for m in received if m.get("method") == "tools/call"]
    cancels = [m for m in received if m.get("method") == "tasks/cancel"]
    assert len(cancels) == 1 and cancels[0]["params"]["taskId"] == _first_task_id(received)
    assert created["params"]["name"] == "wait"


def _first_task_id(received: list[dict[str, Any]]) -> str:
    return str(next(m["params"]["taskId"] for m in received if m.get("method") == "tasks/get"))
