"""The ``auto`` era against an official-SDK server (``mcp`` 2.3.0) whose tool elicits (issue 18, item 11).

That server offers only 2026-07-28 in ``server/discover``, so ``auto`` speaks the stateless era
to it, as the spec has a dual-era client do (versioning.mdx, "Dual-era | Modern: ... The client
stays modern"); but its ``ctx.elicit`` is a request of the server's own, which that era cannot
carry, and the call fails with -32600 "... no back-channel ...". We recognise that answer and
say what to do: connect in the handshake era, where the same tool works. ``auto`` does not
reconnect by itself: nothing in the discover result says a server cannot ask (in 2026-07-28
``InputRequiredResult`` is core, not a capability), and calling the tool again in another era
would repeat whatever it did before it asked.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from backchannel import Client
from backchannel.client.era_detection import HandshakeEraNeeded
from backchannel.testing import run
from backchannel.types.errors import INVALID_REQUEST, RequestError

pytestmark = pytest.mark.interop

ROOT = Path(__file__).resolve().parents[2]
PEER = [sys.executable, str(ROOT / "tests" / "peers" / "pysdk_eliciting_server.py")]
TIMEOUT = 60


def answer_with_ada(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Ada"}}


def test_auto_speaks_stateless_and_the_failure_names_the_handshake_era() -> None:
    async def main() -> tuple[str | None, HandshakeEraNeeded]:
        async with Client.stdio(PEER[0], PEER[1:], elicitation=answer_with_ada) as client:
            era = client.era
            with pytest.raises(HandshakeEraNeeded) as failed:
                await client.call_tool("ask_name", {})
            # The connection is still good for what needs no question.
            assert [tool.name for tool in await client.list_tools()] == ["ask_name"]
            return era, failed.value

    era, error = run(main, TIMEOUT)
    assert era == "stateless"
    # The server's error as it sent it (still a RequestError, for code that catches those) ...
    assert isinstance(error, RequestError) and error.code == INVALID_REQUEST
    assert error.message.startswith("Cannot send 'elicitation/create'") and "back-channel" in error.message
    # ... and what to do about it.
    assert 'era="handshake"' in str(error) and "--era handshake" in str(error)


def test_the_handshake_era_asks_and_gets_the_answer() -> None:
    async def main() -> tuple[str | None, str]:
        async with Client.stdio(PEER[0], PEER[1:], era="handshake", elicitation=answer_with_ada) as client:
            result = await client.call_tool("ask_name", {})
            return client.era, result.content[0].text  # type: ignore[union-attr]

    assert run(main, TIMEOUT) == ("handshake", "accept: Ada")


def test_other_stateless_errors_are_left_as_they_are() -> None:
    plain = RequestError("Unknown tool: x", code=-32602)
    assert HandshakeEraNeeded.recognise(plain, "stateless") is None
    sdk = RequestError("Cannot send 'elicitation/create': this transport context has no back-channel", code=-32600)
    assert HandshakeEraNeeded.recognise(sdk, "handshake") is None  # that era has the channel: another problem
    assert HandshakeEraNeeded.recognise(sdk, "stateless") is not None
    missing = RequestError("no back-channel: elicitation/create needs the capability", code=-32021)
    assert HandshakeEraNeeded.recognise(missing, "stateless") is None  # the client's capability, not the era


def backchannel(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "backchannel", *args],
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=ROOT,
    )


def test_call_names_the_handshake_era_and_it_works_there(tmp_path: Path) -> None:
    done = backchannel("call", "ask_name", "--json", "--", *PEER)
    assert done.returncode == 2
    shown = json.loads(done.stdout)
    assert shown["error"]["code"] == INVALID_REQUEST
    assert "--era handshake" in shown["hint"] and "--era handshake" in done.stderr
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"name": {"name": "Ada"}}))
    done = backchannel("call", "ask_name", "--era", "handshake", "--answers", str(answers), "--json", "--", *PEER)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["content"][0]["text"] == "accept: Ada"


def test_connect_names_the_handshake_era() -> None:
    done = backchannel("connect", "--", *PEER, stdin="call ask_name\nquit\n")
    assert done.returncode == 0, done.stderr  # the session goes on: only that call failed
    assert "Cannot send 'elicitation/create'" in done.stdout
    assert "connect again with --era handshake" in " ".join(done.stdout.split())
