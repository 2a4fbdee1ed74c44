"""The demo's screen carries no line the demo did not write (issue #18, rough edge 1).

``check_demo_screen.py`` plays the whole story in pseudo-terminals; ``.ci/run`` runs it
in a venv with nothing but ``pip install -e '.[examples]'`` (where authlib once warned
that it fell back to httpx), and these tests run it with the dev venv, so a regression
shows in pytest too.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from check_demo_screen import foreign_lines

HERE = Path(__file__).resolve().parent
CHECKER = HERE / "check_demo_screen.py"
README = HERE.parents[1] / "README.md"

#: What authlib printed in the middle of the demo, from an ``.[examples]`` install without httpx2.
AUTHLIB_WARNING = (
    "/venv/lib/python3.11/site-packages/authlib/integrations/httpx_client/assertion_client.py:5: "
    "AuthlibDeprecationWarning: The httpx module is deprecated; please use httpx2 instead.\n"
    "  from ._compat import httpx2\n"
)


def check(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CHECKER), *args], capture_output=True, text=True, timeout=240, env=env, check=False
    )


def test_the_whole_story_leaves_only_the_demos_lines_on_the_screen() -> None:
    done = check()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "is all the demo's own" in done.stdout


def test_a_warning_from_the_demo_server_is_caught(tmp_path: Path) -> None:
    # The server's stderr is the demo's: a warning there lands on the person's screen, as authlib's did.
    (tmp_path / "sitecustomize.py").write_text(
        "import sys, warnings\n"
        "if sys.argv[1:2] == ['run']:  # python -m backchannel run examples/demo_server.py\n"
        "    warnings.warn('a stray warning', UserWarning)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = check("--story", "short", env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "UserWarning: a stray warning" in done.stderr


def test_the_shapes_python_writes_by_itself_are_foreign() -> None:
    screen = (
        "demo> call deploy_to_production\n"
        + AUTHLIB_WARNING
        + "Traceback (most recent call last):\n"
        + '  File "/x/y.py", line 3, in <module>\n'
        + "WARNING:backchannel.http:the server went away\n"
        + "Exception ignored in: <function _ProactorBasePipeTransport.__del__>\n"
        + "Task was destroyed but it is pending!\n"
    )
    found = foreign_lines(screen)
    assert found[0].endswith("please use httpx2 instead.")
    assert len(found) == 6  # all but the prompt and the warning's quoted source line


def test_no_line_of_the_readme_transcript_is_taken_for_foreign() -> None:
    text = README.read_text(encoding="utf-8")
    transcript = text.split("## What a session looks like", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    assert "deploy_to_production" in transcript
    assert foreign_lines(transcript) == []
