"""The terminal client never strands the person in a URL flow (issue 18, 18.9 Q2): after the
link is shown, ``d`` says done, ``c`` cancels and ``f`` asks for a fresh link, typed while
the spinner waits. The real program in a pseudo-terminal (pexpect), a stdio server whose
pages run on its loopback side listener, and the browser step done over HTTP.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx
import pexpect
import pytest

import _pty

SERVER = Path(__file__).resolve().parent / "words_server.py"
_LINK = r"Open this link in your browser: (http://127\.0\.0\.1:\d+/elicit/[A-Za-z0-9_-]+)"
_CODE = r"Code: (\d{4}-\d{4})"


class Screen(_pty.Screen):
    """``backchannel connect`` in a pty, read with the escape codes taken out."""

    def __init__(self, era: str) -> None:
        super().__init__("connect", "--no-browser", "--era", era, sys.executable, str(SERVER), columns=200)

    def link(self) -> tuple[str, str]:
        """Agree to the link on screen: its code (from the panel) and its URL (printed after "y")."""
        code = self.expect(_CODE).group(1)
        self.expect(r"Open it in your browser\? \[y/N\]:")
        self.line("y")
        url = self.expect(_LINK).group(1)
        return url, code


@pytest.fixture
def screens() -> Iterator[list[Screen]]:
    opened: list[Screen] = []
    yield opened
    for screen in opened:
        if screen.child.isalive():
            screen.child.close(force=True)


def finish_in_browser(url: str, code: str) -> int:
    """The person opens ``url`` and types ``code``: the status of the page they end on."""
    with httpx.Client(timeout=10) as browser:
        landing = browser.get(url)
        if landing.status_code != 200:
            return landing.status_code
        return browser.post(url, data={"code": code}).status_code


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_d_c_and_f_while_the_browser_step_waits(era: str, screens: list[Screen]) -> None:
    screen = Screen(era)
    screens.append(screen)
    screen.expect("words>")
    screen.line("call confirm")
    first, code = screen.link()
    screen.expect("If the page never finishes, press d when you are done, c to cancel, f for a fresh link.")
    screen.expect("Waiting for the browser step")

    screen.child.send("d")  # nothing was done in the browser: the server says so, and asks again
    screen.expect("You said you are done: the server checks the browser step.")
    screen.expect("the browser step has not finished")
    again, same_code = screen.link()
    assert (again, same_code) == (first, code)

    screen.child.send("f")  # the tab is lost: a fresh link, with a new code, in the same call
    screen.expect("Asking the server for a fresh link.")
    screen.expect("This is a fresh link")
    fresh, fresh_code = screen.link()
    assert fresh != first and fresh_code != code
    screen.expect("Waiting for the browser step")
    assert finish_in_browser(first, code) == 410  # the old link is dead
    assert finish_in_browser(fresh, fresh_code) == 200
    if era == "handshake":
        screen.expect("The browser step is done.")
    screen.expect("confirm: accept")
    screen.expect("words>")

    screen.line("call confirm")  # c: the tool itself sees cancel
    screen.link()
    screen.expect("Waiting for the browser step")
    screen.child.send("c")
    screen.expect("Cancelled: the server is told.")
    screen.expect("confirm: cancel")
    screen.expect("words>")
    screen.line("quit")
    screen.child.expect(pexpect.EOF)
