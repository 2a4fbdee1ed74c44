"""What the server legs of ``run.py`` run against: one fixture process, or a fleet of them.

- ``FixtureServer``: ``everything_server.py`` on a free port (with ``--redis URL``, one worker
  of a fleet sharing that Redis).
- ``FixtureFleet``: one ``redis-server``, N ``FixtureServer`` workers sharing it, each on its own
  port, and nginx in front passing every request to the next worker in turn, so consecutive
  requests of one session land on different processes (``tests/_services.py``).
- ``FixtureServer(log, (URL,), script=PROXY_FIXTURE)``: ``proxy_server.py``, a
  ``backchannel.bridge.Proxy`` on a free port in front of the upstream at ``URL``.
- ``EverythingServer``: ``@modelcontextprotocol/server-everything`` over Streamable HTTP on a
  free loopback port (``tests/peers/loopback-only.cjs`` keeps it off the other interfaces).
- ``GatewayServer(log, URL, era)``: ``backchannel gateway FILE --http`` on a free port, the file
  mounting the upstream at ``URL`` under the prefix ``""`` (its names unchanged: the harness
  calls fixed names), spoken to in ``era``; the file is written beside the log.

Both are context managers with ``.url`` (the harness's ``--url``) and ``.log_tail()`` (what to
print when a leg fails); everything they start is stopped on exit. ``test_conformance_fleet.py``
checks that the fleet really spreads a session over all its workers.
"""

from __future__ import annotations

__all__ = ["EverythingServer", "FixtureFleet", "FixtureServer", "GatewayServer"]

import contextlib
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
ROOT = TESTS.parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from _services import nginx_round_robin, redis_server  # noqa: E402
from backchannel.testing import free_port, port_accepts  # noqa: E402
from peers.paths import LISTENING_RE, everything_http_cmd, everything_http_url  # noqa: E402

SERVER_FIXTURE = HERE / "everything_server.py"
PROXY_FIXTURE = HERE / "proxy_server.py"
SERVER_START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0


class FixtureServer:
    """``everything_server.py`` (or ``script``, which takes the same ``--port N``) on a free port,
    stopped on exit; ``extra`` goes to its command line."""

    def __init__(self, log_path: Path, extra: tuple[str, ...] = (), script: Path = SERVER_FIXTURE) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.log_path = log_path
        self.extra = extra
        self.script = script
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> FixtureServer:
        self.launch()
        self.wait_listening()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def launch(self) -> None:
        """Start the process (``wait_listening`` then waits for its port)."""
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, str(self.script), "--port", str(self.port), *self.extra],
                cwd=ROOT,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def wait_listening(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"{self.script.name} exited with {self.process.returncode} before listening:\n{self.log_tail()}"
                )
            if port_accepts(self.port):
                return
            if time.monotonic() > deadline:
                self.stop()
                within = f"{SERVER_START_TIMEOUT_S:.0f}s"
                raise RuntimeError(f"{self.script.name} did not accept connections within {within}")
            time.sleep(0.1)  # another process's port: no event to wait on, so poll with a deadline

    def stop(self) -> None:
        self.interrupt()
        self.reap()

    def interrupt(self) -> None:
        """Ask it to stop (SIGINT: uvicorn shuts down gracefully); ``reap`` waits for it."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)

    def reap(self, timeout: float = STOP_TIMEOUT_S) -> bool:
        """Wait for it to exit, killing it after ``timeout`` seconds; False when it had to be killed."""
        process = self.process
        if process is None:
            return True
        try:
            process.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
            return False

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


class FixtureFleet:
    """``workers`` fixture processes sharing one Redis, behind nginx round-robin."""

    def __init__(self, work: Path, workers: int) -> None:
        self.work = work
        self.count = workers
        self.url = ""
        self.redis_url = ""
        self.workers: list[FixtureServer] = []
        self._stack = contextlib.ExitStack()
        self._nginx_log: Path | None = None

    def __enter__(self) -> FixtureFleet:
        with contextlib.ExitStack() as stack:
            redis = stack.enter_context(redis_server())
            self.redis_url = redis.url
            extra = ("--redis", redis.url)
            self.workers = [FixtureServer(self.work / f"fleet-worker-{i}.log", extra) for i in range(self.count)]
            stack.callback(self._stop_workers)
            for worker in self.workers:
                worker.launch()  # all at once: they import and connect side by side
            for worker in self.workers:
                worker.wait_listening()
            nginx = stack.enter_context(nginx_round_robin([worker.port for worker in self.workers]))
            self._nginx_log = nginx.directory / "error.log"
            self.url = f"{nginx.url}/mcp"
            self._stack = stack.pop_all()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def _stop_workers(self) -> None:
        # All asked at once, so a worker slow to stop costs the timeout once, not once per worker.
        for worker in self.workers:
            worker.interrupt()
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for number, worker in enumerate(self.workers):
            if not worker.reap(max(0.0, deadline - time.monotonic())):
                print(f"fleet: worker {number} did not stop within {STOP_TIMEOUT_S:.0f}s of SIGINT; killed it")

    def log_tail(self, lines: int = 15) -> str:
        parts = []
        for number, worker in enumerate(self.workers):
            tail = worker.log_tail(lines)
            if tail:
                parts.append(f"--- worker {number} (port {worker.port}, {worker.log_path.name}):\n{tail}")
        if self._nginx_log is not None:
            with contextlib.suppress(OSError):
                text = self._nginx_log.read_text(errors="replace").strip()
                if text:
                    parts.append("--- nginx error.log:\n" + "\n".join(text.splitlines()[-lines:]))
        return "\n".join(parts)


class EverythingServer(FixtureServer):
    """``@modelcontextprotocol/server-everything`` over Streamable HTTP on 127.0.0.1, on the port
    it picks (``PORT=0``; ``loopback-only.cjs`` prints it), stopped on exit."""

    def __init__(self, log_path: Path) -> None:
        super().__init__(log_path)
        self.port = 0
        self.url = ""

    def launch(self) -> None:
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                everything_http_cmd(0),
                cwd=ROOT,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def wait_listening(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"server-everything exited with {self.process.returncode} before listening:\n{self.log_tail()}"
                )
            listening = LISTENING_RE.search(self.log_path.read_text(errors="replace"))
            if listening is not None and port_accepts(int(listening["port"])):
                self.port = int(listening["port"])
                self.url = everything_http_url(self.port)
                return
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"server-everything did not listen within {SERVER_START_TIMEOUT_S:.0f}s")
            time.sleep(0.1)  # its line in the log file: no event to wait on, so poll with a deadline

    def interrupt(self) -> None:
        """SIGTERM: Node's default for it is to exit (SIGINT would do too, but say what we mean)."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)


class GatewayServer(FixtureServer):
    """``backchannel gateway`` on a free port, serving over Streamable HTTP the upstream at
    ``upstream_url`` mounted under the prefix ``""`` and spoken to in ``era`` (stopped on exit,
    like the others)."""

    def __init__(self, log_path: Path, upstream_url: str, era: str = "auto") -> None:
        super().__init__(log_path)
        self.config = log_path.with_suffix(".toml")
        upstream = f'name = ""\nurl = {json.dumps(upstream_url)}\nera = "{era}"\n'
        self.config.write_text(f'[gateway]\nname = "conformance-gateway"\n\n[[upstream]]\n{upstream}')

    def launch(self) -> None:
        argv = [sys.executable, "-m", "backchannel", "gateway", str(self.config), "--http", "--port", str(self.port)]
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
