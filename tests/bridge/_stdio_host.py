"""A desktop host in a few lines: ``backchannel proxy ...`` spawned on pipes, spoken to in JSON lines.

For what the official SDK client hides (the exact error a request got, a second ``initialize``,
the proxy's stderr, its exit status): ``StdioHost(*proxy_args)`` spawns the proxy of this
checkout with its stderr in a file, ``request`` sends one request and returns the whole answer
(the notifications that came before it kept in ``notes``), each wait bounded. ``close`` ends
its input, as a host that quits does, and returns the exit status.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _subprocesses import checkout_env

__all__ = ["INITIALIZE", "StdioHost"]

INITIALIZE = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw-host", "version": "1"}}


class StdioHost:
    """``backchannel proxy ARGS`` on pipes (stderr to ``stderr_path``)."""

    def __init__(self, *args: str, stderr_path: Path, env: dict[str, str] | None = None) -> None:
        self.stderr_path = stderr_path
        with stderr_path.open("wb") as stderr:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "backchannel", "proxy", *args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                env={**checkout_env(), **(env or {})},
            )
        self.ids = 0
        self.notes: list[dict[str, Any]] = []
        self._buffer = b""

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        self.process.stdin.flush()

    def read(self, timeout: float = 30.0) -> dict[str, Any]:
        """The next message from the proxy, within ``timeout`` seconds."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([fd], [], [], max(0.0, left))
            assert ready, f"the proxy said nothing for {timeout} s; its stderr: {self.stderr()!r}"
            chunk = os.read(fd, 65536)
            assert chunk, f"the proxy closed its output; its stderr: {self.stderr()!r}"
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        message: dict[str, Any] = json.loads(line)
        return message

    def request(self, method: str, params: dict[str, Any] | None = None, timeout: float = 30.0) -> dict[str, Any]:
        """Send a request; its answer (``result`` or ``error``), the notifications before it in ``notes``."""
        self.ids += 1
        self.send({"id": self.ids, "method": method, **({"params": params} if params is not None else {})})
        while True:
            message = self.read(timeout)
            if message.get("id") == self.ids and "method" not in message:
                return message
            self.notes.append(message)

    def initialize(self, timeout: float = 30.0) -> dict[str, Any]:
        """``initialize`` (2025-11-25, nothing declared); ``notifications/initialized`` once it succeeded."""
        answer = self.request("initialize", INITIALIZE, timeout)
        if "result" in answer:
            self.send({"method": "notifications/initialized"})
        return answer

    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def close(self, timeout: float = 20.0) -> int:
        """End the proxy's input, as a host that quits; its exit status."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            return self.process.wait(timeout)
        finally:
            self.kill()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        if self.process.stdout is not None:
            self.process.stdout.close()
