"""The TypeScript SDK client gets a tool call's last progress (issue #27, item 10).

The TS SDK (1.32.2 and 2.x) hands a notification to a microtask but a response to its handler at
once, and the response removes the request's progress handler: progress it reads in the same chunk
as the answer is dropped ("Received a progress notification for an unknown token"), so a progress
bar never reaches 100%. We used to write the last ``notifications/progress`` and the answer in one
write. Now an answer that follows its request's progress waits until the peer has read that
progress (stdio: asked of the kernel, ``transports/stdio_stream.py``; elsewhere a loop turn).

``tests/progress/ts_progress_client.mjs`` calls ``steps(count=3)`` of
``tests/progress/_progress_server.py`` 200 times (the tool reports 1, 2, 3 and answers at once) and
counts the calls whose progress 3 arrived before their answer. Every run is bounded in count and time.

Over Streamable HTTP the SDK awaits each SSE event on its own (``await reader.read()`` per event),
so a notification's microtask runs before the next event is handled: the progress arrived there
before the fix too. That test guards it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import _http_peer
import pytest

from backchannel.testing import free_port
from peers.paths import NODE22, TESTS_DIR, have_npm_peers

pytestmark = pytest.mark.interop

PROGRESS_DIR = TESTS_DIR / "progress"
CLIENT = PROGRESS_DIR / "ts_progress_client.mjs"
SERVER = [sys.executable, str(PROGRESS_DIR / "_progress_server.py")]
SRC = str(Path(__file__).resolve().parents[2] / "src")
CALLS = 200
TIMEOUT = 240


def run_client(sdk: str, target: list[str]) -> dict[str, Any]:
    """The client's summary after ``CALLS`` calls of ``steps(count=3)``."""
    if not have_npm_peers():
        pytest.skip("npm peers not installed (run tests/peers/install.sh)")
    plan = {"sdk": sdk, "name": "steps", "arguments": {"count": 3}, "calls": CALLS, "total": 3}
    argv = [str(NODE22), str(CLIENT), json.dumps(plan), *target]
    env = {**os.environ, "PYTHONPATH": SRC}
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd=TESTS_DIR, env=env, check=False)
    assert proc.returncode == 0, f"ts_progress_client exited {proc.returncode}\n{proc.stdout}\n{proc.stderr[-2000:]}"
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


def assert_every_last_progress(out: dict[str, Any]) -> None:
    missing = [i for i, last in enumerate(out["last"]) if last != 3]
    assert out["errors"] == []
    assert out["complete"] == CALLS, (
        f"{CALLS - out['complete']} of {CALLS} calls lost their last progress (calls {missing[:10]}...; "
        f"the SDK reported {out['dropped']} progress notifications for unknown tokens)"
    )
    assert out["dropped"] == 0


@pytest.mark.parametrize("sdk", ["v1", "v2"], ids=["sdk-1.32.2", "client-2.x"])
def test_stdio_ts_client_gets_the_last_progress_of_every_call(sdk: str) -> None:
    assert_every_last_progress(run_client(sdk, ["--", *SERVER]))


@pytest.mark.parametrize("sdk", ["v1", "v2"], ids=["sdk-1.32.2", "client-2.x"])
def test_http_ts_client_gets_the_last_progress_of_every_call(sdk: str) -> None:
    port = free_port()
    argv = [*SERVER, "--http", str(port)]
    with _http_peer.http_peer(argv, port, cwd=TESTS_DIR) as url:
        assert_every_last_progress(run_client(sdk, ["--url", url]))
