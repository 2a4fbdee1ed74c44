"""A stdio server of plain tools runs without pydantic, the HTTP stack, the client or the UI loaded.

Those imports were most of a cold start (``docs/performance.md``, cold start). The server is a
real process on pipes; its ``loaded`` tool reports what it imported after the handshake,
listing and calling tools, completing, and asking for a form. A call whose arguments need
refusing then loads pydantic, for its words, and gets the same answer as ever.

``lazy_loaded`` reports the lighter modules a plain server loads only on first need (``LAZY`` in
``plain_server.py``: hashes, paths, json, the redactor's second pass, resources, tasks, URL
elicitation, auth, sampling...): none after the handshake (idle memory is measured there), none
after listing, calling and completing, nor after a form the person accepts.
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _subprocesses import checkout_env

SERVER = Path(__file__).with_name("plain_server.py")


class Pipe:
    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(SERVER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=checkout_env()
        )
        self.ids = 0
        self.reply: dict[str, Any] = {"action": "accept", "content": {"name": "Ada"}}

    def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Send a request and wait for its result; the server's own requests get ``self.reply``."""
        self.ids += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.ids, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        assert self.process.stdout is not None
        deadline = time.monotonic() + 20
        while True:
            ready, _, _ = select.select([self.process.stdout], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, f"no answer to {method}"
            answer = json.loads(self.process.stdout.readline())
            if answer.get("method") == "elicitation/create":
                self.send({"jsonrpc": "2.0", "id": answer["id"], "result": self.reply})
            elif answer.get("id") == self.ids:
                assert "result" in answer, answer
                return answer["result"]

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        return self.request("tools/call", {"name": name, "arguments": arguments})

    def loaded(self) -> list[str]:
        return list(json.loads(self.call("loaded", {})["content"][0]["text"]))

    def lazy_loaded(self) -> list[str]:
        return list(json.loads(self.call("lazy_loaded", {})["content"][0]["text"]))

    def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(20)


def test_plain_stdio_server_loads_nothing_heavy() -> None:
    pipe = Pipe()
    try:
        pipe.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {"elicitation": {}},
                "clientInfo": {"name": "t", "version": "1"},
            },
        )
        pipe.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools = pipe.request("tools/list")["tools"]
        assert [tool["name"] for tool in tools] == ["echo", "scale", "ask", "loaded", "lazy_loaded"]
        assert pipe.lazy_loaded() == []  # after the handshake: what idle memory is measured on
        assert tools[1]["inputSchema"] == {
            "type": "object",
            "properties": {
                "value": {"type": "number"},
                "times": {"default": 2, "type": "integer"},
                "exact": {"default": False, "type": "boolean"},
            },
            "required": ["value"],
            "additionalProperties": False,
        }
        assert pipe.call("echo", {"text": "hi"})["content"][0]["text"] == "hi"
        assert pipe.call("scale", {"value": 1, "times": 3, "exact": True})["content"][0]["text"] == "3.0"
        completion = pipe.request(
            "completion/complete",
            {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "word", "value": "al"}},
        )
        assert completion["completion"]["values"] == ["alpha"]
        assert pipe.lazy_loaded() == []
        assert pipe.call("ask", {})["content"][0]["text"] == "hello Ada"  # a form of a TypedDict
        assert pipe.loaded() == []
        assert pipe.lazy_loaded() == []  # an accepted form: no decline digest is made (hashlib waits for one)

        # Arguments to convert or refuse: pydantic's answer, loaded for it.
        assert pipe.call("scale", {"value": "1.5", "times": "2"})["content"][0]["text"] == "3"
        refused = pipe.call("echo", {"text": 5})
        assert refused["isError"] is True
        assert refused["content"][0]["text"] == "Invalid arguments for tool 'echo': text: expected a string, got 5"
        assert {"pydantic", "pydantic_core"} <= set(pipe.loaded())
    finally:
        assert pipe.close() == 0
