"""A fleet of real processes for the interop tests: one ``redis-server``, four workers running
``fleet_fixture_server.py`` (each its own process on its own port, sharing that Redis) and nginx
in front of them passing every request to the next worker in turn.

``process_fleet()`` starts it all and stops it all on exit. ``ProcessFleet.requests(since, until)``
merges the workers' request logs: which worker served each HTTP request that arrived in that
window (``time.monotonic_ns()``, one clock for every process of the machine).
"""

from __future__ import annotations

__all__ = ["WORKERS", "ProcessFleet", "process_fleet"]

import contextlib
import functools
import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from _services import Nginx, nginx_round_robin, redis_server
from backchannel.testing import free_port, stop_process, wait_for_port

HERE = Path(__file__).resolve().parent
SERVER = HERE / "fleet_fixture_server.py"
WORKERS = 4
START_TIMEOUT = 30.0


class ProcessFleet:
    """What a test needs of the running fleet: ``url`` (nginx), ``marks`` (the cancelled calls' marks)."""

    def __init__(self, directory: Path, nginx: Nginx, names: list[str]) -> None:
        self.directory = directory
        self.url = f"{nginx.url}/mcp"
        self.nginx = nginx
        self.names = names
        self.marks = directory / "marks"

    def requests(self, since: int, until: int) -> list[dict[str, Any]]:
        """Every HTTP request any worker received between ``since`` and ``until`` (ns), by arrival."""
        entries: list[dict[str, Any]] = []
        for name in self.names:
            path = self.directory / f"{name}.requests"
            if path.exists():
                lines = path.read_text(encoding="utf-8").splitlines()
                entries.extend(json.loads(line) for line in lines if line)
        return sorted((e for e in entries if since <= e["t"] <= until), key=lambda e: e["t"])

    def log_tail(self, size: int = 3000) -> str:
        """The end of every worker's output and nginx's error log, for a failure's message."""
        parts = []
        for name in self.names:
            text = (self.directory / f"{name}.out").read_text(encoding="utf-8", errors="replace")
            parts.append(f"--- {name}:\n{text[-size:]}")
        parts.append(f"--- nginx:\n{self.nginx.error_log()}")
        return "\n".join(parts)


@contextlib.contextmanager
def process_fleet() -> Iterator[ProcessFleet]:
    with contextlib.ExitStack() as stack:
        directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bc-fleet-")))
        (directory / "marks").mkdir()
        redis = stack.enter_context(redis_server())
        names = [f"w{i}" for i in range(WORKERS)]
        started: list[tuple[int, subprocess.Popen[bytes], Path]] = []
        for name in names:  # all at once: they import and connect side by side
            port = free_port()
            out = directory / f"{name}.out"
            argv = [
                sys.executable, str(SERVER), "--port", str(port), "--redis", redis.url, "--name", name,
                "--requests", str(directory / f"{name}.requests"), "--marks", str(directory / "marks"),
            ]  # fmt: skip
            with out.open("wb") as sink:
                process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT)
            stack.callback(stop_process, process)
            started.append((port, process, out))
        for port, process, out in started:
            wait_for_port(
                port, process, timeout=START_TIMEOUT, output=functools.partial(out.read_text, errors="replace")
            )
        nginx = stack.enter_context(nginx_round_robin([port for port, _, _ in started]))
        yield ProcessFleet(directory, nginx, names)
