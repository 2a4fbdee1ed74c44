"""Words a newcomer types that the command line misread (issue 27, "Smaller").

* ``connect server.py`` (a file, not a command) gave a raw ``FileNotFoundError``: now one line
  saying how to serve a file, status 2.
* ``call --args a=2 b=40`` (two words) was an argparse error: the words are the arguments, and a
  tool named after them is still the tool.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from _subprocesses import ROOT, checkout_env

TIMEOUT = 60
DEMO = str(ROOT / "examples" / "demo_server.py")
SERVER = ["--", sys.executable, "-m", "backchannel", "run", DEMO]


def backchannel(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "backchannel", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=checkout_env(),
        cwd=cwd,
    )


def test_connect_to_a_file_says_how_to_serve_it(tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text("from backchannel import Server\n\nserver = Server('s')\n")
    for words in (["server.py"], ["--", "server.py"]):
        done = backchannel("connect", *words, cwd=tmp_path)
        assert done.returncode == 2
        assert done.stdout == ""
        assert done.stderr == (
            "backchannel connect: server.py is a file, not a command; "
            "to serve a file: backchannel connect -- backchannel run server.py\n"
        )


def test_connect_to_no_command_is_one_line(tmp_path: Path) -> None:
    done = backchannel("connect", "--", "surely-no-such-command-here", "--flag", cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("backchannel connect: no such command: surely-no-such-command-here")
    assert done.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "argv",
    [
        ["call", "add", "--args", "a=2", "b=40", "--json", *SERVER],
        ["call", "add", "--args", "a=2", "b=40", *SERVER],
        ["call", "--args", "a=2", "b=40", "add", "--json", *SERVER],
        ["call", "--json", "--args", "a=2", "b=40", "add", *SERVER],
        ["call", "--args", "a=2", "b=40", f"{sys.executable} {DEMO}", "add", "--json"],
        ["call", "--args", "a=2 b=40", "add", "--json", *SERVER],  # one word, as before
    ],
)
def test_args_as_several_words(argv: list[str]) -> None:
    done = backchannel(*argv)
    assert done.returncode == 0, done.stderr
    if "--json" in argv:
        assert json.loads(done.stdout)["structuredContent"] == {"result": 42}
    else:
        assert "42" in done.stdout


def test_args_words_keep_their_spaces() -> None:
    # Several words: each is one argument, as the shell gave it (one word is read as before:
    # split like a command line, so it says city="New York").
    for words in (["city=New York", "unit=F"], ['city="New York" unit=F']):
        done = backchannel("call", "weather", "--args", *words, "--json", *SERVER)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["structuredContent"]["city"] == "New York"


def test_a_word_that_is_no_argument_is_refused_in_one_line() -> None:
    done = backchannel("call", "add", "--args", "a=2", "oops", "b=40", *SERVER)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        "backchannel call: error: argument --args: 'oops': write arguments as key=value, or as one JSON object"
    )
