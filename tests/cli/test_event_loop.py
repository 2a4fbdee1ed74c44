"""Which event loop ``Server.run`` and ``Server.run_http`` serve on (``runtime/loops.py``).

Asked of the running server itself: a tool answers with its loop's module.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pexpect
import pytest
from test_run import INITIALIZE, INITIALIZED, Running, write

from backchannel.testing import free_port

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interop"))
from _http_peer import http_peer

uvloop = pytest.importorskip("uvloop")

SERVER = """
import asyncio
import sys

from backchannel import Server

server = Server("loops")


@server.tool()
async def loop() -> str:
    return type(asyncio.get_running_loop()).__module__.split(".")[0]


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run_http("127.0.0.1", int(sys.argv[2]))
    else:
        server.run()
"""

CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "loop", "arguments": {}}}


def _loop_over_pipes(script: Path, env: dict[str, str]) -> str:
    running = Running([sys.executable, str(script)], env=env)
    try:
        running.ask(INITIALIZE)
        running.tell(INITIALIZED)
        answer = running.ask(CALL)
    finally:
        code, stderr = running.finish()
    assert code == 0, stderr
    return str(answer["result"]["content"][0]["text"])


def test_stdio_over_pipes_runs_on_uvloop_unless_told_not_to(tmp_path: Path) -> None:
    script = write(tmp_path / "loops.py", SERVER)
    env = {k: v for k, v in os.environ.items() if k != "BACKCHANNEL_LOOP"}
    assert _loop_over_pipes(script, env) == "uvloop"
    assert _loop_over_pipes(script, {**env, "BACKCHANNEL_LOOP": "asyncio"}) == "asyncio"


def test_a_terminal_on_stdin_keeps_asyncio_so_ctrl_d_ends_the_server(tmp_path: Path) -> None:
    # uvloop does not report the end of input typed at a terminal: a person's Ctrl-D must still work.
    script = write(tmp_path / "loops.py", SERVER)
    child = pexpect.spawn(sys.executable, [str(script)], timeout=15, env=dict(os.environ))
    try:
        for message in (INITIALIZE, INITIALIZED, CALL):
            child.sendline(json.dumps(message))
        child.expect(r'"text":\s*"(\w+)"')
        assert child.match.group(1) == b"asyncio"
        child.sendeof()
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)


def _post(url: str, message: dict[str, Any], session: str | None = None) -> tuple[dict[str, Any], str | None]:
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if session is not None:
        headers |= {"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
    request = urllib.request.Request(url, json.dumps(message).encode(), headers)
    with urllib.request.urlopen(request, timeout=15) as response:
        body = response.read()
        return (json.loads(body) if body else {}), response.headers.get("mcp-session-id")


def test_run_http_serves_on_uvloop(tmp_path: Path) -> None:
    script = write(tmp_path / "loops.py", SERVER)
    port = free_port()
    with http_peer([sys.executable, str(script), "http", str(port)], port) as url:
        _, session = _post(url, INITIALIZE)
        _post(url, INITIALIZED, session)
        answer, _ = _post(url, CALL, session)
    assert answer["result"]["content"][0]["text"] == "uvloop"


@pytest.mark.parametrize("loop", ["uvloop", "asyncio"])
def test_stdin_from_dev_null_is_an_empty_input_not_a_hang_or_a_crash(tmp_path: Path, loop: str) -> None:
    # /dev/null is a character device no event loop can poll (asyncio gets EPERM, uvloop aborts).
    script = write(tmp_path / "loops.py", SERVER)
    env = {**os.environ, "BACKCHANNEL_LOOP": loop if loop == "asyncio" else ""}
    done = subprocess.run(
        [sys.executable, str(script)], stdin=subprocess.DEVNULL, capture_output=True, timeout=20, env=env
    )
    assert (done.returncode, done.stdout) == (0, b""), done.stderr.decode()
