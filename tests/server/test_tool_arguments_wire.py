"""Arguments that fail validation are a tool execution error, on the wire (issue #12, item 10).

tools.mdx, "Error Handling" (2025-11-25 and 2026-07-28; SEP-1303): input validation errors
are reported in a result with ``isError: true`` whose text a model can act on; -32602 stays
for an unknown tool and a malformed request (``arguments`` not an object, ``name`` not a
string). Checked over stdio (the fixture server as a child process, raw NDJSON) and Streamable
HTTP (the ASGI app in process, raw JSON-RPC), in both eras, for a plain function (answered
inline) and a coroutine (answered from its own task).
"""

from __future__ import annotations

import asyncio
import json
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

from backchannel import Context, Server
from backchannel.framing.http import request_headers
from backchannel.types import meta as M

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "wire_server.py"
LEGACY = "2025-11-25"
MODERN = "2026-07-28"
WAIT = 10.0  # seconds: a bound on every read, never a pause
ERAS = ("handshake", "stateless")
ACCEPT = "application/json, text/event-stream"

# (arguments of add(a: int, b: int), the text of the isError result)
REFUSED_ADD = [
    ({"a": "two", "b": 2}, "Invalid arguments for tool 'add': a: expected an integer, got \"two\""),
    ({"a": 1}, "Invalid arguments for tool 'add': b: required field missing"),
    ({"a": 1, "b": 2, "c": 3}, "Invalid arguments for tool 'add': c: unexpected argument"),
    (
        {"b": [2], "extra": True},
        "Invalid arguments for tool 'add': a: required field missing; b: expected an integer, got [2]; "
        "extra: unexpected argument",
    ),
]
# slow(seconds: float, ctx): a coroutine, served from its own task
REFUSED_SLOW = [
    ({"seconds": "long"}, "Invalid arguments for tool 'slow': seconds: expected a number, got \"long\""),
    ({"seconds": 0, "ctx": {}}, "Invalid arguments for tool 'slow': ctx: unexpected argument"),
]
# (params of tools/call, a word the -32602 message must contain)
PROTOCOL_ERRORS = [
    ({"name": "add", "arguments": [1, 2]}, "expected an object"),
    ({"name": "add", "arguments": "a=1"}, "expected an object"),
    ({"name": 7, "arguments": {}}, "name"),
    ({"name": "no_such_tool", "arguments": {}}, "no_such_tool"),
]


def envelope(era: str, params: dict[str, Any]) -> dict[str, Any]:
    if era == "handshake":
        return params
    meta = {
        M.PROTOCOL_VERSION: MODERN,
        M.CLIENT_CAPABILITIES: {},
        M.CLIENT_INFO: {"name": "wire-test", "version": "0"},
    }
    return {**params, "_meta": meta}


def call(era: str, request_id: int, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": envelope(era, params)}


def assert_refused(answer: dict[str, Any], text: str, era: str) -> None:
    assert "error" not in answer, answer
    result = answer["result"]
    assert result["isError"] is True
    assert result["content"] == [{"type": "text", "text": text}]
    assert "structuredContent" not in result
    if era == "stateless":
        assert result["resultType"] == "complete"


def assert_protocol_error(answer: dict[str, Any], word: str) -> None:
    assert "result" not in answer, answer
    assert answer["error"]["code"] == -32602
    assert word in answer["error"]["message"]


# ------------------------------------------------------------------------------------------ stdio


class StdioServer:
    """tests/fixtures/wire_server.py as a child process, spoken to in raw NDJSON."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(FIXTURE)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._reader = threading.Thread(target=self._pump, daemon=True)
        self._reader.start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def send(self, *messages: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"".join(json.dumps(message).encode() + b"\n" for message in messages))
        self.process.stdin.flush()

    def answers(self, count: int) -> dict[Any, dict[str, Any]]:
        """The next ``count`` responses by id (notifications skipped); fails after WAIT seconds each."""
        found: dict[Any, dict[str, Any]] = {}
        while len(found) < count:
            try:
                line = self._lines.get(timeout=WAIT)
            except queue.Empty:
                pytest.fail(f"no answer from the server within {WAIT} s")
            assert line is not None, "the server closed stdout"
            message = json.loads(line)
            if "id" in message and "method" not in message:
                found[message["id"]] = message
        return found

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            assert self.process.wait(timeout=WAIT) == 0
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait(timeout=WAIT)


@pytest.fixture
def stdio() -> Iterator[StdioServer]:
    server = StdioServer()
    try:
        yield server
    finally:
        server.close()


def stdio_ready(stdio: StdioServer, era: str) -> None:
    if era == "handshake":
        init = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "wire-test", "version": "0"}}
        stdio.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
        assert "result" in stdio.answers(1)[0]
        stdio.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


@pytest.mark.parametrize("era", ERAS)
def test_stdio_validation_failures_are_results_with_is_error(stdio: StdioServer, era: str) -> None:
    stdio_ready(stdio, era)
    cases = [("add", arguments, text) for arguments, text in REFUSED_ADD]
    cases += [("slow", arguments, text) for arguments, text in REFUSED_SLOW]
    stdio.send(*(call(era, i, {"name": name, "arguments": arguments}) for i, (name, arguments, _) in enumerate(cases)))
    answers = stdio.answers(len(cases))
    for i, (_, _, text) in enumerate(cases):
        assert_refused(answers[i], text, era)
    # The session goes on, and good arguments still work on both paths.
    stdio.send(
        call(era, 100, {"name": "add", "arguments": {"a": 40, "b": 2}}),
        call(era, 101, {"name": "slow", "arguments": {"seconds": 0}}),
    )
    good = stdio.answers(2)
    assert good[100]["result"]["structuredContent"] == {"result": 42}
    assert good[101]["result"]["content"] == [{"type": "text", "text": "slept 0"}]


@pytest.mark.parametrize("era", ERAS)
def test_stdio_unknown_tool_and_malformed_calls_stay_protocol_errors(stdio: StdioServer, era: str) -> None:
    stdio_ready(stdio, era)
    stdio.send(*(call(era, i, params) for i, (params, _) in enumerate(PROTOCOL_ERRORS)))
    answers = stdio.answers(len(PROTOCOL_ERRORS))
    for i, (_, word) in enumerate(PROTOCOL_ERRORS):
        assert_protocol_error(answers[i], word)


# ------------------------------------------------------------------------------------------- HTTP


def http_server() -> Server:
    server = Server("http-arguments")

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    async def slow(seconds: float, ctx: Context) -> str:
        await asyncio.sleep(seconds)
        return f"slept {seconds:g}"

    return server


async def http_answer(client: httpx.AsyncClient, era: str, message: dict[str, Any], session: str | None) -> Any:
    headers = {"accept": ACCEPT, "content-type": "application/json"}
    if era == "handshake":
        headers["mcp-protocol-version"] = LEGACY
        if session is not None:
            headers["mcp-session-id"] = session
    else:
        headers |= {key.lower(): value for key, value in request_headers(message).items()}
    response = await client.post("/mcp", json=message, headers=headers)
    if "id" not in message:
        assert response.status_code == 202
        return None, response
    if response.headers["content-type"].startswith("text/event-stream"):
        datas = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        answers = [json.loads(data) for data in datas if data]
        return [answer for answer in answers if "id" in answer][-1], response
    return response.json(), response


async def http_session(client: httpx.AsyncClient) -> str:
    init = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "wire-test", "version": "0"}}
    answer, response = await http_answer(
        client, "handshake", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}, None
    )
    assert "result" in answer
    session: str = response.headers["mcp-session-id"]
    await http_answer(client, "handshake", {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    return session


@pytest.mark.parametrize("era", ERAS)
def test_http_validation_failures_are_results_with_is_error(era: str) -> None:
    app = http_server().http_app()

    async def body() -> None:
        transport = httpx.ASGITransport(app=app)
        try:
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", timeout=WAIT) as client:
                session = await http_session(client) if era == "handshake" else None
                cases = [("add", arguments, text) for arguments, text in REFUSED_ADD]
                cases += [("slow", arguments, text) for arguments, text in REFUSED_SLOW]
                for i, (name, arguments, text) in enumerate(cases):
                    message = call(era, i, {"name": name, "arguments": arguments})
                    answer, response = await http_answer(client, era, message, session)
                    assert response.status_code == 200
                    assert_refused(answer, text, era)
                for i, (params, word) in enumerate(PROTOCOL_ERRORS, start=100):
                    answer, _ = await http_answer(client, era, call(era, i, params), session)
                    assert_protocol_error(answer, word)
                good, _ = await http_answer(
                    client, era, call(era, 200, {"name": "add", "arguments": {"a": 1, "b": 2}}), session
                )
                assert good["result"]["structuredContent"] == {"result": 3}
        finally:
            await app.aclose()

    asyncio.run(asyncio.wait_for(body(), 30))
