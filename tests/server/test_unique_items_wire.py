"""A ``set`` parameter is published with ``uniqueItems: true``, and an array that repeats an item
is refused as the schema says, on the wire (issue #18, item 6).

Before, pydantic turned ``[1, 1]`` into ``{1}`` without a word: the schema said one thing and the
server did another. A repeat is now a tool-argument validation error like any other (tools.mdx,
"Error Handling", SEP-1303: a result with ``isError: true``), wherever the set is: a parameter, a
field of a dataclass parameter, the values of ``**kwargs``; and -32602 for a prompt argument.
Spoken in raw NDJSON to ``backchannel run tests/server/sets_server.py``, in both eras.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from _subprocesses import checkout_env
from backchannel.types import meta as M

SERVER = Path(__file__).resolve().parent / "sets_server.py"
WAIT = 10.0  # seconds: a bound on each read, never a pause
ERAS = ("handshake", "stateless")

REFUSED = [
    (
        {"ids": [1, 1]},
        "Invalid arguments for tool 'tag': ids: expected an array of unique items (1 appears more than once), "
        "got [1, 1]",
    ),
    (  # 2 and 2.0 are the same number in JSON Schema
        {"ids": [2, 3, 2.0]},
        "Invalid arguments for tool 'tag': ids: expected an array of unique items (2.0 appears more than once), "
        "got [2, 3, 2.0]",
    ),
    (
        {"ids": [1], "batch": {"name": "b", "labels": ["x", "y", "x"]}},
        "Invalid arguments for tool 'tag': batch.labels: expected an array of unique items (\"x\" appears more "
        'than once), got ["x", "y", "x"]',
    ),
    (
        {"ids": [1], "colours": ["red", "red"]},
        "Invalid arguments for tool 'tag': colours: expected an array of unique items (\"red\" appears more "
        'than once), got ["red", "red"]',
    ),
    (  # a repeat is listed with the other problems of the same call
        {"ids": [5, 5], "batch": {"name": 7, "labels": []}},
        "Invalid arguments for tool 'tag': batch.name: expected a string, got 7; ids: expected an array of "
        "unique items (5 appears more than once), got [5, 5]",
    ),
]


class Child:
    """The server as a child process, spoken to in raw NDJSON."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "backchannel", "run", str(SERVER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=checkout_env(),
        )
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self._ids = iter(range(1, 1000))

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def request(self, era: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """One request; the response message (``result`` or ``error``)."""
        if era == "stateless":
            meta = {M.PROTOCOL_VERSION: "2026-07-28", M.CLIENT_CAPABILITIES: {}}
            params = {**params, "_meta": {**meta, M.CLIENT_INFO: {"name": "wire-test", "version": "0"}}}
        request_id = next(self._ids)
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        while True:
            try:
                line = self._lines.get(timeout=WAIT)
            except queue.Empty:
                pytest.fail(f"no answer to {method} within {WAIT} s")
            assert line is not None, "the server closed stdout"
            message = json.loads(line)
            if message.get("id") == request_id and "method" not in message:
                return message  # type: ignore[no-any-return]

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def ready(self, era: str) -> None:
        if era == "handshake":
            init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
            assert "result" in self.request(era, "initialize", init)
            self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

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
def child() -> Iterator[Child]:
    server = Child()
    try:
        yield server
    finally:
        server.close()


@pytest.mark.parametrize("era", ERAS)
def test_the_schema_says_unique_items(child: Child, era: str) -> None:
    child.ready(era)
    (tool,) = child.request(era, "tools/list", {})["result"]["tools"]
    schema = tool["inputSchema"]
    assert schema["properties"]["ids"] == {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}
    assert schema["additionalProperties"] == {"type": "array", "items": {"type": "string"}, "uniqueItems": True}
    assert schema["$defs"]["Batch"]["properties"]["labels"]["uniqueItems"] is True


@pytest.mark.parametrize("era", ERAS)
def test_a_repeated_item_is_a_tool_argument_error(child: Child, era: str) -> None:
    child.ready(era)
    for arguments, text in REFUSED:
        answer = child.request(era, "tools/call", {"name": "tag", "arguments": arguments})
        assert "error" not in answer, answer
        result = answer["result"]
        assert result["isError"] is True, (arguments, result)
        assert result["content"] == [{"type": "text", "text": text}]
        assert "structuredContent" not in result
    # Distinct items still go through, as before.
    fine = {"ids": [3, 1, 2], "batch": {"name": "b", "labels": ["x", "y"]}, "colours": ["red", "blue"]}
    answer = child.request(era, "tools/call", {"name": "tag", "arguments": fine})
    assert answer["result"]["structuredContent"] == {"result": [1, 2, 3]}


@pytest.mark.parametrize("era", ERAS)
def test_a_repeated_item_in_a_prompt_argument_is_invalid_params(child: Child, era: str) -> None:
    child.ready(era)
    # Prompt arguments are strings: "[1, 1]" is decoded as JSON for set[int], then checked.
    answer = child.request(era, "prompts/get", {"name": "pick", "arguments": {"numbers": "[1, 1]"}})
    assert answer["error"]["code"] == -32602
    assert "numbers: expected an array of unique items (1 appears more than once)" in answer["error"]["message"]
    answer = child.request(era, "prompts/get", {"name": "pick", "arguments": {"numbers": "[2, 1]"}})
    assert answer["result"]["messages"][0]["content"]["text"] == "picked [1, 2]"
