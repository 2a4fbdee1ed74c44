"""README's examples, executed: they cannot drift from the code again (issue 18).

Every fenced block of README.md is one of these:

* a ``python`` block: a complete program, run as a script (``python block.py``) in a
  temporary directory; a block that defines ``test_*`` functions is run with pytest;
* a ``bash`` block: its commands are run in the same directory, against the bundled
  example servers of README itself (``server.py``, ``tracker.py``), offline;
* marked by an HTML comment on the line right before it:
  ``<!-- file: NAME -->`` (a python block saved as ``NAME`` before anything runs, then run
  like the others), ``<!-- fragment ... -->`` (a python block that is not a program: it must
  at least parse) or ``<!-- not run: why -->`` (a bash block that installs or runs the suite);
* a block in another language (a transcript, a diagram): not code.

Port 8000 of the examples becomes a free loopback port. ``backchannel run ... --http`` starts
in the background and serves every later block; ``backchannel connect`` and ``demo`` are
piped sessions (``quit``); ``curl`` output must hold no JSON-RPC error.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from _subprocesses import ROOT, checkout_env
from backchannel.testing import free_port, stop_process, wait_for_port

README = ROOT / "README.md"
TIMEOUT = 60
_FENCE = re.compile(r"^```(\w*)\s*$")
_MARKER = re.compile(r"^<!--\s*(file:\s*(?P<file>\S+)|(?P<kind>fragment|not run)\b.*?)\s*-->$")
#: Commands that need more than "run it and expect status 0".
_SERVE_HTTP = re.compile(r"^backchannel run\b.*--http\b")
_SESSION = re.compile(r"^backchannel (connect|demo)\b")


@dataclass(frozen=True)
class Block:
    lang: str
    code: str
    line: int  # of the opening fence, 1-based
    file: str | None = None  # <!-- file: NAME -->
    kind: str | None = None  # "fragment" or "not run"

    @property
    def where(self) -> str:
        return f"README.md line {self.line}"


def readme_blocks(text: str | None = None) -> list[Block]:
    lines = (README.read_text(encoding="utf-8") if text is None else text).splitlines()
    found: list[Block] = []
    index = 0
    while index < len(lines):
        fence = _FENCE.match(lines[index])
        if not fence:
            index += 1
            continue
        end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
        marker = _MARKER.match(lines[index - 1].strip()) if index else None
        found.append(
            Block(
                fence.group(1),
                "\n".join(lines[index + 1 : end]) + "\n",
                index + 1,
                marker.group("file") if marker else None,
                marker.group("kind") if marker else None,
            )
        )
        index = end + 1
    return found


def commands(code: str) -> list[str]:
    """A bash block's commands: continuation lines joined, blank and comment lines dropped."""
    joined = re.sub(r"\s*\\\n\s*", " ", code)
    # A quoted argument may go on over several lines (the JSON of a curl -d): keep those together.
    out: list[str] = []
    for line in joined.splitlines():
        if out and out[-1].count("'") % 2 == 1:
            out[-1] += "\n" + line
        elif line.strip() and not line.lstrip().startswith("#"):
            out.append(line)
    return out


# -- what README must be --------------------------------------------------------------------------


def test_every_block_is_a_program_a_fragment_or_marked_not_run() -> None:
    blocks = readme_blocks()
    python = [block for block in blocks if block.lang == "python"]
    shell = [block for block in blocks if block.lang == "bash"]
    assert len(python) >= 5 and len(shell) >= 5
    for block in blocks:
        if block.kind == "not run":
            assert block.lang == "bash", f"{block.where}: only shell blocks are left unrun"
        if block.kind == "fragment" or block.file:
            assert block.lang == "python", f"{block.where}: only python blocks are fragments or files"
    for block in python:
        ast.parse(block.code, filename=block.where)  # fragments too: they must at least parse
    # The server every example runs against is README's own.
    assert [block.file for block in python if block.file] == ["server.py", "tracker.py"]


def test_the_first_two_lines_are_the_two_commands() -> None:
    first = readme_blocks()[0]
    assert first.kind == "not run"
    assert first.code.splitlines()[0].startswith("python3 -m venv .venv && . .venv/bin/activate && pip install -e")
    assert first.code.splitlines()[1].startswith("bash .ci/run")


def test_the_block_reader_sees_markers_continuations_and_multi_line_quotes() -> None:
    text = "x\n<!-- fragment: a piece -->\n```python\nawait f()\n```\n\n```bash\na \\\n  b\n# no\nc '{\n}'\n```\n"
    fragment, shell = readme_blocks(text)
    assert (fragment.kind, fragment.line, shell.kind) == ("fragment", 3, None)
    assert commands(shell.code) == ["a b", "c '{\n}'"]


# -- README, executed -----------------------------------------------------------------------------


class Runner:
    """Runs README's blocks in order in ``directory``; the HTTP server it starts lives until ``close``."""

    def __init__(self, directory: Path, port: int) -> None:
        self.directory = directory
        self.port = port
        bin_dir = str(Path(sys.executable).parent)  # ``backchannel`` and ``python`` as the venv has them
        self.env = {**checkout_env(), "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""), "NO_COLOR": "1"}
        self.servers: list[subprocess.Popen[bytes]] = []
        self.count = 0

    def close(self) -> None:
        for process in self.servers:
            stop_process(process)

    def _ported(self, text: str) -> str:
        return text.replace("8000", str(self.port))

    def _run(self, argv: list[str], where: str, stdin: str | None = None) -> str:
        done = subprocess.run(
            argv,
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            cwd=self.directory,
            env=self.env,
        )
        assert done.returncode == 0, (
            f"{where}: {argv[-1][:300]!r} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
        )
        return done.stdout

    def python(self, block: Block) -> None:
        if block.kind == "fragment":
            return
        self.count += 1
        path = self.directory / (block.file or f"readme_block_{self.count}.py")
        path.write_text(self._ported(block.code), encoding="utf-8")
        if re.search(r"^def test_", block.code, re.MULTILINE):
            out = self._run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", path.name], block.where)
            assert " passed" in out, f"{block.where}: {out}"
        else:
            self._run([sys.executable, path.name], block.where)

    def bash(self, block: Block) -> None:
        if block.kind == "not run":
            return
        steps = [self._ported(command) for command in commands(block.code)]
        if not any(_SERVE_HTTP.match(step) or _SESSION.match(step) for step in steps):
            # Plain commands: one script, so that shell variables carry from line to line.
            out = self._run(["bash", "-c", "set -euo pipefail\n" + "\n".join(steps)], block.where)
            self._check_curl(block, steps, out)
            return
        for step in steps:
            if _SERVE_HTTP.match(step):
                self._serve(step, block)
            elif _SESSION.match(step):
                out = self._run(["bash", "-c", step], block.where, stdin="quit\n")
                assert "Connected to " in out, f"{block.where}: {step!r} did not connect:\n{out}"
            else:
                self._run(["bash", "-c", "set -euo pipefail\n" + step], block.where)

    def _serve(self, step: str, block: Block) -> None:
        log = self.directory / f".serve-{len(self.servers)}.log"
        with log.open("wb") as output:  # the child keeps its own copy of the descriptor
            process = subprocess.Popen(
                ["bash", "-c", "exec " + step],
                cwd=self.directory,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stderr=output,
            )
        self.servers.append(process)

        def said() -> str:
            return log.read_text(encoding="utf-8", errors="replace")

        wait_for_port(self.port, process, timeout=TIMEOUT, output=said)
        url = f"http://127.0.0.1:{self.port}/mcp"
        assert f"connect with: backchannel connect {url}" in said(), f"{block.where}: {said()}"

    @staticmethod
    def _check_curl(block: Block, steps: list[str], out: str) -> None:
        if any(step.startswith("curl ") or "$(curl " in step for step in steps):
            assert '"result"' in out and '"error"' not in out, f"{block.where}: curl got:\n{out}"


@pytest.fixture
def runner(tmp_path: Path) -> Iterator[Runner]:
    running = Runner(tmp_path, free_port())
    try:
        yield running
    finally:
        running.close()


def test_every_example_runs_as_written(runner: Runner) -> None:
    blocks = readme_blocks()
    for block in blocks:  # the files first: examples before them in README use them too
        if block.file:
            (runner.directory / block.file).write_text(block.code, encoding="utf-8")
    ran = 0
    for block in blocks:
        if block.lang == "python":
            runner.python(block)
        elif block.lang == "bash":
            runner.bash(block)
        else:
            continue
        ran += block.kind is None or block.file is not None
    assert ran >= 10
