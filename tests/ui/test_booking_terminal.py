"""Forms at the terminal, as a person types them (``backchannel connect`` in a pseudo-terminal):

- a choice field shows its default in brackets instead of prefilling it, so typing ``2`` picks
  the second choice (prefilled, it read ``indoor2`` and was refused), and Enter takes the
  default (issue 27, smaller items);
- a form declined before is answered by the server from memory, and the terminal says so, with
  ``forget`` to see it again (issue 27, item 7)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from _pty import Screen

SERVER = Path(__file__).resolve().parent / "booking_server.py"


@pytest.fixture
def screen() -> Iterator[Screen]:
    term = Screen("connect", "--", sys.executable, "-m", "backchannel", "run", str(SERVER), columns=120)
    try:
        term.expect("restaurant>")
        yield term
    finally:
        term.close()


def fill(screen: Screen, seating: str) -> None:
    """The form up to its summary: the time prefilled (Enter keeps it), ``seating`` typed."""
    screen.expect(r"time\*:")
    screen.line()
    screen.expect(r"seating\* \[indoor\]:")
    screen.line(seating)


def test_a_choice_shows_its_default_and_what_is_typed_replaces_it(screen: Screen) -> None:
    screen.line("call book_table")
    fill(screen, "2")
    screen.expect(r"Seating +Terrace \(terrace\)")  # the summary: 2 is the second choice
    screen.expect(r"\[A\]ccept")
    screen.line("a")
    screen.expect(r"Booked a table at 19:00, seating: terrace\.")
    assert "is not one of" not in screen.text
    screen.line("call book_table")
    fill(screen, "")  # Enter: the default
    screen.expect(r"Seating +Indoor \(indoor\)")
    screen.expect(r"\[A\]ccept")
    screen.line("a")
    screen.expect(r"Booked a table at 19:00, seating: indoor\.")
    screen.line("quit")
    screen.child.expect(pexpect.EOF)


def test_a_remembered_decline_is_said_and_forget_asks_again(screen: Screen) -> None:
    screen.line("call book_table")
    fill(screen, "")
    screen.expect(r"\[A\]ccept")
    screen.line("d")
    screen.expect(r"No booking \(decline\)\.")
    assert "declined this form earlier" not in screen.text  # a fresh answer: nothing to say
    screen.expect("restaurant>")
    screen.line("call book_table")  # answered at once, from the server's memory
    screen.expect(r"No booking \(decline\)\.")
    screen.expect(r"\(you declined this form earlier; forget asks again\)")
    screen.expect("restaurant>")
    screen.line("forget")
    fill(screen, "3")
    screen.expect(r"\[A\]ccept")
    screen.line("a")
    screen.expect(r"Booked a table at 19:00, seating: bar\.")
    screen.line("quit")
    screen.child.expect(pexpect.EOF)
