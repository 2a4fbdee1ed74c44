"""A server in another process, on a loopback port: pick the port, start it, wait, stop it.

For testing a server *script* over HTTP (``server.run_http(port=...)`` in its own process),
or another SDK's peer::

    from backchannel import Client
    from backchannel.testing import free_port, running_process, run

    def test_my_script() -> None:
        port = free_port()
        with running_process([sys.executable, "server.py", "--port", str(port)], port=port):
            async def main() -> None:
                async with Client.http(f"http://127.0.0.1:{port}/mcp") as client:
                    await client.list_tools()

            run(main)

These block (they are for plain test functions and fixtures, not for a running event
loop). A server you can import runs in this process instead: ``connected(server,
transport="http")`` is faster and lets the test reach the server's objects.
"""

from __future__ import annotations

__all__ = [
    "LOOPBACK",
    "free_port",
    "port_accepts",
    "running_process",
    "stop_process",
    "wait_for_port",
]

import contextlib
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

LOOPBACK = "127.0.0.1"

#: How much of a dead or silent process's output an error quotes (its tail).
_QUOTED_OUTPUT = 4000


def free_port(host: str = LOOPBACK) -> int:
    """A TCP port nothing on ``host`` listens on right now (the OS picks it). Another
    process may take it before yours binds it; on a test machine that is rare enough."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def port_accepts(port: int, host: str = LOOPBACK, timeout: float = 0.5) -> bool:
    """Whether a TCP connection to ``host:port`` is accepted within ``timeout`` seconds
    (the connection is closed again at once)."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def wait_for_port(
    port: int,
    process: subprocess.Popen[Any] | None = None,
    *,
    host: str = LOOPBACK,
    timeout: float = 30.0,
    output: Callable[[], str] = str,
) -> None:
    """Block until ``host:port`` accepts connections. ``RuntimeError`` if ``process``
    (the one that should listen) exits first, or after ``timeout`` seconds; its message
    ends with ``output()`` (say, the process's log) so the failure shows why."""
    deadline = time.monotonic() + timeout
    while not port_accepts(port, host):
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"{process.args!r} exited {process.returncode} before listening:\n{output()}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"nothing listened on {host}:{port} within {timeout}s:\n{output()}")
        time.sleep(0.05)  # another process's port: there is no event to wait on, so poll with a deadline


def stop_process(process: subprocess.Popen[Any], timeout: float = 5.0) -> None:
    """End ``process``: terminate it (SIGTERM; ``run_http`` shuts down cleanly on it), wait up
    to ``timeout`` seconds, then kill it and reap it. Does nothing if it has already exited."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout)


@contextlib.contextmanager
def running_process(
    argv: Sequence[str],
    *,
    port: int,
    host: str = LOOPBACK,
    cwd: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    start_timeout: float = 30.0,
    stop_timeout: float = 5.0,
) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``argv``, which must listen on ``host:port``; yield the process once the port
    accepts connections; ``stop_process`` it on exit, whatever happened.

    Its stdout and stderr go to a temporary file, quoted (the tail) in the ``RuntimeError``
    raised if it exits before listening or does not listen within ``start_timeout``."""
    with tempfile.TemporaryFile(mode="w+b") as log:
        process = subprocess.Popen(
            list(argv), cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
        )
        try:
            wait_for_port(port, process, host=host, timeout=start_timeout, output=lambda: _tail(log))
            yield process
        finally:
            stop_process(process, stop_timeout)


def _tail(log: IO[bytes]) -> str:
    log.seek(0)
    return log.read().decode("utf-8", "replace")[-_QUOTED_OUTPUT:]
