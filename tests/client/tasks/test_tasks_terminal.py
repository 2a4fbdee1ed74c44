"""The terminal client's tasks, in a pseudo-terminal (pexpect): ``backchannel connect`` typed at.

A task is waited on with its status on the progress line; Ctrl-C leaves it running;
``tasks`` lists them; ``cancel <n>`` stops one; a background task's question waits until
``wait <n>``, then the same form asks it. The server is ``tasks_wire_server.py`` (polls every
50 ms), in both eras.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from _pty import Screen

SERVER = Path(__file__).resolve().parent / "tasks_wire_server.py"


def screen_of(era: str) -> Screen:
    """``backchannel connect`` to the tasks server in a pseudo-terminal."""
    return Screen("connect", "--era", era, "--", sys.executable, str(SERVER), "--poll-ms", "50")


@pytest.fixture
def screens() -> Iterator[list[Screen]]:
    opened: list[Screen] = []
    yield opened
    for screen in opened:
        screen.child.close(force=True)


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_tasks_in_the_terminal(screens: list[Screen], era: str) -> None:
    screen = screen_of(era)
    screens.append(screen)
    screen.expect("wire>")
    # A task in the foreground: its status on the progress line, its result at the end.
    screen.line("call work steps=3")
    screen.expect(r"task 1 \(work\) working")  # the bar redraws ten times a second: not every step shows
    screen.expect("worked 3 steps")
    screen.expect("wire>")
    # Ctrl-C leaves a task running, and says how to come back to it.
    screen.line("call wait")
    screen.expect(r"task 2 \(wait\) working: waiting")
    screen.child.send("\x03")
    screen.expect(r"Task 2 \(wait\) runs on: tasks lists it, wait 2 waits for it, cancel 2 stops it")
    screen.expect("wire>")
    screen.line("tasks")
    screen.expect(r"1 │ \S+ +│ work │ completed")
    screen.expect(r"2 │ \S+ +│ wait │ working +│ waiting")
    screen.expect("wire>")
    screen.line("cancel 2")
    screen.expect(r"Task 2 \(wait\) was cancelled: cancelled by request")
    # A background task's question waits for "wait", then the same form asks it.
    screen.line("call ask steps=20")
    screen.expect(r"task 3 \(ask\) working: thinking")
    screen.child.send("\x03")
    screen.expect(r"Task 3 \(ask\) runs on")
    screen.expect(r"Task 3 \(ask\) has a question: type wait 3 to answer it")
    screen.line("wait 3")
    screen.expect("Your name?")
    screen.expect(r"name\*?:")
    screen.line("Ada")
    screen.expect(r"\[A\]ccept")
    screen.line("a")
    screen.expect("hello Ada")
    screen.expect("wire>")
    screen.line("quit")
    screen.child.expect(pexpect.EOF)
    screen.child.close()
    assert screen.child.exitstatus == 0
