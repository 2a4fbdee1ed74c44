"""The stdio fuzz pass: fuzzed frames in batches to a real server process, checked as they come back.

Each batch is the answers to the server's pending questions, ``batch`` fuzzed steps,
cancels for the listen streams left open, and last a ping (``ping`` or, for the
stateless era, ``server/discover``) whose answer is awaited before the next batch:
its latency is how long the server lagged behind the attack. At the end every
request must have had its answers (``Ledger``), the process must still be running,
and its resident memory must not have grown past a bound.

Used by ``test_fuzz_stdio.py`` (a bounded pass) and ``long_run.py`` (the long one).
"""

from __future__ import annotations

__all__ = ["FuzzReport", "StdioFuzz", "rss_kib"]

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from frames import LEGACY, FrameMaker, Ledger

SERVER = Path(__file__).resolve().parent / "fuzz_server.py"
PING_DEADLINE = 10.0  # seconds: past this the server is hung (the 1 s bound is checked on the figures)
DRAIN_DEADLINE = 15.0  # seconds for the last answers (questions answered meanwhile) at the end


def rss_kib(pid: int) -> int:
    """Resident memory of process ``pid`` in KiB (``VmRSS`` of ``/proc/PID/status``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for process {pid}")


@dataclass
class FuzzReport:
    frames: int = 0
    lines: int = 0
    seconds: float = 0.0
    pings: int = 0
    max_ping: float = 0.0
    rss_start_kib: int = 0
    rss_warm_kib: int = 0
    rss_end_kib: int = 0
    codes: dict[int, int] = field(default_factory=dict)
    answers: int = 0
    notifications: int = 0
    problems: list[str] = field(default_factory=list)
    stderr_tail: str = ""
    slowest_batch: list[bytes] = field(default_factory=list, repr=False)

    @property
    def rate(self) -> float:
        return self.frames / self.seconds if self.seconds else 0.0

    def summary(self) -> str:
        return (
            f"{self.frames} frames ({self.lines} lines) in {self.seconds:.1f} s = {self.rate:.0f} frames/s; "
            f"RSS {self.rss_start_kib / 1024:.1f} MiB at start, {self.rss_warm_kib / 1024:.1f} MiB warm, "
            f"{self.rss_end_kib / 1024:.1f} MiB at end; {self.pings} pings, max latency {self.max_ping * 1000:.0f} ms; "
            f"{self.answers} answers, {self.notifications} notifications; codes {dict(sorted(self.codes.items()))}; "
            f"{len(self.problems)} problems"
        )


class StdioFuzz:
    """One server process under ``frames`` fuzzed steps (see the module docstring)."""

    def __init__(
        self,
        seed: int,
        frames: int,
        *,
        batch: int = 100,
        warm_frames: int = 2000,
        deep: bool = True,
        meta_types: bool = True,
        huge: bool = True,
        max_line: int = 1024 * 1024,
        progress: bool = False,
    ) -> None:
        self.frames = frames
        self.batch = batch
        self.warm_frames = warm_frames
        self.progress = progress
        self.ledger = Ledger()
        self.maker = FrameMaker(seed, self.ledger, deep=deep, meta_types=meta_types, huge=huge, max_line=max_line)
        self.max_line = max_line
        self._arrived = threading.Condition()
        self._pings: dict[Any, float] = {}
        self._answers = 0
        self._notifications = 0
        self._reader_error: BaseException | None = None

    # ---------------------------------------------------------------- process

    def run(self) -> FuzzReport:
        with tempfile.TemporaryDirectory() as sandbox, open(Path(sandbox) / "stderr.log", "w+b") as stderr:
            env = {**os.environ, "FUZZ_MAX_LINE_BYTES": str(self.max_line), "PYTHONUNBUFFERED": "1"}
            self.process = subprocess.Popen(
                [sys.executable, str(SERVER)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                cwd=sandbox,
                env=env,
            )
            reader = threading.Thread(target=self._read, daemon=True)
            reader.start()
            try:
                report = self._attack()
            finally:
                if self.process.poll() is None:
                    assert self.process.stdin is not None
                    self.process.stdin.close()
                    try:
                        self.process.wait(10)
                    except subprocess.TimeoutExpired:
                        self.process.kill()
                        self.process.wait()
                reader.join(10)
            stderr.seek(0)
            report.stderr_tail = stderr.read()[-4000:].decode(errors="replace")
        if self._reader_error is not None:
            report.problems.append(f"reading the server failed: {self._reader_error!r}")
        return report

    def _read(self) -> None:
        assert self.process.stdout is not None
        try:
            for line in self.process.stdout:
                message = json.loads(line)
                now = time.monotonic()
                with self._arrived:
                    if isinstance(message, dict):
                        if "method" in message:
                            self._notifications += "id" not in message
                        else:
                            self._answers += 1
                            if message.get("id") in self._pings and self._pings[message["id"]] < 0:
                                self._pings[message["id"]] = now
                        self.maker.saw(message)
                    else:
                        self.ledger.problems.append(f"the server wrote a non-object line: {line[:200]!r}")
                    self._arrived.notify_all()
        except BaseException as exc:  # reported by run(), not lost in a thread
            self._reader_error = exc
        finally:
            with self._arrived:
                self._arrived.notify_all()

    def _write(self, lines: list[bytes]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"".join(line + b"\n" for line in lines))
        self.process.stdin.flush()

    def _wait(self, done: Any, deadline: float) -> bool:
        """Wait (bounded) until ``done()`` holds; False on timeout or if the server stopped talking."""
        end = time.monotonic() + deadline
        with self._arrived:
            while not done():
                left = end - time.monotonic()
                if left <= 0 or self.process.poll() is not None:
                    return bool(done())
                self._arrived.wait(min(left, 0.5))
        return True

    # ---------------------------------------------------------------- attack

    def _attack(self) -> FuzzReport:
        report = FuzzReport()
        init = {
            "jsonrpc": "2.0",
            "id": "init",
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY,
                "capabilities": {"elicitation": {"form": {}}, "roots": {"listChanged": True}, "sampling": {}},
                "clientInfo": {"name": "fuzzer", "version": "1"},
            },
        }
        line = json.dumps(init).encode()
        self.ledger.expect("init", 1, 1, line)
        self._write([line, b'{"jsonrpc":"2.0","method":"notifications/initialized"}'])
        if not self._wait(lambda: self.ledger.settled("init"), PING_DEADLINE):
            report.problems.append("initialize was not answered")
            return report
        report.rss_start_kib = report.rss_warm_kib = rss_kib(self.process.pid)
        started = time.monotonic()
        sent = 0
        last_batch: list[bytes] = []
        while sent < self.frames:
            lines = self.maker.answers()
            steps = min(self.batch, self.frames - sent)
            for _ in range(steps):
                lines.extend(self.maker.frames())
            sent += steps
            lines.extend(self.maker.closing())
            last_batch = lines
            report.lines += len(lines)
            if not self._ping(report, lines):
                report.problems.append(f"no ping answer within {PING_DEADLINE} s after frame {sent}")
                break
            if self.process.poll() is not None:
                break
            if report.rss_warm_kib == report.rss_start_kib and sent >= self.warm_frames:
                report.rss_warm_kib = rss_kib(self.process.pid)
            if self.progress and sent % 50_000 < self.batch:
                print(
                    f"{sent} frames, {time.monotonic() - started:.0f} s, max ping {report.max_ping * 1000:.0f} ms,"
                    f" RSS {rss_kib(self.process.pid) / 1024:.1f} MiB",
                    flush=True,
                )
        report.frames = sent
        self._finish(report)
        report.seconds = time.monotonic() - started
        if self.process.poll() is not None:
            batch = b"\n".join(line[:300] for line in last_batch[-20:])
            report.problems.append(f"the server exited with {self.process.returncode}; last lines sent:\n{batch!r}")
        else:
            report.rss_end_kib = rss_kib(self.process.pid)
        with self.ledger.lock:
            report.codes = {code: count for code, count in self.ledger.codes.items() if isinstance(code, int)}
        report.answers, report.notifications = self._answers, self._notifications
        report.problems.extend(self.ledger.report())
        return report

    def _ping(self, report: FuzzReport, before: list[bytes] = ()) -> bool:  # type: ignore[assignment]
        """Write ``before`` and a ping; True once it is answered. Its latency counts from the
        first byte of ``before``: a frame that stalls the server shows up here."""
        request_id, line = self.maker.ping()
        with self._arrived:
            self._pings[request_id] = -1.0
        sent_at = time.monotonic()
        self._write([*before, line])
        answered = self._wait(lambda: self._pings[request_id] >= 0, PING_DEADLINE)
        with self._arrived:
            latency = self._pings.pop(request_id) - sent_at
        if answered:
            report.pings += 1
            if latency > report.max_ping:
                report.max_ping = latency
                report.slowest_batch = before
        return answered

    def _finish(self, report: FuzzReport) -> None:
        """Close what is open, answer what the server still asks, and wait for every answer due."""
        end = time.monotonic() + DRAIN_DEADLINE
        while self.process.poll() is None and time.monotonic() < end:
            lines = self.maker.answers() + self.maker.closing()
            if lines:
                self._write(lines)
            if not self.ledger.missing():
                break
            with self._arrived:
                self._arrived.wait(0.5)
        if self.process.poll() is None:
            self._ping(report)
