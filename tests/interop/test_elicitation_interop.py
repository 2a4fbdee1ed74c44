"""Form elicitation against the official SDKs, both directions (issue #4).

* the official Python SDK client (``pysdk_client.py``, mcp 2.3.0) against our
  ``backchannel_server.py --elicitation``, in its ``legacy`` and ``2026-07-28`` modes: a real
  ``elicitation/create`` request in the first, an ``InputRequiredResult`` round it answers with
  the same callback in the second;
* the official TypeScript SDK client (``ts_client.mjs``, @modelcontextprotocol/sdk 1.32.2,
  handshake era only) against the same server over stdio, under Node 22;
* our ``Client`` against server-everything's ``trigger-elicitation-request``, which it lists
  only to a client that declares ``elicitation``.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from backchannel import Client
from peers.paths import (
    EVERYTHING_STDIO_CMD,
    NODE22,
    PEERS_DIR,
    TESTS_DIR,
    have_npm_peers,
    have_pysdk,
    pysdk_client_cmd,
)

pytestmark = pytest.mark.interop

ROOT = Path(__file__).resolve().parents[2]
OUR_SERVER = [sys.executable, str(PEERS_DIR / "backchannel_server.py"), "--elicitation"]
TIMEOUT = 120
PROJECT_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "Project name", "minLength": 1},
        "language": {"type": "string", "enum": ["python", "typescript", "go"], "default": "python"},
        "stars": {"type": "integer", "description": "GitHub stars", "minimum": 0, "default": 0},
    },
    "required": ["name"],
}


def accept(content: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": content}


def text_of(result: dict[str, Any]) -> str:
    assert "error" not in result, result
    assert not result.get("isError"), result
    return str(result["content"][0]["text"])


# --------------------------------------------------------------- official Python SDK client


def run_pysdk(mode: str, plan: list[dict[str, Any]]) -> dict[str, Any]:
    argv = pysdk_client_cmd(mode, OUR_SERVER, plan=json.dumps(plan))
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT, check=False)
    assert proc.returncode == 0, f"pysdk_client exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    out: dict[str, Any] = json.loads(proc.stdout)
    assert "closeError" not in out, out["closeError"]
    return out


@pytest.fixture(scope="module", params=["legacy", "2026-07-28"])
def pysdk(request: pytest.FixtureRequest) -> dict[str, Any]:
    if not have_pysdk():
        pytest.skip("the official Python SDK (mcp==2.3.0) is not installed")
    plan = [
        {
            "op": "answer_elicitation",
            "args": {
                "answers": [
                    accept({"name": "backchannel", "language": "go", "stars": 7}),
                    accept({"name": "backchannel", "stars": "many"}),  # does not fit: asked again
                    accept({"name": "backchannel"}),  # defaults filled by the server's model
                    {"action": "decline"},
                ]
            },
        },
        {"op": "call_tool", "args": {"name": "ask_project", "arguments": {"reason": "full"}}},
        {"op": "call_tool", "args": {"name": "ask_project", "arguments": {"reason": "retry"}}},
        {"op": "call_tool", "args": {"name": "ask_project", "arguments": {"reason": "no"}}},
    ]
    out = run_pysdk(request.param, plan)
    return {"mode": request.param, "out": out, "results": out["results"][1:]}


def test_pysdk_client_answers_our_form(pysdk: dict[str, Any]) -> None:
    first = pysdk["out"]["elicitations"][0]
    assert first["message"] == "Tell me about your project (full)"
    assert first["requestedSchema"] == PROJECT_SCHEMA
    assert first.get("mode", "form") == "form"
    assert text_of(pysdk["results"][0]) == "accept: backchannel (go, 7 stars)"


def test_pysdk_client_is_asked_again_after_invalid_content(pysdk: dict[str, Any]) -> None:
    messages = [params["message"] for params in pysdk["out"]["elicitations"]]
    assert messages[1:3] == [
        "Tell me about your project (retry)",
        "Tell me about your project (retry)\n\nPlease correct: stars: must be a whole number, not 'many'",
    ]
    assert text_of(pysdk["results"][1]) == "accept: backchannel (python, 0 stars)"


def test_pysdk_client_decline(pysdk: dict[str, Any]) -> None:
    assert text_of(pysdk["results"][2]) == "decline"
    assert len(pysdk["out"]["elicitations"]) == 4


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_pysdk_client_without_elicitation_gets_missing_capability(mode: str) -> None:
    if not have_pysdk():
        pytest.skip("the official Python SDK (mcp==2.3.0) is not installed")
    out = run_pysdk(mode, [{"op": "call_tool", "args": {"name": "ask_project", "arguments": {}}}])
    error = out["results"][0]["error"]
    assert error["code"] == -32021
    assert error["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}
    assert out["elicitations"] == []


# ----------------------------------------------------------- official TypeScript SDK client


def run_ts(plan: dict[str, Any]) -> dict[str, Any]:
    if not have_npm_peers():
        pytest.skip("npm peers not installed (run tests/peers/install.sh)")
    argv = [str(NODE22), str(PEERS_DIR / "ts_client.mjs"), json.dumps(plan), "--", *OUR_SERVER]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd=TESTS_DIR, check=False)
    assert proc.returncode == 0, f"ts_client exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


def test_ts_client_answers_our_form() -> None:
    out = run_ts(
        {
            "applyDefaults": True,
            "answers": [accept({"name": "backchannel"}), {"action": "cancel"}, {"action": "decline"}],
            "calls": [
                {"name": "ask_project", "arguments": {"reason": "ts"}},
                {"name": "ask_project", "arguments": {"reason": "later"}},
                {"name": "ask_project", "arguments": {"reason": "no"}},
            ],
        }
    )
    assert out["protocolVersion"] == "2025-11-25"
    assert out["serverInfo"] == {"name": "backchannel-peer", "version": "0.1.0-peer"}
    assert "ask_project" in out["tools"]
    [first, *_] = out["elicitations"]
    assert first == {"mode": "form", "message": "Tell me about your project (ts)", "requestedSchema": PROJECT_SCHEMA}
    texts = [text_of(result) for result in out["results"]]
    assert texts == ["accept: backchannel (python, 0 stars)", "cancel", "decline"]


def test_ts_client_invalid_content_is_asked_again_then_cancel() -> None:
    out = run_ts(
        {
            "answers": [accept({"name": ""}), accept({"name": "x", "language": "cobol"})],
            "calls": [{"name": "ask_project", "arguments": {"reason": "bad"}}],
        }
    )
    assert len(out["elicitations"]) == 2
    assert "Please correct: name: must be at least 1 character" in out["elicitations"][1]["message"]
    assert text_of(out["results"][0]) == "cancel"


# --------------------------------------------------- our client against server-everything


def test_our_client_against_server_everything_trigger_elicitation() -> None:
    if not have_npm_peers():
        pytest.skip("npm peers not installed (run tests/peers/install.sh)")
    seen: list[dict[str, Any]] = []
    answers = [
        accept({"name": "Ada", "check": True, "email": "ada@example.com", "birthdate": "1815-12-10"}),
        accept({"name": "Ada", "email": "not an email"}),  # our client refuses to send this
        {"action": "decline"},
    ]

    def person(params: dict[str, Any]) -> dict[str, Any]:
        seen.append(params)
        return answers.pop(0)

    async def session() -> dict[str, Any]:
        command, *args = EVERYTHING_STDIO_CMD
        client = Client.stdio(command, args, cwd=TESTS_DIR, era="auto", request_timeout=20, elicitation=person)
        async with asyncio.timeout(60), client:
            names = [tool.name for tool in await client.list_tools()]
            accepted = await client.call_tool("trigger-elicitation-request", {})
            refused = await client.call_tool("trigger-elicitation-request", {})
            declined = await client.call_tool("trigger-elicitation-request", {})
            return {"names": names, "accepted": accepted, "refused": refused, "declined": declined}

    out = asyncio.run(session())
    assert "trigger-elicitation-request" in out["names"]
    assert "trigger-url-elicitation" not in out["names"]  # we declared form mode only
    schema = seen[0]["requestedSchema"]
    assert schema["required"] == ["name"] and schema["properties"]["legacyTitledEnum"]["enumNames"][0] == "Cats"

    texts = [block.text for block in out["accepted"].content]
    assert texts[0] == "✅ User provided the requested information!"
    raw = json.loads(texts[-1].split("Raw result:", 1)[1])
    assert raw["action"] == "accept"
    # what we sent: the person's answers plus every default the schema offers (SEP-1034)
    assert raw["content"] == {
        "name": "Ada",
        "check": True,
        "email": "ada@example.com",
        "birthdate": "1815-12-10",
        "firstLine": "It was a dark and stormy night.",
        "integer": 42,
        "number": 3.14,
        "untitledSingleSelectEnum": "Monica",
        "untitledMultipleSelectEnum": ["Guitar"],
        "titledSingleSelectEnum": "hero-1",
        "titledMultipleSelectEnum": ["fish-1"],
        "legacyTitledEnum": "pet-1",
    }
    # invalid content never left the client: server-everything's request failed with our -32602
    refused = out["refused"]
    assert refused.is_error is True
    assert refused.content[0].text == (
        "MCP error -32602: the accepted content does not fit the form: email: not a valid e-mail address"
    )
    assert "declined" in out["declined"].content[0].text
