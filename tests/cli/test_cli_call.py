"""``backchannel call`` as a script sees it (issue 18, items 5 and 9).

* The server is given as ``connect`` takes it, separate words after ``--``; the older form,
  one command-line string before the tool, still works.
* An unknown tool gets a "did you mean", whether the server answers it with a JSON-RPC error
  (backchannel) or with an ``isError`` result (the official Python SDK).
* With ``--json`` every failure prints a JSON error object on stdout, a connection failure
  included, and the exit status is 2.
"""

from __future__ import annotations

import json
import shlex
import sys
from typing import Any

from _subprocesses import ROOT, run_cli

DEMO = [sys.executable, str(ROOT / "examples" / "demo_server.py")]
PYSDK = [sys.executable, str(ROOT / "tests" / "peers" / "pysdk_server.py")]
TIMEOUT = 60


def call(*args: str) -> tuple[int, Any, str]:
    """``backchannel call ARGS`` in a process of its own: (exit status, stdout as JSON or None, stderr)."""
    done = run_cli("call", *args, timeout=TIMEOUT, cwd=ROOT)
    out = done.stdout.strip()
    return done.returncode, json.loads(out) if out.startswith("{") else (out or None), done.stderr


def test_the_server_as_separate_words_after_a_double_dash() -> None:
    status, result, err = call("add", "--args", "a=2 b=40", "--json", "--", *DEMO)
    assert status == 0, err
    assert result["structuredContent"] == {"result": 42}


def test_the_older_one_string_form_still_works() -> None:
    status, result, err = call(shlex.join(DEMO), "add", "--args", '{"a": 1, "b": 2}', "--json")
    assert status == 0, err
    assert result["structuredContent"] == {"result": 3}


def test_words_after_the_double_dash_belong_to_the_server() -> None:
    # ``--json`` after ``--`` is the server's argument, not ours: the demo server ignores it, and
    # the result comes as text, not JSON.
    status, result, err = call("add", "--args", "a=1 b=1", "--", *DEMO, "--json")
    assert status == 0, err
    assert isinstance(result, str) and "2" in result


def test_an_unknown_tool_gets_a_did_you_mean_from_a_json_rpc_error() -> None:
    status, result, err = call("ad", "--json", "--", *DEMO)
    assert status == 2
    assert result["error"]["code"] == -32602
    assert result["hint"] == "no tool named 'ad'; did you mean 'add'?"
    assert "did you mean 'add'?" in err
    status, result, err = call("ad", "--", *DEMO)
    assert status == 2 and result is None
    assert "did you mean 'add'?" in err


def test_an_unknown_tool_gets_a_did_you_mean_from_an_is_error_result() -> None:
    # The official Python SDK answers an unknown tool with a result, isError: true.
    status, result, err = call("ech", "--json", "--", *PYSDK)
    assert status == 1 and result["isError"] is True
    assert "no tool named 'ech'; did you mean 'echo'?" in err


def test_an_unknown_tool_nothing_is_close_to_lists_the_tools() -> None:
    status, result, _ = call("zzzzzz", "--json", "--", *DEMO)
    assert status == 2
    assert result["hint"].startswith("no tool named 'zzzzzz'; the server's tools: ") and "add" in result["hint"]


def test_a_known_tool_failing_gets_no_did_you_mean() -> None:
    status, result, err = call("add", "--args", '{"a": "x"}', "--json", "--", *DEMO)
    assert status == 1 and result["isError"] is True
    assert "did you mean" not in err and "no tool named" not in err


def test_with_json_a_server_that_cannot_start_is_a_json_error() -> None:
    status, result, err = call("add", "--json", "--", "/no/such/server-binary")
    assert status == 2
    assert result["error"]["code"] == -32000
    assert "could not talk to the server" in result["error"]["message"]
    assert "/no/such/server-binary" in result["error"]["message"]
    assert "could not talk to the server" in err  # and in words for the person


def test_with_json_a_timeout_is_a_json_error() -> None:
    status, result, _ = call("slow_count", "--args", "to=400", "--timeout", "0.5", "--json", "--", *DEMO)
    assert status == 2
    assert result["error"] == {"code": -32001, "message": "no answer within 0.5 seconds"}
