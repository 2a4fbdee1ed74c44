"""A stdio server answers the requests it already has when its input ends, then exits (stdio.mdx: exit on EOF)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}},
}


def _lines(*messages: dict[str, object]) -> bytes:
    return b"".join(json.dumps(m).encode() + b"\n" for m in messages)


def test_requests_in_flight_at_eof_are_still_answered() -> None:
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "slow_count", "arguments": {"to": 3}}}
    done = subprocess.run(
        [sys.executable, "-m", "backchannel", "run", str(ROOT / "examples" / "demo_server.py")],
        input=_lines(INIT, {"jsonrpc": "2.0", "method": "notifications/initialized"}, call),
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr.decode()
    answers = {m["id"]: m for m in map(json.loads, done.stdout.splitlines()) if "id" in m}
    assert answers[2]["result"]["content"] == [{"type": "text", "text": "counted to 3"}]


def test_a_handler_slower_than_the_grace_is_cut_and_the_server_still_exits() -> None:
    code = (
        "import asyncio\n"
        "from backchannel import Server\n"
        "server = Server('s', finish_grace=0.2)\n"
        "@server.tool()\n"
        "async def forever() -> str:\n"
        "    await asyncio.sleep(3600)\n"
        "    return 'never'\n"
        "server.run()\n"
    )
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "forever"}}
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=_lines(INIT, {"jsonrpc": "2.0", "method": "notifications/initialized"}, call),
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr.decode()
    ids = [m.get("id") for m in map(json.loads, done.stdout.splitlines())]
    assert ids == [1]  # the initialize answer; the cut request gets none
