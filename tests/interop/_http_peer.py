"""Start a peer that serves Streamable HTTP on 127.0.0.1, wait until it listens, stop it.

Used by the interop modules here whose ``transport`` fixture includes ``http``
(``import _http_peer``: pytest puts this directory on ``sys.path`` for the test modules
here), and by ``tests/cli/test_event_loop.py``. Built on ``backchannel.testing.running_process``:
the peer's stdout/stderr go to a temporary file whose tail is quoted when the peer dies or
never starts listening; on exit it is terminated, then killed after ``STOP_TIMEOUT``.
"""

from __future__ import annotations

__all__ = ["START_TIMEOUT", "STOP_TIMEOUT", "http_peer"]

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path

from backchannel.testing import LOOPBACK, running_process

#: Seconds: another SDK's peer (node, a fresh virtualenv) can be slow to start.
START_TIMEOUT = 30.0
STOP_TIMEOUT = 5.0


@contextlib.contextmanager
def http_peer(argv: Sequence[str], port: int, *, cwd: Path | None = None) -> Iterator[str]:
    """Run ``argv`` (which must listen on 127.0.0.1:``port``, from ``free_port()``); yield
    ``http://127.0.0.1:port/mcp`` once it accepts connections."""
    with running_process(argv, port=port, cwd=cwd, start_timeout=START_TIMEOUT, stop_timeout=STOP_TIMEOUT):
        yield f"http://{LOOPBACK}:{port}/mcp"
