"""``backchannel`` in a pseudo-terminal (pexpect), read as a person sees it: escape codes taken out.

- ``Screen(*args)``: ``python -m backchannel *args`` in a pty; ``expect(pattern)`` waits for a
  regex after what was read so far and reads on past it; ``expect_all`` for several, in any order.
- ``terminal_env()``: the environment it runs in unless told otherwise (no colour, no cursor
  position requests, so the screen is plain text).
"""

from __future__ import annotations

__all__ = ["ANSI", "ROOT", "TIMEOUT", "Screen", "terminal_env"]

import os
import re
import sys
import time
from pathlib import Path

import pexpect

ROOT = Path(__file__).resolve().parents[1]
#: Bounds every wait on the program: generous, as it only ends a failing test.
TIMEOUT = 30
ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>78]|\r")


def terminal_env(**extra: str) -> dict[str, str]:
    """This process's environment for a plain-text terminal, with ``extra`` on top."""
    env = {**os.environ, "PROMPT_TOOLKIT_NO_CPR": "1", "TERM": "xterm-256color", "NO_COLOR": "1", **extra}
    env.pop("FORCE_COLOR", None)  # it would win over NO_COLOR
    return env


class Screen:
    """``python -m backchannel *args`` in a pty; ``env`` replaces ``terminal_env()`` whole."""

    def __init__(self, *args: str, env: dict[str, str] | None = None, cwd: Path = ROOT, columns: int = 160) -> None:
        self.child = pexpect.spawn(
            sys.executable,
            ["-m", "backchannel", *args],
            cwd=str(cwd),
            env=terminal_env() if env is None else env,
            encoding="utf-8",
            timeout=TIMEOUT,
            dimensions=(50, columns),
        )
        self.raw = ""
        self.pos = 0

    @property
    def text(self) -> str:
        return ANSI.sub("", self.raw)

    def expect_all(self, *patterns: str) -> list[re.Match[str]]:
        """Wait until each regex shows after what was read so far, in any order (a change may print
        before or after the answer of the call that made it); then read on past the last of them."""
        regexes = [re.compile(pattern) for pattern in patterns]
        deadline = time.monotonic() + TIMEOUT
        while None in (found := [regex.search(self.text, self.pos) for regex in regexes]):
            if time.monotonic() > deadline:
                raise AssertionError(f"no {patterns!r} within {TIMEOUT}s; the screen ends with:\n{self.text[-3000:]}")
            try:
                self.raw += self.child.read_nonblocking(65536, timeout=0.5)
            except pexpect.TIMEOUT:
                continue
            except pexpect.EOF:
                raise AssertionError(f"the program ended before {patterns!r}:\n{self.text[-3000:]}") from None
        matches = [match for match in found if match is not None]
        self.pos = max(match.end() for match in matches)
        return matches

    def expect(self, pattern: str) -> re.Match[str]:
        return self.expect_all(pattern)[0]

    def send(self, keys: str) -> None:
        self.child.send(keys)

    def line(self, text: str = "") -> None:
        self.child.send(text + "\r")

    def close(self) -> None:
        if self.child.isalive():
            self.child.close(force=True)
