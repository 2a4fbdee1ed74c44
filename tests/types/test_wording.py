"""Counts in messages agree with their nouns, wherever a person reads them."""

from __future__ import annotations

import inspect

from backchannel.client import input_rounds, url_flow
from backchannel.types.wording import counted
from backchannel.ui import batch, render


def test_counted_agrees_with_the_number() -> None:
    assert counted(1, "character") == "1 character"
    assert counted(1.0, "second") == "1 second"
    assert counted(2, "character") == "2 characters"
    assert counted(2.5, "second") == "2.5 seconds"
    assert counted(0, "byte") == "0 bytes"
    assert counted(1, "retry", "retries") == "1 retry"
    assert counted(3, "retry", "retries") == "3 retries"


def test_the_client_and_the_terminal_count_through_it() -> None:
    # The messages that once said "1 retries", "1 rounds", "1 seconds", "1 bytes".
    for module, noun in ((url_flow, "'retry'"), (input_rounds, "'round'"), (batch, "'second'"), (render, "'byte'")):
        source = inspect.getsource(module)
        assert "counted(" in source and noun in source, module.__name__
