"""The ``backchannel`` command line as a newcomer meets it (issue 18, items 2 to 4).

* Every option that takes a value refuses a bad one the argparse way: exit status 2, the
  usage, then one ``error:`` line naming the option, and never a traceback.
* Every subcommand's ``--help`` has a description, in plain text (no reStructuredText or
  Markdown markup shown literally).
* ``run --http`` says on stderr where it listens and how to connect, and that command works.
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from _subprocesses import run_cli
from backchannel.cli.main import main
from backchannel.testing import free_port, stop_process

ROOT = Path(__file__).resolve().parents[2]
DEMO_SERVER = ROOT / "examples" / "demo_server.py"
TIMEOUT = 30


def backchannel(*args: str, stdin: str = "", cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, timeout=TIMEOUT, stdin=stdin, cwd=cwd)


def a_file(tmp_path: Path) -> str:
    path = tmp_path / "a-file.txt"
    path.write_text("not a directory\n")
    return str(path)


DEMO = str(DEMO_SERVER)
SERVER = ["--", sys.executable, DEMO]
#: (the command line, the option it gets wrong); ``{file}`` is an existing regular file.
BAD_VALUES = [
    (["run", DEMO, "--log-level", "foo"], "--log-level"),
    (["run", DEMO, "--http", "--host", "not a host!"], "--host"),
    (["run", DEMO, "--http", "--port", "99999"], "--port"),
    (["run", DEMO, "--http", "--port", "eighty"], "--port"),
    (["run", DEMO, "--http", "--path", "mcp"], "--path"),
    (["connect", "--root", "/no/such/directory", *SERVER], "--root"),
    (["connect", "--root", "{file}", *SERVER], "--root"),
    (["connect", "--era", "newest", *SERVER], "--era"),
    (["connect", "--save-dir", "{file}/inside", *SERVER], "--save-dir"),
    (["connect", "--server-log-level", "loud", *SERVER], "--server-log-level"),
    (["demo", "--root", "/no/such/directory"], "--root"),
    (["demo", "--era", "newest"], "--era"),
    (["demo", "--save-dir", "{file}/inside"], "--save-dir"),
    (["demo", "--server-log-level", "loud"], "--server-log-level"),
    (["call", "--args", "just words", "add", *SERVER], "--args"),
    (["call", "--args", "{not json", "add", *SERVER], "--args"),
    (["call", "--root", "/no/such/directory", "add", *SERVER], "--root"),
    (["call", "--era", "newest", "add", *SERVER], "--era"),
    (["call", "--timeout", "-1", "add", *SERVER], "--timeout"),
    (["call", "--timeout", "nan", "add", *SERVER], "--timeout"),
    (["call", "--timeout", "soon", "add", *SERVER], "--timeout"),
    (["call", "--log-level", "loud", "add", *SERVER], "--log-level"),
]


@pytest.mark.parametrize(("argv", "option"), BAD_VALUES, ids=[f"{a[0]} {o}" for a, o in BAD_VALUES])
def test_a_bad_option_value_is_refused_in_one_line(
    argv: list[str], option: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [word.replace("{file}", a_file(tmp_path)) for word in argv]
    status: object
    if argv[0] == "run":  # in a process of its own: before the fix, some of these served forever
        done = backchannel(*argv)
        status, out, err = done.returncode, done.stdout, done.stderr
    else:  # in this process, to keep the test quick; a traceback here would fail the test too
        with pytest.raises(SystemExit) as exited:
            main(argv)
        status = exited.value.code
        out, err = capsys.readouterr()
    assert status == 2, err
    assert "Traceback" not in err
    assert out == ""
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"backchannel {argv[0]}: error: argument {option}"), err
    # The lines before it are the usage, nothing else.
    assert err.startswith("usage: backchannel"), err


def test_a_missing_answers_file_is_one_line_before_the_server_starts(tmp_path: Path) -> None:
    # Read before anything is spawned: the "server" here would fail loudly if it were started.
    done = backchannel("call", "--answers", str(tmp_path / "missing.json"), "add", "--", "/no/such/server")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "cannot read the answers file" in done.stderr


def test_a_target_that_is_no_server_is_one_line(tmp_path: Path) -> None:
    done = backchannel("run", str(tmp_path / "nowhere.py"))
    assert done.returncode == 2
    assert done.stderr.strip() == f"backchannel run: no such file: {tmp_path / 'nowhere.py'}"


# -- --help ---------------------------------------------------------------------------------------

# ``literal`` and :role:`x` (reStructuredText), **strong** and *emphasis* (both), `code` (Markdown).
MARKUP = re.compile(r"``|\*\*\S|(?<![\w*\"'])\*[A-Za-z][^*\n]*\*(?![\w*])|:[a-z]+:`|(?<!`)`[^`\s][^`\n]*`(?!`)")


@pytest.mark.parametrize("command", ["run", "connect", "demo", "call", "install"])
def test_every_subcommand_help_has_a_plain_description(command: str) -> None:
    done = backchannel(command, "--help")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    # argparse prints: usage (one paragraph), then the description, then the argument groups.
    paragraphs = [part for part in text.split("\n\n") if part.strip()]
    assert paragraphs[0].startswith("usage: backchannel " + command)
    description = paragraphs[1]
    assert not description.startswith(("options:", "positional arguments:")), f"{command} --help has no description"
    assert len(description.split()) >= 8
    found = MARKUP.search(text)
    assert found is None, f"{command} --help shows markup {found.group(0)!r}:\n{text}"


def test_markup_is_found_where_there_is_some() -> None:
    """The pattern above catches what ``call --help`` used to show."""
    for shown in ("``--json``", "an **object** keys", "(that is *accept*; fields", ":func:`run`", "the `Client`"):
        assert MARKUP.search(shown), shown
    for plain in ('"*" answers any other question', "* 0: the tool answered;", "key=value", "a*b*c"):
        assert not MARKUP.search(plain), plain


# -- run --http -----------------------------------------------------------------------------------


def test_run_http_says_where_it_listens_and_how_to_connect() -> None:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "backchannel", "run", DEMO, "--http", "--port", str(port)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert process.stderr is not None
        first: list[str] = []
        reader = threading.Thread(target=lambda: first.append(process.stderr.readline()), daemon=True)  # type: ignore[union-attr]
        reader.start()
        reader.join(TIMEOUT)
        assert first, "backchannel run --http printed nothing on stderr"
        line = first[0]
        url = f"http://127.0.0.1:{port}/mcp"
        assert url in line and "demo" in line, line
        command = re.search(r"connect with: (backchannel connect \S+)$", line.strip())
        assert command is not None and command.group(1) == f"backchannel connect {url}", line
        # The command it gives works as given (a piped session: no terminal needed).
        session = backchannel(*command.group(1).split()[1:], stdin="call add a=2 b=40\nquit\n")
        assert session.returncode == 0, session.stdout + session.stderr
        assert "Connected to demo" in session.stdout and "42" in session.stdout
    finally:
        stop_process(process)
        if process.stdout is not None:
            process.stdout.close()
        if process.stderr is not None:
            process.stderr.close()
