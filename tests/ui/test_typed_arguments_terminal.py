"""In a pseudo-terminal: an ``int`` template variable or prompt argument is asked for as a whole
number and checked as one; counted hints say "1 character", never "1 characters" (issue #18, item 7).

``backchannel connect`` against ``tests/ui/typed_server.py``, whose template ``items://{n}`` and
prompt ``countdown(start: int)`` take integers. The protocol carries no argument types; the
server describes them under ``_meta["dev.backchannel/argumentSchema"]`` and the terminal reads
that. Before, both were asked as "text, at least 1 characters", and ``three`` was sent.
"""

from __future__ import annotations

import sys
from pathlib import Path

from test_ui_terminal import Term, finish, start, terms  # noqa: F401 - terms is a fixture

TYPED_SERVER = Path(__file__).resolve().parent / "typed_server.py"


def test_an_int_template_variable_is_asked_as_a_whole_number(terms: list[Term]) -> None:  # noqa: F811
    child = start(terms, "connect", sys.executable, str(TYPED_SERVER))
    child.expect("typed>")
    child.sendline("read items://{n}")
    child.expect(r"n \*  whole number")
    child.expect(r"n\*:")
    mark = child.mark()
    child.sendline("three")
    child.expect("! n: 'three' is not a whole number")
    child.expect(r"n\*:")  # asked again: nothing was sent
    assert "Reading" not in child.since(mark)
    child.sendline("3")
    child.expect(r"Reading items://3")
    child.expect("item number 3, doubled 6")
    child.expect("typed>")
    finish(child)


def test_an_int_prompt_argument_is_asked_as_a_whole_number(terms: list[Term]) -> None:  # noqa: F811
    child = start(terms, "connect", sys.executable, str(TYPED_SERVER))
    child.expect("typed>")
    child.sendline("prompt countdown")
    child.expect(r"start \*  whole number")
    child.expect(r"start\*:")
    child.sendline("3.5")
    child.expect("! start: '3.5' is not a whole number")
    child.expect(r"start\*:")
    child.sendline("3")
    child.expect(r"word  text, default go")  # the str argument stays text, with its default
    child.expect("word:")
    child.sendline("")
    child.expect("3 2 1 go!")
    child.expect("typed>")
    # Typed on the command line, the value is checked the same way before anything is sent.
    child.sendline("prompt countdown start=soon")
    child.expect("start: 'soon' is not a whole number")
    child.expect("typed>")
    child.sendline("prompt countdown start=2 word=now")
    child.expect("2 1 now!")
    child.expect("typed>")
    finish(child)


def test_counted_hints_agree_with_their_number(terms: list[Term]) -> None:  # noqa: F811
    child = start(terms, "connect", sys.executable, str(TYPED_SERVER))
    child.expect("typed>")
    mark = child.mark()
    child.sendline("call initial")
    child.expect(r"letter \*  text, exactly 1 character\n")
    child.expect(r"letter\*:")
    child.sendline("ab")
    child.expect("! letter: must be at most 1 character\n")
    child.expect(r"letter\*:")
    child.sendline("a")
    child.expect(r"note \*  text, at least 1 character\n")
    child.expect(r"note\*:")
    child.sendline("hi")
    child.expect("a: hi")
    child.expect("typed>")
    assert "1 characters" not in child.since(mark)
    finish(child)
