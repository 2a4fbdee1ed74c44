"""A stdio server widens the pipe it writes to (Linux): a big answer crosses it in 1 MiB hand-offs.

With the default 64 KiB a 16 MiB tool result took 256 wake-ups of both processes and came out
about a third slower than the official SDK's blocking writes (``benchmarks/run.py --curves``,
the result-size curve; ``docs/performance.md``). Checked on a real child process: the pipe's
capacity after the handshake, and a 3 MiB answer arriving whole.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

fcntl = pytest.importorskip("fcntl")
if not hasattr(fcntl, "F_GETPIPE_SZ"):
    pytest.skip("pipe sizes are a Linux feature", allow_module_level=True)

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "wire_server.py"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def _send(process: subprocess.Popen[bytes], message: dict[str, object]) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()


def test_the_server_writes_through_a_one_mebibyte_pipe() -> None:
    process = subprocess.Popen(
        [sys.executable, str(FIXTURE)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    try:
        assert process.stdout is not None
        assert fcntl.fcntl(process.stdout.fileno(), fcntl.F_GETPIPE_SZ) == 64 * 1024  # as the kernel made it
        _send(process, INITIALIZE)
        assert json.loads(process.stdout.readline())["id"] == 1  # the transport has started: widened by now
        assert fcntl.fcntl(process.stdout.fileno(), fcntl.F_GETPIPE_SZ) == 1 << 20
        _send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        text = "x" * (3 << 20)
        _send(
            process,
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": text}},
            },
        )
        answer = json.loads(process.stdout.readline())
        assert answer["id"] == 2 and answer["result"]["content"][0]["text"] == text
    finally:
        assert process.stdin is not None
        process.stdin.close()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
