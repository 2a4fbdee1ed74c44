"""Bad input gets a clear error and the session goes on (issue #2), checked on a real stdio wire.

Each test spawns ``tests/fixtures/wire_server.py``, writes raw bytes to its stdin,
reads raw lines from its stdout with a deadline, and asserts the exact JSON-RPC
error. Every bad input is followed by a good ``tools/call echo`` on the same
process: the session must still answer it.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "wire_server.py"
LEGACY = "2025-11-25"
MODERN = "2026-07-28"
WAIT = 10.0  # seconds; a bound on every read, never a pause
MAX_LINE = 1024


class WireServer:
    """The fixture server as a child process, spoken to in raw NDJSON."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(FIXTURE)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})},
        )
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._stderr: list[bytes] = []
        self.notifications: list[dict[str, Any]] = []
        self._readers = [
            threading.Thread(target=self._pump_stdout, daemon=True),
            threading.Thread(target=self._pump_stderr, daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _pump_stdout(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _pump_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._stderr.append(line)

    # ------------------------------------------------------------ writing

    def send_raw(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, *messages: Any) -> None:
        """All ``messages`` in one write, one per line."""
        self.send_raw(b"".join(json.dumps(m).encode() + b"\n" for m in messages))

    # ------------------------------------------------------------ reading

    def receive(self, timeout: float = WAIT) -> dict[str, Any]:
        """The next message the server wrote; fails after ``timeout`` seconds."""
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"no message from the server within {timeout} s")
        if line is None:
            pytest.fail(f"the server closed stdout; stderr:\n{self.stderr}")
        message = json.loads(line)
        assert isinstance(message, dict), line
        return message

    def answer(self, request_id: int | str | None) -> dict[str, Any]:
        """The next response whose id is ``request_id`` (same JSON type too); notifications are kept."""
        while True:
            message = self.receive()
            if "method" in message:
                self.notifications.append(message)
                continue
            if type(message.get("id")) is type(request_id) and message.get("id") == request_id:
                return message
            pytest.fail(f"expected the answer to {request_id!r}, got {message}")

    def error(self, request_id: int | str | None) -> dict[str, Any]:
        message = self.answer(request_id)
        assert "error" in message, message
        assert "result" not in message, message
        error = message["error"]
        assert isinstance(error, dict)
        return error

    def result(self, request_id: int | str | None) -> dict[str, Any]:
        message = self.answer(request_id)
        assert "result" in message, message
        result = message["result"]
        assert isinstance(result, dict)
        return result

    # ---------------------------------------------------------- sessions

    def initialize(self, request_id: int | str = "init") -> dict[str, Any]:
        self.send(request("initialize", request_id, initialize_params()))
        result = self.result(request_id)
        assert result["protocolVersion"] == LEGACY
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return result

    def assert_alive(self, request_id: int | str = "alive", **meta: Any) -> None:
        """The session goes on: a good ``tools/call echo`` is answered."""
        params: dict[str, Any] = {"name": "echo", "arguments": {"text": f"still here {request_id}"}}
        if meta:
            params["_meta"] = meta
        self.send(request("tools/call", request_id, params))
        result = self.result(request_id)
        assert result["content"] == [{"type": "text", "text": f"still here {request_id}"}]
        assert not result.get("isError")

    def close(self) -> str:
        """Close stdin; the server must exit by itself (status 0). Returns its stderr."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=WAIT)
        for reader in self._readers:
            reader.join(timeout=WAIT)
        assert self.process.returncode == 0, self.stderr
        return self.stderr

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=WAIT)

    @property
    def stderr(self) -> str:
        return b"".join(self._stderr).decode(errors="replace")


def request(method: str, request_id: int | str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def initialize_params() -> dict[str, Any]:
    return {
        "protocolVersion": LEGACY,
        "capabilities": {},
        "clientInfo": {"name": "wire-test", "version": "0"},
    }


def call(name: str, request_id: int | str, arguments: Any = None, **extra: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, **extra}
    if arguments is not None:
        params["arguments"] = arguments
    return request("tools/call", request_id, params)


def stateless_meta(version: str = MODERN) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "wire-test", "version": "0"},
    }


def text_of(result: dict[str, Any]) -> str:
    [content] = result["content"]
    assert content["type"] == "text"
    text = content["text"]
    assert isinstance(text, str)
    return text


# ------------------------------------------------------------ framing and shape


def test_malformed_json_is_parse_error_with_null_id(wire: WireServer) -> None:
    wire.send_raw(b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {\n')
    error = wire.error(None)
    assert error["code"] == -32700
    assert error["message"].startswith("Parse error")
    wire.assert_alive()


def test_a_line_of_garbage_then_a_good_line_in_one_write(wire: WireServer) -> None:
    wire.send_raw(b"not json at all\n" + json.dumps(call("echo", 2, {"text": "x"})).encode() + b"\n")
    assert wire.error(None)["code"] == -32700
    assert text_of(wire.result(2)) == "x"
    wire.assert_alive()


@pytest.mark.parametrize(
    ("raw", "names"),
    [
        (b"[]", "batch"),
        (b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', "batch"),
        (b"42", "object"),
        (b'"x"', "object"),
        (b"null", "object"),
        (b'{"jsonrpc": "2.0", "hello": 1}', "not a request, notification or response"),
    ],
)
def test_json_that_is_not_a_message_is_invalid_request(wire: WireServer, raw: bytes, names: str) -> None:
    wire.send_raw(raw + b"\n")
    error = wire.error(None)
    assert error["code"] == -32600
    assert names in error["message"]
    wire.assert_alive()


def test_wrong_jsonrpc_version_is_invalid_request_with_its_id(wire: WireServer) -> None:
    wire.send({"jsonrpc": "1.0", "id": 5, "method": "ping"})
    error = wire.error(5)
    assert error["code"] == -32600
    assert "jsonrpc" in error["message"]
    wire.assert_alive()


def test_non_scalar_id_is_invalid_request(wire: WireServer) -> None:
    wire.send({"jsonrpc": "2.0", "id": {"x": 1}, "method": "ping"})
    error = wire.error(None)
    assert error["code"] == -32600
    assert '"id"' in error["message"]
    wire.assert_alive()


def test_oversized_line_is_an_error_and_the_next_line_is_read(wire: WireServer) -> None:
    # Larger than the reader's 64 KiB chunk too, so the skip spans several reads.
    big = json.dumps(call("echo", 3, {"text": "x" * 100_000})).encode()
    wire.send_raw(big + b"\n" + json.dumps(call("echo", 4, {"text": "after"})).encode() + b"\n")
    error = wire.error(None)
    assert error["code"] == -32600
    assert f"limit of {MAX_LINE} bytes" in error["message"]
    assert text_of(wire.result(4)) == "after"
    wire.assert_alive()


def test_oversized_line_split_across_writes(wire: WireServer) -> None:
    big = json.dumps(call("echo", 3, {"text": "y" * 5_000})).encode()
    wire.send_raw(big[:2_000])
    wire.send_raw(big[2_000:] + b"\n")
    assert wire.error(None)["code"] == -32600
    wire.assert_alive()


def test_a_line_at_the_limit_is_accepted(wire: WireServer) -> None:
    message = call("echo", 9, {"text": ""})
    padding = MAX_LINE - len(json.dumps(message).encode())
    message["params"]["arguments"]["text"] = "z" * padding
    assert len(json.dumps(message).encode()) == MAX_LINE
    wire.send(message)
    assert text_of(wire.result(9)) == "z" * padding


# --------------------------------------------------------------- routing


def test_unknown_method_is_method_not_found(wire: WireServer) -> None:
    wire.send(request("tools/frobnicate", 1, {}))
    error = wire.error(1)
    assert error["code"] == -32601
    assert "tools/frobnicate" in error["message"]
    wire.assert_alive()


def test_params_that_are_not_an_object(wire: WireServer) -> None:
    wire.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": 5})
    error = wire.error(1)
    assert error["code"] == -32602
    assert '"params"' in error["message"]
    wire.assert_alive()


def test_tools_call_arguments_not_an_object(wire: WireServer) -> None:
    wire.send(call("echo", 1, 5))
    error = wire.error(1)
    assert error["code"] == -32602
    assert "arguments" in error["message"]
    assert "expected an object" in error["message"]
    wire.assert_alive()


def test_tools_call_name_not_a_string(wire: WireServer) -> None:
    wire.send(request("tools/call", 1, {"name": 3, "arguments": {}}))
    error = wire.error(1)
    assert error["code"] == -32602
    assert "params.name" in error["message"]
    wire.assert_alive()


# Arguments that fail validation are a tool execution error (tools.mdx "Error Handling", SEP-1303):
# a result with isError the model can act on, not -32602 (tests/server/test_tool_arguments_wire.py).


def test_argument_of_the_wrong_type_names_the_field(wire: WireServer) -> None:
    wire.send(call("add", 1, {"a": "x", "b": 2}))
    result = wire.result(1)
    assert result["isError"] is True
    assert text_of(result) == "Invalid arguments for tool 'add': a: expected an integer, got \"x\""
    wire.assert_alive()


def test_missing_argument_names_the_field(wire: WireServer) -> None:
    wire.send(call("add", 1, {"a": 1}))
    result = wire.result(1)
    assert result["isError"] is True
    assert text_of(result) == "Invalid arguments for tool 'add': b: required field missing"
    wire.assert_alive()


def test_good_arguments_after_bad_ones(wire: WireServer) -> None:
    wire.send(call("add", 1, {"a": "x", "b": 2}), call("add", 2, {"a": 40, "b": 2}))
    assert wire.result(1)["isError"] is True
    assert wire.result(2)["structuredContent"] == {"result": 42}


def test_unknown_tool_is_invalid_params(wire: WireServer) -> None:
    wire.send(call("no_such_tool", 1, {}))
    error = wire.error(1)
    assert error["code"] == -32602
    assert "no_such_tool" in error["message"]
    assert error["data"] == {"name": "no_such_tool"}
    wire.assert_alive()


def test_invalid_cancellation_is_ignored_silently(wire: WireServer) -> None:
    """CN-16: unknown or malformed cancellations get no answer at all."""
    wire.send(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 999}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": [1]}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": 7},
    )
    wire.assert_alive()  # the very next message is echo's answer: nothing was said about the three


# ------------------------------------------------------------- lifecycle


def test_request_before_initialize_is_an_error(fresh: WireServer) -> None:
    fresh.send(request("tools/list", 1, {}))
    error = fresh.error(1)
    assert error["code"] == -32600
    assert "before initialize" in error["message"]
    fresh.send(request("ping", 2))  # ping is allowed before the handshake
    assert fresh.result(2) == {}
    fresh.initialize()
    fresh.assert_alive()


def test_initialized_pipelined_behind_initialize_still_gets_the_answer(fresh: WireServer) -> None:
    # Clients should wait for the result first, but one that does not must not hang the handshake.
    fresh.send(
        request("initialize", 1, initialize_params()),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    )
    assert fresh.result(1)["protocolVersion"] == LEGACY
    fresh.assert_alive()


def test_stateless_request_with_unsupported_version(fresh: WireServer) -> None:
    """LC-10 (2026-07-28): an unsupported per-request version gets -32022 listing what we speak."""
    fresh.send(request("tools/list", 1, {"_meta": stateless_meta("2099-01-01")}))
    error = fresh.error(1)
    assert error["code"] == -32022
    assert MODERN in error["data"]["supported"]
    assert error["data"]["requested"] == "2099-01-01"
    fresh.send(request("tools/list", 2, {"_meta": stateless_meta(LEGACY)}))  # a handshake-era version
    assert fresh.error(2)["code"] == -32022
    fresh.assert_alive(**stateless_meta())


def test_stateless_request_without_capabilities_names_the_field(fresh: WireServer) -> None:
    meta = stateless_meta()
    del meta["io.modelcontextprotocol/clientCapabilities"]
    fresh.send(request("tools/list", 1, {"_meta": meta}))
    error = fresh.error(1)
    assert error["code"] == -32602
    assert "clientCapabilities" in error["message"]
    fresh.assert_alive(**stateless_meta())


# ------------------------------------------------------------- request ids


def test_duplicate_in_flight_id_is_refused_and_the_first_completes(wire: WireServer) -> None:
    # One write, so the second line is read while the first is surely in flight.
    wire.send(
        call("slow", 1, {"seconds": 0.2}, _meta={"progressToken": "p1"}),
        call("echo", 1, {"text": "second"}),
    )
    error = wire.error(1)
    assert error["code"] == -32600
    assert "already in use" in error["message"]
    assert text_of(wire.result(1)) == "slept 0.2"
    assert [n["params"]["progress"] for n in wire.notifications] == [0, 1]
    wire.send(call("echo", 1, {"text": "reused"}))  # free again once answered
    assert text_of(wire.result(1)) == "reused"


def test_integer_and_string_ids_are_distinct(wire: WireServer) -> None:
    wire.send(call("slow", 7, {"seconds": 0.05}), call("echo", "7", {"text": "string seven"}))
    answers = {(type(m["id"]), m["id"]): m for m in (wire.receive(), wire.receive())}
    assert text_of(answers[int, 7]["result"]) == "slept 0.05"
    assert text_of(answers[str, "7"]["result"]) == "string seven"
    wire.assert_alive()


# ------------------------------------------------------------- handler failures


def test_tool_error_is_a_result_with_is_error(wire: WireServer) -> None:
    wire.send(call("fails", 1, {}))
    result = wire.result(1)
    assert result["isError"] is True
    assert text_of(result) == "nope, and here is why"
    wire.assert_alive()


def test_crash_is_internal_error_with_a_safe_message(fresh: WireServer) -> None:
    fresh.initialize()
    fresh.send(call("crashes", 1, {}))
    message = fresh.answer(1)
    error = message["error"]
    assert error["code"] == -32603
    wire_text = json.dumps(message)
    for leak in ("secret", "/etc/passwd", "Traceback", "RuntimeError"):
        assert leak not in wire_text
    fresh.assert_alive()
    stderr = fresh.close()
    assert "Traceback" in stderr
    assert "RuntimeError: secret internal detail /etc/passwd" in stderr
