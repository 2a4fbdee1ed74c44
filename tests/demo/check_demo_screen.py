"""The demo's screen carries no line the demo did not write (issue #18, rough edge 1).

    .venv-examples/bin/python tests/demo/check_demo_screen.py [--story full|short]

Plays ``backchannel demo`` through its story (the one ``tests/ui/test_ui_story.py``
plays: a declined form, a deployment authorized in the "browser", one cancelled with
Ctrl-C, a plain call, ``quit``) in pseudo-terminals, with the ``backchannel`` installed
beside the Python that runs this script, and exits 1 if anything else reached the
screen: a warning (authlib's ``AuthlibDeprecationWarning`` once did, from an
``.[examples]`` install), a traceback, a log record in Python's default format.

It needs only the standard library and httpx2 (a dependency of backchannel itself), so
it runs in a venv with nothing but ``pip install -e '.[examples]'`` (``.ci/run``);
``tests/demo/test_demo_screen.py`` runs it with the dev venv.

What counts as the demo's own: the interactive demo writes everything on stdout and
nothing on stderr, and its server's stderr is the demo's stderr. So the program gets
two terminals: stdin and stdout on one, stderr on another, which must stay blank; and
stdout must hold nothing shaped like what Python or its ``warnings`` and ``logging``
modules print by themselves.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import tempfile
import termios
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["Screen", "foreign_lines", "main", "play_story"]

TIMEOUT = 30.0
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78]|\r")
#: Lines Python writes on its own: a warning (``path:line: SomeWarning: text``), a traceback,
#: a log record in ``logging.basicConfig``'s format, asyncio's and the GC's complaints.
_FOREIGN = re.compile(
    r"""
    ^ \S.*? :\d+: \s [A-Za-z_][\w.]*(?:Warning|Deprecation\w*): \s
    | ^ Traceback \s \(most \s recent \s call \s last\):
    | ^ \s* File \s ".+", \s line \s \d+
    | ^ (?:DEBUG|INFO|WARNING|ERROR|CRITICAL): [\w.]*:
    | ^ Exception \s ignored \s in
    | ^ Task \s (?:was \s destroyed|exception \s was \s never \s retrieved)
    | ^ Unclosed \s
    """,
    re.VERBOSE,
)


def foreign_lines(screen: str) -> list[str]:
    """The lines of ``screen`` (escape codes taken out) that Python wrote, not the demo."""
    return [line for line in screen.splitlines() if _FOREIGN.search(line)]


def _plain(text: str) -> str:
    return _ANSI.sub("", text)


class Screen:
    """A program in pseudo-terminals: stdin and stdout on one (``screen``), stderr on another (``errors``)."""

    def __init__(self, argv: list[str], *, env: dict[str, str], cwd: Path, columns: int = 100, rows: int = 50) -> None:
        self._out_master, out_slave = pty.openpty()
        self._err_master, err_slave = pty.openpty()
        for fd in (out_slave, err_slave):
            fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        self.process = subprocess.Popen(
            argv,
            stdin=out_slave,
            stdout=out_slave,
            stderr=err_slave,
            env=env,
            cwd=cwd,
            start_new_session=True,
            # The terminal on stdin becomes the session's controlling terminal, as in a shell.
            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
        )
        os.close(out_slave)
        os.close(err_slave)
        self._decoders = {
            fd: codecs.getincrementaldecoder("utf-8")("replace") for fd in (self._out_master, self._err_master)
        }
        self._raw = {self._out_master: "", self._err_master: ""}
        self._pos = 0

    @property
    def screen(self) -> str:
        """Everything the program wrote on stdout so far, as read: escape codes and carriage returns out."""
        return _plain(self._raw[self._out_master])

    @property
    def errors(self) -> str:
        """Everything the program (and its children) wrote on stderr so far."""
        return _plain(self._raw[self._err_master])

    def _read(self, wait: float) -> bool:
        """Read what is there (waiting at most ``wait`` s); False once both terminals are closed."""
        open_fds = [fd for fd in self._raw if fd in self._decoders]
        if not open_fds:
            return False
        ready, _, _ = select.select(open_fds, [], [], wait)
        for fd in ready:
            try:
                data = os.read(fd, 65536)
            except OSError:  # EIO: every writer of that terminal is gone
                data = b""
            if data:
                self._raw[fd] += self._decoders[fd].decode(data)
            else:
                self._raw[fd] += self._decoders.pop(fd).decode(b"", final=True)
        return True

    def expect(self, pattern: str, timeout: float = TIMEOUT) -> re.Match[str]:
        """Wait for ``pattern`` after the last match; AssertionError with the screen's end if it never comes."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            found = regex.search(self.screen, self._pos)
            if found:
                self._pos = found.end()
                return found
            left = deadline - time.monotonic()
            if left <= 0 or not self._read(min(left, 0.5)):
                when = f"within {timeout}s" if left <= 0 else "before the program ended"
                raise AssertionError(f"no {pattern!r} {when}; the screen ends with:\n{self.screen[-3000:]}")

    def send(self, text: str) -> None:
        os.write(self._out_master, text.encode())

    def sendline(self, text: str = "") -> None:
        self.send(text + "\r")

    def wait_end(self, timeout: float = TIMEOUT) -> int:
        """Read until the program and its children closed both terminals; its exit status."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self._read(0.5):
            pass
        try:
            return self.process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the program did not end; the screen ends with:\n{self.screen[-3000:]}") from None

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for fd in (self._out_master, self._err_master):
            with contextlib.suppress(OSError):
                os.close(fd)


def demo_environment(program: Path, browser: Path) -> dict[str, str]:
    """The environment a person's shell gives the demo: its venv activated, a colourless xterm."""
    bin_dir = program.parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    env["VIRTUAL_ENV"] = str(bin_dir.parent)
    env.update({"TERM": "xterm-256color", "NO_COLOR": "1", "PROMPT_TOOLKIT_NO_CPR": "1", "BROWSER": str(browser)})
    env.pop("FORCE_COLOR", None)
    return env


def fake_browser(directory: Path) -> tuple[Path, Path]:
    """An executable that "opens" a URL by writing it to a file: (the program, the file)."""
    opened = directory / "opened.txt"
    program = directory / "fake-browser"
    program.write_text(
        f"#!{sys.executable}\nimport sys\nwith open({str(opened)!r}, 'a') as f:\n    f.write(sys.argv[1] + '\\n')\n"
    )
    program.chmod(0o755)
    return program, opened


def workspace(directory: Path) -> Path:
    """A checkout named shop, on the main branch: the root the demo reads."""
    shop = directory / "shop"
    (shop / ".git").mkdir(parents=True)
    (shop / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return shop


def opened_url(opened: Path, count: int, timeout: float = 10) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = opened.read_text().split() if opened.exists() else []
        if len(lines) >= count:
            return lines[count - 1]
        time.sleep(0.05)
    raise AssertionError("the browser was not opened")


def sign_in(url: str, code: str, login: str = "octocat") -> None:
    """What the person does in the browser: open the page, type the code, sign in to "GitHub", allow."""
    import httpx2

    with httpx2.Client(follow_redirects=True, timeout=10) as browser:
        page = browser.get(url)
        assert page.status_code == 200 and "Confirm it is you" in page.text, page.text
        signed = browser.post(url, data={"code": code})
        assert signed.status_code == 200 and "Sign in to GitHub" in signed.text, signed.text
        done = browser.post(str(signed.url), data={"login": login, "password": f"{login}-pass", "decision": "allow"})
        assert done.status_code == 200, done.text


def _deploy(term: Screen, opened: Path, count: int) -> None:
    term.sendline("call deploy_to_production")
    term.expect(r"branch\*:")
    term.sendline()  # main, from the workspace's git HEAD
    term.expect(r"environment\* \[production\]:")
    term.sendline()  # production, the default
    term.expect(r"\[A\]ccept")
    term.sendline("a")
    term.expect(r"Open it in your browser\? \[y/N\]:")
    term.sendline("y")
    code = term.expect(r"The page asks for the confirmation code (\d{4}-\d{4})\.").group(1)
    term.expect("Waiting for the browser step")
    sign_in(opened_url(opened, count), code)
    term.expect(r"deploy: authorized by octocat")


def play_story(term: Screen, opened: Path, story: str = "full") -> None:
    """The demo's story as a person plays it, up to ``quit`` (``short``: one plain call, then ``quit``)."""
    term.expect("Connected to demo")
    term.expect("demo>")
    if story == "full":
        term.sendline("call deploy_to_production")
        term.expect(r"branch\*:")
        term.sendline()
        term.expect(r"environment\* \[production\]:")
        term.sendline()
        term.expect(r"\[A\]ccept")
        term.sendline("d")
        term.expect(r"Nothing was deployed \(decline\)\.")
        term.expect("demo>")
        _deploy(term, opened, 1)
        term.expect(r"Deployed shop \(main\) to production as shop-1, authorized by octocat\.")
        term.expect("demo>")
        _deploy(term, opened, 2)
        term.expect(r"deploy: run the tests \.\.\.")
        term.send("\x03")
        term.expect(r"deploy: rolled back: production still runs the previous release")
    term.sendline("call add a=1 b=2")
    term.expect(r"result\s*\S\s*3")
    term.expect("demo>")
    term.sendline("quit")


#: The ``backchannel`` command installed beside the Python running this.
BESIDE = Path(sys.executable).parent / "backchannel"


@contextlib.contextmanager
def demo(directory: Path, program: Path = BESIDE, *, columns: int = 100, **env: str) -> Iterator[tuple[Screen, Path]]:
    """``program demo`` started in a shop workspace, ``env`` added: (its screen, the file of opened URLs)."""
    browser, opened = fake_browser(directory)
    environment = {**demo_environment(program, browser), **env}
    term = Screen([str(program), "demo"], env=environment, cwd=workspace(directory), columns=columns)
    try:
        yield term, opened
    finally:
        term.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--story", choices=("full", "short"), default="full")
    parser.add_argument("--backchannel", type=Path, default=BESIDE, help="the program to play (default: %(default)s)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as directory, demo(Path(directory), args.backchannel) as (term, opened):
        play_story(term, opened, args.story)
        status = term.wait_end()
        foreign = foreign_lines(term.screen) + [line for line in term.errors.splitlines() if line.strip()]
    if status != 0:
        print(f"backchannel demo ended with status {status}:\n{term.screen[-3000:]}", file=sys.stderr)
        return 1
    if foreign:
        print("The demo's screen carries lines the demo did not write:", file=sys.stderr)
        for line in foreign:
            print(f"  | {line}", file=sys.stderr)
        return 1
    print(f"The demo's screen ({len(term.screen.splitlines())} lines, story {args.story}) is all the demo's own.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
