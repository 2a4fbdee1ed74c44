"""A fleet of real worker processes for the fault tests: one ``redis-server``, N workers
(``fault_worker.py``, each its own process on its own port) and nginx round-robin in front.

``fault_fleet(n)`` starts it all and stops it all on exit. A test kills a worker with
``kill(pid)`` (SIGKILL: no shutdown, no lease given back) and brings one back on the same
port with ``revive(port)``; ``check_all_running()`` says no worker died on its own.
"""

from __future__ import annotations

__all__ = ["FaultFleet", "answer_of", "fault_fleet", "key_count", "keys_naming", "keys_without_ttl"]

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import httpx2
import redis

from _services import Nginx, RedisServer, nginx_round_robin, redis_server
from _subprocesses import checkout_env
from backchannel.testing import free_port, stop_process, wait_for_port

WORKER = Path(__file__).with_name("fault_worker.py")


class FaultFleet:
    """The running fleet: ``url`` is nginx's ``/mcp``; ``processes`` maps each port to its worker."""

    def __init__(self, directory: Path, service: RedisServer, ports: list[int], options: list[str]) -> None:
        self.directory = directory
        self.redis = service
        self.ports = ports
        self.options = options
        self.ledger = directory / "ledger.txt"
        self.ledger.touch()
        self.processes: dict[int, subprocess.Popen[bytes]] = {}
        self._logs: dict[int, IO[bytes]] = {}
        self.nginx: Nginx | None = None

    @property
    def url(self) -> str:
        assert self.nginx is not None
        return f"{self.nginx.url}/mcp"

    def start(self, ports: list[int]) -> None:
        """Start a worker on each of ``ports`` (at once: their imports overlap) and wait for all."""
        for port in ports:
            log = self._logs.get(port) or open(self.directory / f"worker-{port}.log", "ab")  # noqa: SIM115
            self._logs[port] = log
            argv = [sys.executable, str(WORKER), "--port", str(port), "--redis", self.redis.url]
            argv += ["--ledger", str(self.ledger), *self.options]
            self.processes[port] = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=checkout_env()
            )
        for port in ports:
            wait_for_port(port, self.processes[port], timeout=30.0, output=lambda port=port: self.log(port))

    def pids(self) -> dict[int, int]:
        """Each running worker's pid, by port."""
        return {port: process.pid for port, process in self.processes.items() if process.poll() is None}

    def port_of(self, pid: int) -> int:
        (port,) = [port for port, process in self.processes.items() if process.pid == pid]
        return port

    def kill(self, pid: int) -> float:
        """SIGKILL the worker ``pid`` and reap it; the ``time.monotonic()`` of the kill."""
        process = self.processes[self.port_of(pid)]
        killed_at = time.monotonic()
        os.kill(pid, signal.SIGKILL)
        process.wait(timeout=10)
        return killed_at

    def revive(self) -> None:
        """Start a fresh worker on the port of every worker that is no longer running."""
        dead = [port for port, process in self.processes.items() if process.poll() is not None]
        if dead:
            self.start(dead)

    def check_all_running(self) -> None:
        for port, process in self.processes.items():
            assert process.poll() is None, f"the worker on port {port} exited {process.returncode}:\n{self.log(port)}"

    def log(self, port: int) -> str:
        path = self.directory / f"worker-{port}.log"
        return path.read_text(encoding="utf-8", errors="replace")[-4000:] if path.exists() else ""

    def logs(self) -> str:
        """Every worker's log tail, for an assertion's message."""
        return "\n".join(f"--- worker on {port}:\n{self.log(port)}" for port in self.ports)

    def stop(self) -> None:
        for process in self.processes.values():
            stop_process(process)
        for log in self._logs.values():
            log.close()


@contextlib.contextmanager
def fault_fleet(n: int = 4, *, idle: float = 60.0, state_ttl: float = 600.0) -> Iterator[FaultFleet]:
    """Redis, ``n`` workers (``session_idle_timeout=idle``, requestState valid ``state_ttl`` s)
    and nginx round-robin over them; everything stopped on exit."""
    options = ["--idle", str(idle), "--state-ttl", str(state_ttl)]
    with tempfile.TemporaryDirectory(prefix="bc-faults-") as name, redis_server() as service:
        fleet = FaultFleet(Path(name), service, [free_port() for _ in range(n)], options)
        try:
            fleet.start(fleet.ports)
            with nginx_round_robin(fleet.ports) as nginx:
                fleet.nginx = nginx
                yield fleet
        finally:
            fleet.stop()


def key_count(url: str) -> int:
    with redis.Redis.from_url(url) as client:
        return int(client.dbsize())


def keys_without_ttl(url: str) -> list[str]:
    """The keys that would never expire (none should: every key has a TTL)."""
    with redis.Redis.from_url(url) as client:
        return [key.decode() for key in client.scan_iter() if client.pttl(key) == -1]


def keys_naming(url: str, word: str) -> list[str]:
    """The keys whose name holds ``word`` (a session id, say: its record and its streams)."""
    with redis.Redis.from_url(url) as client:
        return [key.decode() for key in client.scan_iter(match=f"*{word}*")]


def answer_of(response: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC answer a POST got: its JSON body, or the last event of its SSE stream (an
    answer not ready within ``sse_after`` comes as a stream)."""
    if response.headers["content-type"].startswith("application/json"):
        return dict(response.json())
    (data,) = [line[6:] for line in response.text.splitlines() if line.startswith("data: ")][-1:]
    return dict(json.loads(data))
