"""A stdio server that dies in the middle of a tool call (issue 18, item 10).

The client says that the server process exited, with its exit status, and points at the
server's stderr, which it let through above; in ``backchannel call`` (with and without
``--json``) and in ``backchannel connect`` in a pseudo-terminal.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pexpect

from backchannel import Client
from backchannel.testing import run
from backchannel.types.errors import ConnectionClosed

TIMEOUT = 30
DYING = """
import os
import sys

from backchannel import Server

server = Server("dying")


@server.tool()
async def die() -> str:
    \"\"\"Exit with status 3 in the middle of the call.\"\"\"
    print("dying: the disk is on fire", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool()
def fine() -> str:
    return "still here"
"""
EXITED = "the server process exited with status 3; its error output, if any, is above"


def dying_server(tmp_path: Path) -> list[str]:
    path = tmp_path / "dying.py"
    path.write_text(textwrap.dedent(DYING))
    return [sys.executable, "-m", "backchannel", "run", str(path)]


def test_the_client_api_says_how_the_server_process_ended(tmp_path: Path) -> None:
    server = dying_server(tmp_path)

    async def main() -> str:
        async with Client.stdio(server[0], server[1:]) as client:
            assert (await client.call_tool("fine")).content[0].text == "still here"  # type: ignore[union-attr]
            try:
                await client.call_tool("die")
            except ConnectionClosed as exc:
                return str(exc)
        raise AssertionError("the call did not fail")

    assert run(main, TIMEOUT) == f"Connection closed: {EXITED}"


def test_call_says_the_server_exited_with_its_status(tmp_path: Path) -> None:
    server = dying_server(tmp_path)
    for as_json in (False, True):
        done = subprocess.run(
            [sys.executable, "-m", "backchannel", "call", "die", *(["--json"] if as_json else []), "--", *server],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert done.returncode == 2
        # The server's own last words come first (its stderr is ours), then what we say of it.
        lines = done.stderr.splitlines()
        assert lines[-2:] == ["dying: the disk is on fire", f"backchannel call: could not talk to the server: {EXITED}"]
        if as_json:
            assert json.loads(done.stdout) == {
                "error": {"code": -32000, "message": f"could not talk to the server: {EXITED}"}
            }
        else:
            assert done.stdout == ""


def test_connect_says_the_server_exited_with_its_status(tmp_path: Path) -> None:
    server = dying_server(tmp_path)
    environment = {**os.environ, "PROMPT_TOOLKIT_NO_CPR": "1", "TERM": "xterm-256color", "NO_COLOR": "1"}
    child = pexpect.spawn(
        sys.executable,
        ["-m", "backchannel", "connect", "--", *server],
        env=environment,
        encoding="utf-8",
        timeout=TIMEOUT,
        dimensions=(50, 200),
    )
    try:
        screen = read_until(child, "dying>")
        child.send("call die\r")
        screen += read_until(child, None)  # the session ends by itself: the server is gone
    finally:
        child.close(force=True)
    after = screen[screen.index("dying>") :]
    said = after.index("dying: the disk is on fire")
    assert f"The connection is closed: {EXITED}." in after[said:], after
    assert child.exitstatus == 1  # the session ended because the server went away, not by quit


_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>78]|\r")


def read_until(child: pexpect.spawn[str], text: str | None) -> str:
    """What the terminal showed (escape codes taken out) until ``text`` appears, or the end (None)."""
    seen = ""
    deadline = time.monotonic() + TIMEOUT
    while text is None or text not in _ANSI.sub("", seen):
        assert time.monotonic() < deadline, f"no {text!r} on the screen:\n{_ANSI.sub('', seen)}"
        try:
            seen += child.read_nonblocking(65536, timeout=0.5)
        except pexpect.TIMEOUT:
            continue
        except pexpect.EOF:
            assert text is None, f"the program ended before {text!r}:\n{_ANSI.sub('', seen)}"
            break
    return _ANSI.sub("", seen)
