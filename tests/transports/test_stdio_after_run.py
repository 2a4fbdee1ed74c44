"""After ``Server.run()`` returns, the program still has its stdin and stdout as they were.

The event loop makes the pipes it watches non-blocking and closes the files it was given; the
stdio transport hands it copies (``transports/stdio.py`` ``_borrow``), so a program that goes on
after serving can print, and its stdout blocks again as a pipe normally does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

PROGRAM = textwrap.dedent(
    """
    import os, sys
    from backchannel import Server

    server = Server("after")

    @server.tool()
    def echo(text: str) -> str:
        return text

    server.run()
    print("after run:", "blocking" if os.get_blocking(1) else "non-blocking", flush=True)
    sys.stdout.buffer.write(b"x" * 300_000 + b"\\n")  # more than a pipe holds: a blocking write waits
    sys.stdout.flush()
    print("stdin closed:", sys.stdin.closed, "stdin reads:", repr(sys.stdin.read()), flush=True)
    """
)


def _message(id_: int, method: str, params: dict[str, object]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params}).encode() + b"\n"


@pytest.mark.parametrize("loop", ["uvloop", "asyncio"])
def test_a_program_can_print_after_run_returns(loop: str) -> None:
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    stdin = (
        _message(1, "initialize", hello)
        + b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
        + _message(2, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    )
    env = {**os.environ, "BACKCHANNEL_LOOP": loop}
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM], input=stdin, capture_output=True, timeout=60, env=env, check=False
    )
    assert done.returncode == 0, done.stderr.decode()
    lines = done.stdout.split(b"\n")
    answers = {answer["id"]: answer for answer in (json.loads(line) for line in lines if line.startswith(b"{"))}
    assert sorted(answers) == [1, 2]
    assert answers[2]["result"]["content"][0]["text"] == "hi"
    assert b"after run: blocking" in lines
    assert b"x" * 300_000 in lines  # written whole, not cut short by a non-blocking pipe
    assert b"stdin closed: False stdin reads: ''" in lines
