"""In a real pseudo-terminal: ``backchannel connect`` to a server that logs every completion request
it receives, and the person types into a prompt argument the server completes (CP-12).

The server (``benchmarks/completion_burst.py serve``) holds its answer for "py" until it is
cancelled, so the keystroke after it must cancel that request on the wire (stdio:
``notifications/cancelled``, which the server's completer sees as its cancellation) before the
next is sent: the log must never show two completers running at once.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pexpect
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import completion_burst as bench

BOUND = 30.0
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>78]|\r")


class Screen:
    """A pexpect child read as a person sees it (escape codes taken out)."""

    def __init__(self, args: list[str]) -> None:
        environment = {**os.environ, "PROMPT_TOOLKIT_NO_CPR": "1", "TERM": "xterm-256color", "NO_COLOR": "1"}
        self.child = pexpect.spawn(
            sys.executable, args, env=environment, encoding="utf-8", timeout=BOUND, dimensions=(40, 120)
        )
        self.raw = ""
        self.seen = 0

    @property
    def text(self) -> str:
        return _ANSI.sub("", self.raw)

    def read_until(self, condition: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + BOUND
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"no {what} within {BOUND}s; the screen ends with:\n{self.text[-2000:]}")
            try:
                self.raw += self.child.read_nonblocking(65536, timeout=0.05)
            except pexpect.TIMEOUT:
                continue
            except pexpect.EOF:
                raise AssertionError(f"the program ended before {what}:\n{self.text[-2000:]}") from None

    def expect(self, pattern: str) -> None:
        """Wait for ``pattern`` after what was matched last."""
        regex = re.compile(pattern)

        def found() -> bool:
            match = regex.search(self.text, self.seen)
            if match is not None:
                self.seen = match.end()
            return match is not None

        self.read_until(found, repr(pattern))


@pytest.fixture
def screens() -> Iterator[list[Screen]]:
    started: list[Screen] = []
    yield started
    for screen in started:
        if screen.child.isalive():
            screen.child.close(force=True)


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_typing_sends_one_request_at_a_time_and_cancels_the_stale_one(
    screens: list[Screen], tmp_path: Path, era: str
) -> None:
    log = tmp_path / "completions.log"

    def lines() -> list[str]:
        return log.read_text().splitlines() if log.exists() else []

    server = bench.server_command(log=log, hold=["py"])
    screen = Screen(["-m", "backchannel", "connect", "--era", era, *server])
    screens.append(screen)
    screen.expect("burst>")
    screen.child.send("prompt pick\r")
    screen.expect(r"language\*:")
    screen.child.send("py")  # two keystrokes within the debounce: one request, once typing pauses
    screen.read_until(lambda: "start py 1" in lines(), "request for 'py'")
    screen.child.send("t")  # makes "py" stale while the server still holds it
    screen.read_until(lambda: "done pyt" in lines(), "answer for 'pyt'")
    screen.expect("pytorch")  # the answer is on screen, as a menu under the field
    screen.child.send("\r")
    screen.expect(r"Use pyt\.")
    screen.expect("burst>")
    screen.child.send("quit\r")
    screen.child.expect(pexpect.EOF)

    log_lines = lines()
    started = [line.split()[1] for line in log_lines if line.startswith("start ")]
    assert started[-2:] == ["py", "pyt"], log_lines
    assert all(line.endswith(" 1") for line in log_lines if line.startswith("start ")), log_lines  # one at a time
    # Every request but the last was cancelled by the keystroke after it, before the next began.
    for text in started[:-1]:
        assert log_lines.index(f"cancelled {text}") < log_lines.index(f"start {started[-1]} 1"), log_lines
    assert log_lines[-1] == "done pyt", log_lines
