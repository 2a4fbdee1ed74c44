"""The render tests leave nothing in the temporary folder.

Issue #27: a test run left ``backchannel-*/evil_name-1.png`` behind. The code is right to keep
the files it saves (``Renderer`` shows the person their path, to open after the session, and
``--save-dir`` chooses where); the test that exercised the default folder left it there. Here
``test_ui_render.py`` runs in a process of its own whose temporary folder (``TMPDIR``) is a fresh
one, and pytest's own folders go elsewhere (``--basetemp``): afterwards that folder is empty.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_the_render_tests_leave_the_temporary_folder_empty(tmp_path: Path) -> None:
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    env = {**os.environ, "TMPDIR": str(temporary)}
    argv = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--basetemp",
        str(tmp_path / "pytest"),
        str(HERE / "test_ui_render.py"),
    ]
    done = subprocess.run(argv, env=env, cwd=HERE.parents[1], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert sorted(path.relative_to(temporary).as_posix() for path in temporary.rglob("*")) == []
