"""What only this project's tests need around a server in another process.

The general parts (a free port, a process started, waited for and stopped) are in
``backchannel.testing``; this adds what is about this checkout and this machine: the
environment and the CLI of this checkout (``checkout_env``, ``run_cli``), and what Linux's
``/proc`` says of a process (``child_pids``, ``wait_for_children``, ``rss_kib``).
Test modules anywhere under ``tests/`` import it as ``_subprocesses``: pytest's ``pythonpath``
(pyproject.toml) puts ``tests/`` on ``sys.path``.
"""

from __future__ import annotations

__all__ = ["ROOT", "checkout_env", "child_pids", "other_local_address", "rss_kib", "run_cli", "wait_for_children"]

import contextlib
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def checkout_env() -> dict[str, str]:
    """This environment, with ``PYTHONPATH`` set so a child ``python`` imports backchannel
    from this checkout's ``src/`` (not whatever else is installed)."""
    return {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def run_cli(*args: str, timeout: float, stdin: str | None = None, **options: Any) -> subprocess.CompletedProcess[str]:
    """``backchannel ARGS`` (``python -m backchannel``) in a process of its own, run to its end
    within ``timeout`` seconds; its output as text. ``stdin`` is its input (None: the null
    device); ``options`` go to ``subprocess.run`` (``env``, ``cwd``)."""
    return subprocess.run(
        [sys.executable, "-m", "backchannel", *args],
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        text=True,
        timeout=timeout,
        **options,
    )


def other_local_address() -> str | None:
    """A non-loopback IPv4 address of this machine, if it has one: to check that a
    server bound to loopback cannot be reached from outside."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))  # TEST-NET: a UDP connect sends nothing, it only picks a route
        address = str(probe.getsockname()[0])
        return None if address.startswith("127.") or address == "0.0.0.0" else address
    return None


def child_pids(pid: int) -> set[int]:
    """The processes whose parent is ``pid`` (Linux: read from ``/proc``)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.add(int(entry.name))
    return found


def wait_for_children(pid: int, count: int, timeout: float) -> set[int]:
    """``child_pids(pid)`` once there are ``count`` of them, or after ``timeout`` seconds
    whatever there are (another process's children: no event to wait on, so this polls)."""
    deadline = time.monotonic() + timeout
    while len(found := child_pids(pid)) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def rss_kib(pid: int) -> int:
    """Resident memory of process ``pid`` in KiB (``VmRSS`` of ``/proc/PID/status``; 0 for one
    that has exited and not been waited for, which holds none)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0
