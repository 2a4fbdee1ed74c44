"""What only this project's tests need around a server in another process.

The general parts (a free port, a process started, waited for and stopped) are in
``backchannel.testing``; this adds what is about this checkout and this machine.
Test modules anywhere under ``tests/`` import it as ``_subprocesses``: pytest's ``pythonpath``
(pyproject.toml) puts ``tests/`` on ``sys.path``.
"""

from __future__ import annotations

__all__ = ["ROOT", "checkout_env", "other_local_address"]

import contextlib
import os
import socket
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def checkout_env() -> dict[str, str]:
    """This environment, with ``PYTHONPATH`` set so a child ``python`` imports backchannel
    from this checkout's ``src/`` (not whatever else is installed)."""
    return {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def other_local_address() -> str | None:
    """A non-loopback IPv4 address of this machine, if it has one: to check that a
    server bound to loopback cannot be reached from outside."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))  # TEST-NET: a UDP connect sends nothing, it only picks a route
        address = str(probe.getsockname()[0])
        return None if address.startswith("127.") or address == "0.0.0.0" else address
    return None
