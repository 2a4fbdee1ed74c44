"""``watch <uri>`` in the terminal client, typed at in a pseudo-terminal (pexpect), in both eras.

``watch notes://today`` subscribes and gives the prompt back; each change the server announces
then prints above the prompt with what the resource holds now; ``watch`` lists, ``unwatch``
stops (the server is told: nothing more is printed).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pexpect
import pytest

from _pty import TIMEOUT, Screen

SERVER = Path(__file__).with_name("watched_server.py")


@pytest.mark.parametrize("era", ["stateless", "handshake"])
def test_watch_shows_each_change_until_unwatch(era: str) -> None:
    screen = Screen("connect", "--era", era, sys.executable, str(SERVER))
    try:
        screen.expect(r"watched>")
        screen.line("watch notes://today")
        screen.expect(r"Watching notes://today: each change is shown as it comes")
        screen.expect(r"watched>")
        screen.line("call write text=hello")
        screen.expect_all(r"wrote 5 characters", r"notes://today changed\.", r"notes://today\s+hello")
        screen.line("watch")
        screen.expect(r"\nnotes://today")
        screen.expect(r"watched>")
        screen.line("unwatch notes://today")
        screen.expect(r"Stopped watching notes://today\.")
        screen.expect(r"watched>")
        mark = screen.pos
        screen.line("call write text=unheard")
        screen.expect(r"wrote 7 characters")
        screen.line("read notes://today")  # a round trip after the change: an update would be here by now
        screen.expect(r"unheard")
        screen.expect(r"watched>")
        assert "changed." not in screen.text[mark:]
        screen.line("unwatch notes://today")
        screen.expect(r"notes://today is not watched")
        screen.line("quit")
        screen.child.expect(pexpect.EOF, timeout=TIMEOUT)
    finally:
        screen.child.close(force=True)
    assert screen.child.exitstatus == 0
