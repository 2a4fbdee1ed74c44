"""``run_http(workers=N)``: N processes serving one port, forked from this one.

The parent binds the port once and forks N workers that all accept on it (the kernel spreads
the connections); each builds its own event loop, and its own connection to the shared state,
after the fork. The parent only watches: a worker that dies (``kill -9``, a crash) is started
again after a second, and SIGTERM or Ctrl-C stops them all. Sessions, streams and the reverse
channel live in the shared state (``--redis``), so no request needs a particular worker.
"""

from __future__ import annotations

__all__ = ["run_workers"]

import contextlib
import os
import signal
import socket
import sys
import time
from collections.abc import Callable

#: A worker that dies this soon after its start is not restarted at once (a crash loop).
_RESTART_DELAY = 1.0


def run_workers(host: str, port: int, count: int, serve: Callable[[socket.socket], None]) -> None:
    """Bind ``host:port``, fork ``count`` workers that each call ``serve(sock)``, and watch them."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.create_server((host, port), family=family, backlog=2048)
    sock.set_inheritable(True)
    children: dict[int, int] = {}  # pid -> worker number
    stopping = False

    def start(number: int) -> None:
        pid = os.fork()
        if pid == 0:  # the worker
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            status = 0
            try:
                serve(sock)
            except SystemExit as exc:  # a worker that could not start says why itself (exit status 3)
                status = exc.code if isinstance(exc.code, int) else 1
            except BaseException:
                import traceback

                traceback.print_exc()
                status = 1
            finally:
                os._exit(status)
        children[pid] = number

    def stop(signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True
        for pid in list(children):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for number in range(count):
        start(number)
    try:
        while children:
            try:
                pid, status = os.wait()
            except ChildProcessError:
                break
            except InterruptedError:
                continue
            number = children.pop(pid, -1)
            if number < 0 or stopping:
                continue
            how = f"signal {-os.waitstatus_to_exitcode(status)}" if os.WIFSIGNALED(status) else "exit"
            print(f"backchannel: worker {number} (pid {pid}) ended ({how}); starting it again", file=sys.stderr)
            time.sleep(_RESTART_DELAY)
            if not stopping:
                start(number)
    finally:
        sock.close()
