"""The real thing in a pseudo-terminal: ``backchannel connect`` and ``backchannel demo`` typed at with pexpect."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest
from _ui_harness import DEMO_SERVER, ROOT, UI_SERVER

from backchannel.cli.main import main
from backchannel.ui import terminal

TIMEOUT = 30
PNG = b"\x89PNG\r\n\x1a\n not really a png"


_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>78]|\r")


class Term:
    """A pexpect child read as a person sees it: ``expect`` matches the text with the escape codes taken out."""

    def __init__(
        self,
        *args: str,
        env: dict[str, str] | None = None,
        cwd: Path = ROOT,
        columns: int = 160,
        color: bool = False,
    ) -> None:
        environment = {**os.environ, "PROMPT_TOOLKIT_NO_CPR": "1", "TERM": "xterm-256color", **(env or {})}
        environment.pop("NO_COLOR", None)
        environment.pop("FORCE_COLOR", None)
        if not color:
            environment["NO_COLOR"] = "1"
        self.child = pexpect.spawn(
            sys.executable,
            ["-m", "backchannel", *args],
            cwd=str(cwd),
            env=environment,
            encoding="utf-8",
            timeout=TIMEOUT,
            dimensions=(50, columns),
        )
        self._raw = ""
        self._pos = 0

    @property
    def screen(self) -> str:
        return _ANSI.sub("", self._raw)

    @property
    def raw(self) -> str:
        """What the program wrote, escape codes and all (colours)."""
        return self._raw

    def mark(self) -> int:
        """Where the screen has been read up to: ``since(mark)`` is what came after."""
        return self._pos

    def since(self, mark: int) -> str:
        return self.screen[mark : self._pos]

    def expect(self, pattern: str, timeout: float = TIMEOUT) -> re.Match[str]:
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            found = regex.search(self.screen, self._pos)
            if found:
                self._pos = found.end()
                return found
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {pattern!r} within {timeout}s; the screen ends with:\n{self.screen[-3000:]}")
            try:
                self._raw += self.child.read_nonblocking(65536, timeout=min(left, 0.5))
            except pexpect.TIMEOUT:
                continue
            except pexpect.EOF:
                raise AssertionError(f"the program ended before {pattern!r}:\n{self.screen[-3000:]}") from None

    def send(self, text: str) -> None:
        self.child.send(text)

    def sendline(self, text: str = "") -> None:
        self.child.send(text + "\r")

    def wait_end(self) -> int:
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            try:
                self._raw += self.child.read_nonblocking(65536, timeout=0.5)
            except pexpect.TIMEOUT:
                continue
            except pexpect.EOF:
                break
        self.child.close()
        return int(self.child.exitstatus if self.child.exitstatus is not None else -1)


@pytest.fixture
def terms() -> Iterator[list[Term]]:
    spawned: list[Term] = []
    yield spawned
    for term in spawned:
        if term.child.isalive():
            term.child.close(force=True)


def start(terms: list[Term], *args: str, **options: Any) -> Term:
    term = Term(*args, **options)
    terms.append(term)
    return term


def finish(term: Term) -> None:
    term.sendline("quit")
    assert term.wait_end() == 0, term.screen[-3000:]


def test_connect_lists_and_calls_the_demo_server(terms: list[Term]) -> None:
    child = start(terms, "connect", sys.executable, str(DEMO_SERVER))
    child.expect("Connected to demo 0.1.0")
    child.expect("demo>")
    child.sendline("tools")
    child.expect("5 tools")
    child.expect("slow_count")
    child.expect("demo>")
    child.sendline("call add")
    child.expect(r"a \*  whole number")
    child.expect(r"a\*:")
    child.sendline("two")
    child.expect("a: 'two' is not a whole number")
    child.expect(r"a\*:")
    child.sendline("2")
    child.expect("b:")
    child.sendline("40")
    child.expect(r"result\s*\S\s*42")
    child.expect("demo>")
    # Tab completes the command and the tool name.
    child.send("ca\t")
    child.send("we\t")
    child.sendline(" city=Lisbon")
    child.expect(r"city\s*\S\s*Lisbon")
    child.expect(r"temperature\s*\S\s*16.0")
    child.expect("demo>")
    child.sendline("read demo://cities/Porto")
    child.expect('"country": "unknown"')
    child.expect("demo>")
    finish(child)


def test_demo_runs_the_bundled_server_and_ctrl_c_cancels_a_call(terms: list[Term]) -> None:
    child = start(terms, "demo")
    child.expect("Connected to demo")
    child.expect("demo>")
    child.sendline("call slow_count to=400")
    child.expect("counted")  # the progress bar is up
    child.send("\x03")
    child.expect("Interrupted: the request was cancelled.")
    child.expect("demo>")
    child.sendline("call add a=1 b=2")
    child.expect(r"result\s*\S\s*3")
    child.expect("demo>")
    child.sendline("prompt code_review")
    child.expect(r"code\*:")
    child.sendline("print(1)")
    child.expect("language:")
    child.sendline("")
    child.expect("Please review this python code")
    child.expect("demo>")
    child.send("\x04")  # Ctrl-D leaves too
    assert child.wait_end() == 0


def test_a_form_in_the_terminal(terms: list[Term], tmp_path: Path) -> None:
    child = start(
        terms, "connect", "--save-dir", str(tmp_path), "--root", str(tmp_path), sys.executable, str(UI_SERVER)
    )
    child.expect("uitest>")
    child.sendline("call signup")
    child.expect(r"\[info\] forms: signup started")
    child.expect("Please sign up for the service.")
    child.expect(r"Your name \* \(name\)")
    child.expect(r"name\*:")
    child.sendline("Ada")
    child.expect(r"email\*:")
    child.sendline("ada")
    child.expect("email: not a valid e-mail address")
    child.expect(r"email\*:")
    child.sendline("ada@example.com")
    child.expect(r"age\*:")
    child.sendline("36")
    child.expect(r"newsletter \[yes\]:")
    child.sendline("")  # the default, yes
    child.expect("Professional")
    child.expect(r"plan \[free\]:")
    child.sendline("")  # the default, free
    child.expect("topics:")
    child.sendline("go")
    child.expect(r"\[A\]ccept / \[D\]ecline / \[C\]ancel")
    child.sendline("a")
    child.expect(r"welcome Ada <ada@example\.com> age 36 plan free topics \['go'\]")
    child.expect("uitest>")
    # Esc cancels the form.
    child.sendline("call signup")
    child.expect(r"name\*:")
    child.send("\x1b")
    child.expect("Form cancelled.")
    child.expect("signup cancel")
    child.expect("uitest>")
    # Declining at the end reaches the server as a decline.
    child.sendline("call confirm")
    child.expect("sure:")
    child.sendline("yes")
    child.expect(r"\[A\]ccept / \[D\]ecline")
    child.sendline("d")
    child.expect("Form declined.")
    child.expect("confirm decline None")
    child.expect("uitest>")
    # Ctrl-C in a form cancels it too.
    child.sendline("call confirm")
    child.expect("sure:")
    child.send("\x03")
    child.expect("confirm cancel")
    child.expect("uitest>")
    # An image is saved to a file and its path shown.
    child.sendline("call picture")
    child.expect("saved to ")
    child.expect("uitest>")
    (saved,) = tmp_path.glob("*.png")
    assert saved.read_bytes() == PNG
    # Roots come from --root.
    child.sendline("call roots")
    child.expect(tmp_path.as_uri())
    child.expect("uitest>")
    finish(child)


def test_a_piped_session_runs_without_a_terminal() -> None:
    script = "tools\ncall add a=20 b=22\nprompt code_review\nprint(1)\n\nquit\n"
    done = subprocess.run(
        [sys.executable, "-m", "backchannel", "connect", sys.executable, str(DEMO_SERVER)],
        input=script,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=str(ROOT),
    )
    assert done.returncode == 0, done.stderr
    assert "slow_count" in done.stdout
    assert "42" in done.stdout
    assert "Please review this python code" in done.stdout


def test_connect_reports_a_server_that_cannot_start(capsys: pytest.CaptureFixture[str]) -> None:
    # (A command that does not exist is refused before anything starts: tests/cli/test_cli_words.py.)
    done = subprocess.run(
        [sys.executable, "-m", "backchannel", "connect", "--", sys.executable, "-c", "raise SystemExit(3)"],
        input="",
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 1
    assert "Could not talk to the server" in done.stdout
    assert main(["connect"]) == 2
    assert "give a server command" in capsys.readouterr().err


def test_demo_finds_its_server_or_says_why_not(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert terminal.demo_server_path() == DEMO_SERVER
    assert terminal.demo_command()[-1] == str(DEMO_SERVER)
    monkeypatch.setattr(Path, "is_file", lambda self: False)
    with pytest.raises(FileNotFoundError, match="source checkout"):
        terminal.demo_server_path()
    assert main(["demo"]) == 2
    assert "examples/demo_server.py" in capsys.readouterr().err


def test_url_consent_refused_then_accepted_and_waited_for(terms: list[Term]) -> None:
    child = start(terms, "connect", "--no-browser", "--era", "handshake", sys.executable, str(UI_SERVER))
    child.expect("uitest>")
    child.sendline("call link after=3")
    child.expect("uitest asks you to open a link.")
    child.expect("Connect your example account.")
    child.expect("Site: auth.example.com")
    child.expect(r"URL:  https://auth\.example\.com/connect/[0-9a-f-]{36}")
    child.expect(r"Open it in your browser\? \[y/N\]:")
    child.sendline("n")
    child.expect("Declined: the link was not opened.")
    child.expect("link decline")
    child.expect("uitest>")
    child.sendline("call link after=2")
    child.expect(r"Open it in your browser\? \[y/N\]:")
    child.sendline("y")
    child.expect(r"Open this link in your browser: https://auth\.example\.com/connect/[0-9a-f-]{36}")
    child.expect(r"Waiting for the browser step \(Ctrl-C cancels\)")  # the spinner
    child.expect("The browser step is done.")
    child.expect("link accept")
    child.expect("uitest>")
    # Ctrl-C while waiting for the browser cancels the call.
    child.sendline("call link after=60")
    child.expect(r"\[y/N\]:")
    child.sendline("y")
    child.expect("Waiting for the browser step")
    child.send("\x03")
    child.expect("Interrupted: the request was cancelled.")
    child.expect("uitest>")
    finish(child)


def test_a_progress_bar_advances(terms: list[Term]) -> None:
    child = start(terms, "connect", sys.executable, str(UI_SERVER))
    child.expect("uitest>")
    child.sendline("call slow steps=30")
    seen = [int(child.expect(r"slow: step (\d+)").group(1))]
    while seen[-1] < 20:
        seen.append(int(child.expect(r"slow: step (\d+)").group(1)))
    assert len(set(seen)) >= 3 and seen == sorted(seen), seen
    percent = int(child.expect(r"(\d+)%").group(1))
    assert percent >= 60
    child.expect("finished")
    child.expect("uitest>")
    finish(child)


def test_tab_completes_template_variables_through_the_server(terms: list[Term]) -> None:
    child = start(terms, "connect", sys.executable, str(UI_SERVER))
    child.expect("uitest>")
    # (prompt_toolkit draws only what Tab adds to the line: "hannel/" after "backc".)
    child.send("read files://backc\t")  # the project, from the server's completer
    child.expect("hannel/")
    child.send("R\t")  # the file name: the server narrows it with the project typed before (context)
    child.expect("EADME.md")
    child.sendline()
    child.expect("the file README.md of backchannel")
    child.expect("uitest>")
    # A template as the target: each variable is asked, and Tab completes it with the ones before.
    child.sendline("read files://{project}/{name}")
    child.expect(r"project\*:")
    child.send("oth\t")
    child.expect("er")
    child.sendline()
    child.expect(r"name\*:")
    child.send("\t")
    child.expect("notes.txt")
    child.sendline()
    child.expect("Reading files://other/notes.txt")
    child.expect("the file notes.txt of other")
    child.expect("uitest>")
    finish(child)


def test_the_log_level_changes_and_lines_are_coloured(terms: list[Term]) -> None:
    child = start(terms, "connect", "--server-log-level", "debug", sys.executable, str(UI_SERVER), color=True)
    child.expect("uitest>")
    child.sendline("call chatty")
    child.expect(r"\[debug\] a debug line")
    child.expect(r"\[warning\] a warning line")
    child.expect("done")
    child.expect("uitest>")
    assert "\x1b[33m[warning]" in child.raw and "\x1b[34m[info]" in child.raw  # yellow and blue
    child.sendline("log warning")
    child.expect("Log level set to warning.")
    child.expect("uitest>")
    mark = child.mark()
    child.sendline("call chatty")
    child.expect(r"\[warning\] a warning line")
    child.expect("done")
    child.expect("uitest>")
    assert "info line" not in child.since(mark) and "debug line" not in child.since(mark)
    child.sendline("loglevel")
    child.expect("Log level: warning")
    finish(child)
