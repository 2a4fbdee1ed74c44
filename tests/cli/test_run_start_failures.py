"""``backchannel run`` that cannot start, or is stopped, says so in one line (issue 27, items 4, 5, 11).

* ``--redis`` with an unreachable Redis, or without redis-py installed, exits 3 at once with one
  line naming the URL and the cause, with one worker or several (before: "serving ... with 4
  workers", then workers restarted forever, hundreds of traceback lines).
* A worker that fails at its start twice in a row stops the fleet, its first error in one line.
* "serving ... at URL" is said once the port listens: a taken port gets one line, exit 3, and
  no "serving".
* Ctrl-C on a stdio server (alone, or under ``call``) and a server file that fails to import:
  one line each; ``--debug`` shows the traceback.
"""

from __future__ import annotations

import os
import pty
import queue
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from _services import RedisServer
from _states import fleet_redis
from _subprocesses import ROOT, checkout_env
from backchannel.testing import free_port, port_accepts

__all__ = ["fleet_redis"]  # (the fixture, used by name)

#: Bounds every wait: a start that fails must fail well within it (the restart delay is 1 s).
TIMEOUT = 60
SERVER = ROOT / "tests" / "fleet" / "cli_server.py"
CRASHING = """
from backchannel import Server

server = Server("crashing")


async def sealed() -> None:
    raise RuntimeError("the vault is sealed")


server.start_sharing = sealed  # each worker's start joins the fleet: here it fails
"""
SLOW = """
import asyncio
import sys

from backchannel import Server

server = Server("slow")


@server.tool()
async def wait() -> str:
    print("waiting now", file=sys.stderr, flush=True)
    await asyncio.sleep(60)
    return "done"
"""


def backchannel(*args: str, env: dict[str, str] | None = None, cwd: Path = ROOT) -> tuple[int, str, float]:
    """Run ``backchannel ARGS`` to its end: (status, stderr, seconds)."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "backchannel", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=env or checkout_env(),
        cwd=cwd,
        start_new_session=True,
    )
    assert done.stdout == ""
    return done.returncode, done.stderr, time.monotonic() - started


def closed_port() -> int:
    """A loopback port nothing listens on (connections to it are refused at once)."""
    port = free_port()
    assert not port_accepts(port)
    return port


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


# -- item 4: --redis and --workers ------------------------------------------------------------------


@pytest.mark.parametrize("workers", ["2", "1"])
def test_an_unreachable_redis_is_one_line_and_status_3(workers: str) -> None:
    url = f"redis://127.0.0.1:{closed_port()}/0"
    status, stderr, seconds = backchannel(
        "run", str(SERVER), "--http", "--port", str(free_port()), "--redis", url, "--workers", workers
    )
    line = one_line(stderr)
    assert status == 3
    assert url in line and "refused" in line.lower(), line
    assert "serving" not in line
    assert seconds < TIMEOUT / 2


def test_redis_without_redis_py_is_one_line_and_status_3(tmp_path: Path) -> None:
    # A python where `import redis` fails, as after README's `pip install -e '.[examples]'`.
    fake = tmp_path / "no-redis-py" / "redis"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('no redis-py here')\n")
    env = {**checkout_env(), "PYTHONPATH": f"{fake.parent}{os.pathsep}{ROOT / 'src'}"}
    url = f"redis://127.0.0.1:{closed_port()}/0"
    for workers in ("4", "1"):
        status, stderr, _ = backchannel(
            "run", str(SERVER), "--http", "--port", str(free_port()), "--redis", url, "--workers", workers, env=env
        )
        line = one_line(stderr)
        assert status == 3
        assert url in line and "pip install 'backchannel[redis]'" in line, line


def test_a_worker_that_fails_to_start_twice_stops_the_fleet(tmp_path: Path, fleet_redis: RedisServer) -> None:
    server = tmp_path / "crashing.py"
    server.write_text(textwrap.dedent(CRASHING))
    argv = ["run", str(server), "--http", "--port", str(free_port()), "--redis", fleet_redis.url, "--workers", "2"]
    status, stderr, seconds = backchannel(*argv)
    line = one_line(stderr)
    assert status == 3
    assert line.startswith("backchannel: worker "), line
    assert "could not start, twice in a row" in line and "RuntimeError: the vault is sealed" in line, line
    assert seconds < TIMEOUT / 2  # stopped, not restarting forever
    # --debug: the first failure's whole output (its traceback) before that line.
    status, stderr, _ = backchannel(*argv, "--debug")
    assert status == 3
    assert "Traceback" in stderr and 'raise RuntimeError("the vault is sealed")' in stderr
    assert "could not start, twice in a row" in stderr.strip().splitlines()[-1]


# -- item 5: "serving" once listening ----------------------------------------------------------------


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


def test_a_taken_port_is_one_line_and_no_serving(taken_port: int) -> None:
    status, stderr, _ = backchannel("run", str(SERVER), "--http", "--port", str(taken_port))
    line = one_line(stderr)
    assert status == 3
    assert line.startswith(f"backchannel: cannot listen on 127.0.0.1:{taken_port}: "), line


def test_a_fleet_on_a_taken_port_is_one_line_and_no_serving(taken_port: int, fleet_redis: RedisServer) -> None:
    argv = ["run", str(SERVER), "--http", "--port", str(taken_port), "--redis", fleet_redis.url, "--workers", "2"]
    status, stderr, _ = backchannel(*argv)
    line = one_line(stderr)
    assert status == 3
    assert line.startswith(f"backchannel: cannot listen on 127.0.0.1:{taken_port}: "), line


class Lines:
    """A process's stderr, line by line, each wait bounded."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stderr is not None
        self.process, self.queue = process, queue.Queue[str]()
        threading.Thread(target=self._pump, args=(process.stderr,), daemon=True).start()

    def _pump(self, stream: object) -> None:
        for raw in iter(stream.readline, b""):  # type: ignore[attr-defined]
            self.queue.put(raw.decode(errors="replace"))
        self.queue.put("")

    def next(self) -> str:
        line = self.queue.get(timeout=TIMEOUT)
        assert line, f"the process ended ({self.process.wait(TIMEOUT)}) before another line"
        return line

    def rest(self) -> list[str]:
        """The lines still to come, once the process has ended."""
        self.process.wait(TIMEOUT)
        lines = []
        while (line := self.queue.get(timeout=TIMEOUT)) != "":
            lines.append(line)
        return lines


@pytest.mark.parametrize("workers", [1, 2])
def test_serving_is_said_once_the_port_accepts(workers: int, fleet_redis: RedisServer) -> None:
    port = free_port()
    argv = [sys.executable, "-m", "backchannel", "run", str(SERVER), "--http", "--port", str(port)]
    if workers > 1:
        argv += ["--redis", fleet_redis.url, "--workers", str(workers)]
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        line = Lines(process).next()
        assert "serving fleet-cli over Streamable HTTP" in line, line
        assert port_accepts(port)  # said once true, not before
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(TIMEOUT)
    assert process.returncode == 0


# -- item 11: Ctrl-C and import errors ----------------------------------------------------------------


def test_ctrl_c_on_a_stdio_server_is_one_line(tmp_path: Path) -> None:
    """A person ran ``backchannel run server.py`` in a terminal and pressed Ctrl-C."""
    terminal, its_end = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "backchannel", "run", str(SERVER)],
        stdin=its_end,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=checkout_env(),
        start_new_session=True,
    )
    os.close(its_end)
    try:
        lines = Lines(process)
        os.write(terminal, b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n')
        assert process.stdout is not None
        assert b'"result"' in process.stdout.readline()  # (serving: it answered)
        os.killpg(process.pid, signal.SIGINT)
        assert process.wait(TIMEOUT) == 130
        assert lines.rest() == ["backchannel run: stopped (Ctrl-C)\n"]
    finally:
        if process.poll() is None:
            process.kill()
        os.close(terminal)


def test_ctrl_c_on_call_with_a_stdio_server_is_one_line(tmp_path: Path) -> None:
    server = tmp_path / "slow.py"
    server.write_text(textwrap.dedent(SLOW))
    argv = ["-m", "backchannel", "call", "wait", "--", sys.executable, "-m", "backchannel", "run", str(server)]
    process = subprocess.Popen(
        [sys.executable, *argv],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=checkout_env(),
        start_new_session=True,
    )
    try:
        lines = Lines(process)
        assert lines.next() == "waiting now\n"  # the server's tool runs (its stderr is let through)
        os.killpg(process.pid, signal.SIGINT)  # Ctrl-C in a terminal: the whole process group
        assert process.wait(TIMEOUT) == 130
        assert lines.rest() == ["backchannel call: interrupted\n"]
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)


BROKEN = """
from backchannel import Server

server = Server("broken")
print(undefined_name)
"""


def test_a_server_that_fails_to_import_is_one_line(tmp_path: Path) -> None:
    server = tmp_path / "broken.py"
    server.write_text(textwrap.dedent(BROKEN))
    status, stderr, _ = backchannel("run", str(server), cwd=tmp_path)
    line = one_line(stderr)
    assert status == 2
    assert line == (
        f"backchannel run: {server} failed to import: NameError: name 'undefined_name' is not defined "
        "(broken.py, line 5) (--debug shows the traceback)"
    )
    status, stderr, _ = backchannel("run", str(server), "--debug", cwd=tmp_path)
    assert status == 2
    assert stderr.startswith("Traceback") and "print(undefined_name)" in stderr
    assert stderr.strip().splitlines()[-1].startswith(f"backchannel run: {server} failed to import: NameError")


def test_a_module_whose_own_import_is_missing_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "bc_needs_a_dependency.py").write_text("import surely_not_installed_here\n")
    status, stderr, _ = backchannel("run", "bc_needs_a_dependency", cwd=tmp_path)
    line = one_line(stderr)
    assert status == 2
    assert "bc_needs_a_dependency failed to import: ModuleNotFoundError" in line, line
    assert "surely_not_installed_here" in line
