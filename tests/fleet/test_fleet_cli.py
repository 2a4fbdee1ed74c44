"""`backchannel run --http --redis URL --workers N`: N worker processes on one port serve as one
server (the kernel spreads connections over them), and the parent starts a worker again when one
is killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _services import RedisServer
from _subprocesses import child_pids, wait_for_children
from backchannel import Client
from backchannel.testing import free_port, run, stop_process, wait_for_port

HERE = Path(__file__).parent


def _start(redis_url: str, port: int, workers: int) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "backchannel", "run", str(HERE / "cli_server.py"), "--http"]
    command += ["--port", str(port), "--redis", redis_url, "--workers", str(workers)]
    return subprocess.Popen(command, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, start_new_session=True)


def test_workers_serve_one_port_as_one_server_and_a_killed_one_is_started_again(fleet_redis: RedisServer) -> None:
    port = free_port()
    process = _start(fleet_redis.url, port, 2)
    try:
        wait_for_port(port, timeout=20)
        workers = wait_for_children(process.pid, 2, timeout=10)
        assert len(workers) == 2

        def person(params: dict[str, Any]) -> dict[str, Any]:
            return {"action": "accept", "content": {"name": "ada"}}

        async def calls() -> set[int]:
            pids: set[int] = set()
            url = f"http://127.0.0.1:{port}/mcp"
            for _ in range(6):  # each client opens its own connections: the kernel spreads them
                async with Client.http(url, era="handshake", elicitation=person) as client:
                    pids.add(int((await client.call_tool("whoami", {})).content[0].text))  # type: ignore[union-attr]
                    answer = (await client.call_tool("ask", {})).content[0].text  # type: ignore[union-attr]
                    assert answer.startswith("accept:ada@")
            return pids

        assert run(calls) <= workers
        victim = min(workers)
        os.kill(victim, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            now = child_pids(process.pid)
            if len(now) == 2 and victim not in now:
                break
            time.sleep(0.05)
        assert len(child_pids(process.pid)) == 2 and victim not in child_pids(process.pid)
        assert run(calls)  # the fleet serves on
    finally:
        stop_process(process, timeout=15)  # SIGTERM: the parent ends its workers
        stderr = process.stderr.read().decode() if process.stderr else ""
    assert "with 2 workers, sharing state through redis://" in stderr
    assert "worker 0 (pid" in stderr or "worker 1 (pid" in stderr
    assert "starting it again" in stderr


def test_workers_without_redis_are_refused_in_one_line() -> None:
    command = [sys.executable, "-m", "backchannel", "run", str(HERE / "cli_server.py"), "--http", "--workers", "2"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "backchannel run: --workers needs --redis: the workers share their sessions through it"
    )
