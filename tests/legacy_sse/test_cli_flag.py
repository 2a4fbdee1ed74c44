"""``backchannel run --http --legacy-sse``: the flag, its one-line refusals, and what it announces.

The flag serving real clients is proven by ``test_pysdk_sse_client_vs_ours.py``, which starts the
server this way and connects the official SDK's old-transport client to it.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from backchannel.testing import free_port, stop_process

SERVER = str(Path(__file__).resolve().parent / "old_friends_server.py")
TIMEOUT = 30


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "backchannel", "run", SERVER, *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)


def test_the_flag_is_in_the_help() -> None:
    shown = subprocess.run(
        [sys.executable, "-m", "backchannel", "run", "--help"], capture_output=True, text=True, timeout=TIMEOUT
    )
    assert "--legacy-sse" in shown.stdout
    assert "deprecated HTTP+SSE transport" in " ".join(shown.stdout.split())


@pytest.mark.parametrize(
    "args", [("--legacy-sse",), ("--http", "--legacy-sse", "--workers", "2", "--redis", "redis://127.0.0.1:1/0")]
)
def test_the_flag_is_refused_without_http_or_with_several_workers(args: tuple[str, ...]) -> None:
    done = _run(*args)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "backchannel run: --legacy-sse serves HTTP from one process: add --http, leave out --workers"
    ]


def test_run_says_where_old_clients_connect() -> None:
    port = free_port()
    argv = [sys.executable, "-m", "backchannel", "run", SERVER, "--http", "--port", str(port), "--legacy-sse"]
    process = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        first: list[str] = []
        reader = threading.Thread(target=lambda: first.append(process.stderr.readline()), daemon=True)  # type: ignore[union-attr]
        reader.start()
        reader.join(TIMEOUT)
        assert first, "backchannel run printed nothing on stderr"
        assert f"the deprecated HTTP+SSE transport at http://127.0.0.1:{port}/sse" in first[0], first[0]
    finally:
        stop_process(process)
        if process.stderr is not None:
            process.stderr.close()
