"""Start a peer that serves Streamable HTTP on 127.0.0.1, wait until it listens, stop it.

Used by the interop modules here whose ``transport`` fixture includes ``http``
(``import _http_peer``: pytest puts this directory on ``sys.path`` for the test modules
here). The peer's stdout/stderr go to a temporary file whose text is quoted when the peer
dies or never starts listening.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

HOST = "127.0.0.1"
START_TIMEOUT = 30.0
STOP_TIMEOUT = 5.0


def free_port() -> int:
    """A port nothing on 127.0.0.1 listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def _accepts(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        try:
            sock.connect((HOST, port))
        except OSError:
            return False
        return True


@contextlib.contextmanager
def http_peer(argv: Sequence[str], port: int, *, cwd: Path | None = None) -> Iterator[str]:
    """Run ``argv`` (which must listen on 127.0.0.1:``port``); yield ``http://127.0.0.1:port/mcp``.

    Waits at most ``START_TIMEOUT`` seconds for the port to accept connections; on exit
    terminates the process (then kills it after ``STOP_TIMEOUT``)."""
    with tempfile.TemporaryFile(mode="w+b") as log:
        proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)

        def output() -> str:
            log.seek(0)
            return log.read().decode("utf-8", "replace")[-4000:]

        try:
            deadline = time.monotonic() + START_TIMEOUT
            while not _accepts(port):
                if proc.poll() is not None:
                    raise RuntimeError(f"{argv[:3]} exited {proc.returncode} before listening:\n{output()}")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{argv[:3]} did not listen on {HOST}:{port} in {START_TIMEOUT}s:\n{output()}")
                time.sleep(0.1)
            yield f"http://{HOST}:{port}/mcp"
        finally:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(STOP_TIMEOUT)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(STOP_TIMEOUT)
