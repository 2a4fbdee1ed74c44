"""``run_http(workers=N)``: N processes serving one port, forked from this one.

The parent binds the port once and forks N workers that all accept on it (the kernel spreads
the connections); each builds its own event loop, and its own connection to the shared state,
after the fork. The parent only watches:

- A worker's start is its own affair until it listens: what it writes on stderr until then goes
  to the parent, which passes it on once the worker serves. A worker that dies before it serves
  is started once more; if that start fails too, the fleet stops and ``run_workers`` returns 3,
  saying the first failure in one line (its last line: the whole output with ``debug``).
- A worker that dies while serving (``kill -9``, a crash) is started again after a second.
- SIGTERM or Ctrl-C stops them all.

Sessions, streams and the reverse channel live in the shared state (``--redis``), so no request
needs a particular worker.
"""

from __future__ import annotations

__all__ = ["STARTUP_FAILURE", "run_workers"]

import contextlib
import os
import select
import signal
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

#: A worker that died is started again after this many seconds (not at once: a crash loop).
_RESTART_DELAY = 1.0
#: Exit status of a server that could not start (as ``serving.py`` says it).
STARTUP_FAILURE = 3
#: What a worker writes on its start pipe once it listens, after its start's stderr.
_READY = b"\0backchannel-worker-ready\0"

#: ``serve(sock, ready)``: serve on ``sock`` until stopped, calling ``ready()`` once listening.
Serve = Callable[[socket.socket, Callable[[], None]], None]


@dataclass
class _Worker:
    number: int
    pipe: int  # the read end of its start pipe (-1 once closed)
    output: bytearray = field(default_factory=bytearray)
    ready: bool = False


class _Fleet:
    def __init__(self, sock: socket.socket, serve: Serve, debug: bool) -> None:
        self.sock, self.serve, self.debug = sock, serve, debug
        self.workers: dict[int, _Worker] = {}  # pid -> worker
        self.failed_once: dict[int, tuple[str, str]] = {}  # worker number -> its failed start: (last line, all)
        self.restarts: dict[int, float] = {}  # worker number -> when to start it again
        self.served: set[int] = set()  # the numbers that have served once
        self.stopping = False
        self.status = 0
        self.wake_read, self.wake_write = os.pipe()
        os.set_blocking(self.wake_read, False)
        os.set_blocking(self.wake_write, False)

    def start(self, number: int) -> None:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the worker
            os.close(read)
            self._be_worker(write)
        os.close(write)
        os.set_blocking(read, False)
        self.workers[pid] = _Worker(number, read)

    def _be_worker(self, pipe: int) -> None:
        signal.set_wakeup_fd(-1)
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)
        for fd in (self.wake_read, self.wake_write, *(worker.pipe for worker in self.workers.values())):
            with contextlib.suppress(OSError):
                os.close(fd)
        sys.stderr.flush()
        kept = os.dup(2)
        os.dup2(pipe, 2)  # the start's stderr goes to the parent, until the worker listens

        def ready() -> None:
            sys.stderr.flush()
            os.dup2(kept, 2)
            os.close(kept)
            with contextlib.suppress(OSError):
                os.write(pipe, _READY)
                os.close(pipe)

        status = 0
        try:
            self.serve(self.sock, ready)
        except SystemExit as exc:  # a worker that could not start says why itself (exit status 3)
            status = exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            import traceback

            traceback.print_exc()
            status = 1
        finally:
            sys.stderr.flush()
            os._exit(status)

    def stop(self, signum: int = signal.SIGTERM, _frame: object = None) -> None:
        self.stopping = True
        for pid in list(self.workers):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    def watch(self, on_listening: Callable[[], object] | None, count: int) -> int:
        """Until every worker has ended: read their start pipes, reap them, start them again."""
        told = on_listening is None
        while self.workers or (self.restarts and not self.stopping):
            now = time.monotonic()
            for number, when in sorted(self.restarts.items()):
                if when <= now and not self.stopping:
                    del self.restarts[number]
                    self.start(number)
            pipes = [worker.pipe for worker in self.workers.values() if worker.pipe >= 0]
            timeout = max(0.0, min(self.restarts.values()) - now) if self.restarts else None
            readable, _, _ = select.select([self.wake_read, *pipes], [], [], timeout)
            for worker in list(self.workers.values()):
                if worker.pipe in readable:
                    self._read(worker)
            if self.wake_read in readable:
                with contextlib.suppress(BlockingIOError):
                    while os.read(self.wake_read, 512):
                        pass
            self._reap()
            if not told and len(self.served) >= count and on_listening is not None:
                told = True
                on_listening()
        return self.status

    def _read(self, worker: _Worker) -> None:
        """Take what the worker's start wrote; once it says it listens, pass that on."""
        while worker.pipe >= 0:
            try:
                chunk = os.read(worker.pipe, 65536)
            except BlockingIOError:
                return
            if not chunk:
                os.close(worker.pipe)
                worker.pipe = -1
            elif worker.ready:  # (a process it started on the way still holds the pipe as its stderr)
                self._relay(chunk)
            else:
                worker.output += chunk
            if not worker.ready and worker.output.endswith(_READY):
                del worker.output[-len(_READY) :]
                self._serving(worker)

    def _serving(self, worker: _Worker) -> None:
        worker.ready = True
        self.served.add(worker.number)
        self._relay(bytes(worker.output))
        worker.output.clear()
        first = self.failed_once.pop(worker.number, None)
        if first is not None:
            _say(f"worker {worker.number} failed to start ({first[0]}), and started at the second try")

    def _reap(self) -> None:
        for pid in list(self.workers):  # (the workers only: other children of this process are not ours to reap)
            try:
                done, status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done, status = pid, 0
            if done == 0:
                continue
            worker = self.workers.pop(pid)
            self._read(worker)  # what it wrote last
            if worker.pipe >= 0:
                os.close(worker.pipe)
            if self.stopping:
                continue
            if worker.ready:
                _say(f"worker {worker.number} (pid {pid}) ended ({_how(status)}); starting it again")
                self.restarts[worker.number] = time.monotonic() + _RESTART_DELAY
                continue
            self._failed_start(worker, status)

    def _failed_start(self, worker: _Worker, status: int) -> None:
        text = bytes(worker.output).decode(errors="replace")
        lines = [line for line in text.splitlines() if line.strip()]
        summary = lines[-1].removeprefix("backchannel: ") if lines else f"it ended ({_how(status)})"
        first = self.failed_once.get(worker.number)
        if first is None:
            self.failed_once[worker.number] = (summary, text)
            self.restarts[worker.number] = time.monotonic() + _RESTART_DELAY
            return
        if self.debug:
            self._relay(first[1].encode())
        _say(f"worker {worker.number} could not start, twice in a row: {first[0]}; stopping")
        self.status = STARTUP_FAILURE
        self.restarts.clear()
        self.stop()

    @staticmethod
    def _relay(output: bytes) -> None:
        if output:
            sys.stderr.flush()
            os.write(2, output)


def run_workers(
    sock: socket.socket,
    count: int,
    serve: Serve,
    *,
    on_listening: Callable[[], object] | None = None,
    debug: bool = False,
) -> int:
    """Fork ``count`` workers that each call ``serve(sock, ready)`` on the bound ``sock``, and
    watch them until they have all ended; ``on_listening()`` once every worker has served.
    Returns 0, or ``STARTUP_FAILURE`` if a worker could not start twice in a row."""
    sock.set_inheritable(True)
    fleet = _Fleet(sock, serve, debug)
    previous = signal.set_wakeup_fd(fleet.wake_write)
    handlers = {signum: signal.getsignal(signum) for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGCHLD)}
    signal.signal(signal.SIGTERM, fleet.stop)
    signal.signal(signal.SIGINT, fleet.stop)
    signal.signal(signal.SIGCHLD, lambda _signum, _frame: None)  # (only to wake the watch: the wakeup fd)
    try:
        for number in range(count):
            fleet.start(number)
        return fleet.watch(on_listening, count)
    finally:
        signal.set_wakeup_fd(previous)
        for signum, handler in handlers.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
        for fd in (fleet.wake_read, fleet.wake_write):
            os.close(fd)
        sock.close()


def _how(status: int) -> str:
    code = os.waitstatus_to_exitcode(status)
    return f"signal {-code}" if code < 0 else f"exit status {code}"


def _say(line: str) -> None:
    print(f"backchannel: {line}", file=sys.stderr, flush=True)
