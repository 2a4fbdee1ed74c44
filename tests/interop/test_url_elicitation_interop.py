"""URL-mode elicitation of our server driven by the official client SDKs (issue #4).

Our ``backchannel_server.py --url-elicitation`` (stdio, nothing configured: the pages are
served by the runtime's loopback side listener) against

* the official Python SDK client (``pysdk_client.py``, mcp 2.3.0) in ``legacy`` mode
  (``elicitation/create`` with ``mode: "url"`` and an ``elicitationId``, then
  ``notifications/elicitation/complete``; ``-32042`` for the gated tool) and in
  ``2026-07-28`` mode (the SDK's own MRTR loop answers the URL input request and retries,
  the retry waiting for the flow; no id, no notification, no ``-32042``);
* the official TypeScript SDK client (``ts_client.mjs``, @modelcontextprotocol/sdk 1.32.2,
  handshake era only) under Node 22.

The client's callback only records the request and answers ``accept`` (consent); the test
plays the person: it reads the URL and the confirmation code the client was shown (the
peers append them to a record file as they arrive), opens the page with httpx, types the
code and follows the flow to its end. Neither official client retries a call after
``-32042`` by itself: both surface the error (with ``data.elicitations``) to the
application, which here finishes the flow and calls again.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx2 as httpx
import pytest

from peers.paths import NODE22, PEERS_DIR, TESTS_DIR, have_npm_peers, have_pysdk, pysdk_client_cmd

pytestmark = pytest.mark.interop

ROOT = Path(__file__).resolve().parents[2]
OUR_SERVER = [sys.executable, str(PEERS_DIR / "backchannel_server.py"), "--url-elicitation"]
TIMEOUT = 120
CODE = re.compile(r"Confirmation code: (\d{4}-\d{4})")
ACCEPT = {"action": "accept"}


class Run:
    """A peer client process, its record file (JSON lines written as things happen) and
    the "go" file it waits for between steps."""

    def __init__(self, argv: list[str], tmp: Path, cwd: Path) -> None:
        self.record, self.go = tmp / "record.jsonl", tmp / "go"
        self.proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def entries(self) -> list[dict[str, Any]]:
        if not self.record.exists():
            return []
        lines = self.record.read_text(encoding="utf-8").splitlines(keepends=True)
        return [json.loads(line) for line in lines if line.endswith("\n")]

    def wait(self, kind: str, number: int, timeout: float = 60.0) -> dict[str, Any]:
        """The ``number``-th (from 1) entry of ``kind``, once it was written."""
        deadline = time.monotonic() + timeout
        while True:
            found = [entry for entry in self.entries() if entry["kind"] == kind]
            if len(found) >= number:
                return found[number - 1]
            if self.proc.poll() is not None or time.monotonic() > deadline:
                out, err = self.proc.communicate(timeout=10)
                raise AssertionError(f"no {kind} #{number}; exit {self.proc.returncode}\n{out}\n{err[-4000:]}")
            time.sleep(0.02)

    def result(self, step: int) -> dict[str, Any]:
        deadline = time.monotonic() + 60
        while True:
            for entry in self.entries():
                if entry["kind"] == "result" and entry["step"] == step:
                    return dict(entry["result"])
            assert self.proc.poll() is None and time.monotonic() < deadline, f"no result for step {step}"
            time.sleep(0.02)

    def finish(self) -> dict[str, Any]:
        out, err = self.proc.communicate(timeout=TIMEOUT)
        assert self.proc.returncode == 0, f"exit {self.proc.returncode}\n{out}\n{err[-4000:]}"
        parsed: dict[str, Any] = json.loads(out)
        return parsed

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate(timeout=10)


def complete_in_browser(params: dict[str, Any]) -> str:
    """The person: open the page, type the code the client showed, follow to the end.
    Returns the final URL."""
    url, message = params["url"], params["message"]
    parts = urlsplit(url)
    assert (parts.scheme, parts.hostname) == ("http", "127.0.0.1") and parts.path.startswith("/elicit/")
    found = CODE.search(message)
    assert found, message
    assert found.group(1) not in url
    with httpx.Client(follow_redirects=True, timeout=10) as browser:
        landing = browser.get(url)
        assert landing.status_code == 200 and 'name="code"' in landing.text, landing.text
        done = browser.post(url, data={"code": found.group(1)})
        assert done.status_code == 200 and "Done" in done.text, done.text
        return str(done.url)


def text_of(result: dict[str, Any]) -> str:
    assert "error" not in result, result
    assert not result.get("isError"), result
    return str(result["content"][0]["text"])


# --------------------------------------------------------------- official Python SDK client


def _pysdk_plan(go: Path) -> list[dict[str, Any]]:
    return [
        {"op": "answer_elicitation", "args": {"answers": [ACCEPT, ACCEPT, ACCEPT]}},  # 0
        {"op": "call_tool", "args": {"name": "url_confirm", "arguments": {}}},  # 1
        {"op": "call_tool", "args": {"name": "url_connect", "arguments": {}}},  # 2
        {"op": "call_tool", "args": {"name": "url_gated", "arguments": {}}},  # 3
        {"op": "wait_for_file", "args": {"path": str(go), "timeout": 60}},  # 4
        {"op": "call_tool", "args": {"name": "url_gated", "arguments": {}}},  # 5
        {"op": "call_tool", "args": {"name": "url_pages", "arguments": {}}},  # 6
    ]


def _pysdk_run(mode: str, tmp: Path) -> Run:
    if not have_pysdk():
        pytest.skip("the official Python SDK (mcp==2.3.0) is not installed")
    argv = pysdk_client_cmd(mode, OUR_SERVER, plan=json.dumps(_pysdk_plan(tmp / "go")))
    split = argv.index("--")
    argv[split:split] = ["--record", str(tmp / "record.jsonl"), "--timeout", "40"]
    return Run(argv, tmp, ROOT)


def test_pysdk_client_legacy_url_elicitation(tmp_path: Path) -> None:
    from mcp.shared.exceptions import UrlElicitationRequiredError
    from mcp_types import ErrorData

    run = _pysdk_run("legacy", tmp_path)
    try:
        confirm = run.wait("elicitation", 1)["params"]
        assert confirm["mode"] == "url" and confirm["elicitationId"]
        assert confirm["message"].startswith("Confirm the test action in your browser.")
        port = urlsplit(confirm["url"]).port
        complete_in_browser(confirm)
        assert text_of(run.result(1)) == "accept"

        connect = run.wait("elicitation", 2)["params"]
        assert urlsplit(connect["url"]).port == port  # one side listener for the whole run
        assert complete_in_browser(connect).startswith(f"http://127.0.0.1:{port}/elicit/callback?")
        assert text_of(run.result(2)) == "accept: connected"

        # -32042: the SDK surfaces it as a plain MCPError; its data parses with the SDK's own model.
        error = run.result(3)["error"]
        assert error["code"] == -32042
        parsed = UrlElicitationRequiredError.from_error(ErrorData(**error))
        (gated,) = parsed.elicitations
        assert gated.mode == "url" and gated.elicitation_id and gated.url.startswith(f"http://127.0.0.1:{port}/")
        complete_in_browser(error["data"]["elicitations"][0])
        note = run.wait("notification", 3)
        assert note["params"] == {"elicitationId": gated.elicitation_id}
        run.go.touch()
        out = run.finish()
    finally:
        run.kill()
    results = out["results"]
    assert results[4] == {"waited": True}
    assert text_of(results[5]) == "ready"  # the application's own retry
    pages = results[6]["structuredContent"]
    assert pages["base_url"] == f"http://127.0.0.1:{port}" and pages["listening"] is True
    assert len(out["elicitations"]) == 2  # the -32042 flow never reached the callback
    ids = [params["elicitationId"] for params in out["elicitations"]]
    assert [n["params"]["elicitationId"] for n in out["notifications"]] == [*ids, gated.elicitation_id]
    assert all(n["method"] == "notifications/elicitation/complete" for n in out["notifications"])


def test_pysdk_client_2026_url_elicitation_through_its_mrtr_loop(tmp_path: Path) -> None:
    run = _pysdk_run("2026-07-28", tmp_path)
    try:
        run.go.touch()  # no -32042 in this era: nothing to do between the gated calls
        for number in (1, 2, 3):
            params = run.wait("elicitation", number)["params"]
            assert params["mode"] == "url" and "elicitationId" not in params
            complete_in_browser(params)
        out = run.finish()
    finally:
        run.kill()
    assert out["protocolVersion"] == "2026-07-28"
    results = out["results"]
    assert text_of(results[1]) == "accept"
    assert text_of(results[2]) == "accept: connected"
    assert text_of(results[3]) == "accept: ready"  # via="error" is the same MRTR rounds here
    assert text_of(results[5]) == "ready"
    assert out["notifications"] == []  # no notifications/elicitation/complete in this era
    assert len(out["elicitations"]) == 3


# ----------------------------------------------------------- official TypeScript SDK client


def test_ts_client_url_elicitation(tmp_path: Path) -> None:
    if not have_npm_peers():
        pytest.skip("npm peers not installed (run tests/peers/install.sh)")
    go = tmp_path / "go"
    plan = {
        "url": True,
        "record": str(tmp_path / "record.jsonl"),
        "answers": [ACCEPT, ACCEPT],
        "calls": [
            {"name": "url_confirm"},  # 0
            {"name": "url_connect"},  # 1
            {"name": "url_gated"},  # 2
            {"waitFor": str(go), "timeout": 60},  # 3
            {"name": "url_gated"},  # 4
        ],
    }
    run = Run([str(NODE22), str(PEERS_DIR / "ts_client.mjs"), json.dumps(plan), "--", *OUR_SERVER], tmp_path, TESTS_DIR)
    try:
        confirm = run.wait("elicitation", 1)["params"]
        assert confirm["mode"] == "url" and confirm["elicitationId"]
        complete_in_browser(confirm)
        assert text_of(run.result(0)) == "accept"
        connect = run.wait("elicitation", 2)["params"]
        complete_in_browser(connect)
        assert text_of(run.result(1)) == "accept: connected"
        error = run.result(2)["error"]
        assert error["code"] == -32042 and error["name"] == "UrlElicitationRequiredError"
        (gated,) = error["data"]["elicitations"]
        complete_in_browser(gated)
        assert run.wait("notification", 3)["params"] == {"elicitationId": gated["elicitationId"]}
        go.touch()
        out = run.finish()
    finally:
        run.kill()
    assert out["protocolVersion"] == "2025-11-25"
    assert out["results"][3] == {"waited": True}
    assert text_of(out["results"][4]) == "ready"
    ids = [confirm["elicitationId"], connect["elicitationId"], gated["elicitationId"]]
    assert [n["params"]["elicitationId"] for n in out["notifications"]] == ids
