"""What ``backchannel`` commands that only parse their line (and ``logout`` with nothing kept) load.

``call --help`` imported the terminal client to print its long help (the docstring of
``ui/batch.py``), and ``logout URL`` the whole OAuth client with httpx2, before saying there was
nothing to forget: half a second of CPU each (issue #32). Each command runs in a fresh process
that reports, once the command is done, which modules it loaded; none of the terminal client,
the high-level client, OAuth or the HTTP client libraries may be among them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from _subprocesses import checkout_env

PROGRAM = """
import json, sys
from backchannel.cli.main import main
try:
    status = main(sys.argv[1:])
except SystemExit as exc:
    status = exc.code
print(json.dumps({"status": status, "modules": sorted(sys.modules)}))
"""

#: Modules (and packages: their submodules too) none of these commands needs.
NOT_LOADED = (
    "backchannel.ui.batch",
    "backchannel.ui.terminal",
    "backchannel.ui.render",
    "backchannel.ui.session",
    "backchannel.client.client",
    "backchannel.client.oauth.oauth",
    "backchannel.client.oauth.errors",
    "backchannel.server",
    "backchannel.http_host",
    "httpx2",
    "httpx",
    "httpcore",
    "rich",
    "prompt_toolkit",
    "joserfc",
    "pydantic",
)


def _loaded(*args: str, config: Path) -> tuple[object, list[str], str]:
    env = {**checkout_env(), "XDG_CONFIG_HOME": str(config)}
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, *args],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    unwanted = [name for name in report["modules"] if any(name == n or name.startswith(n + ".") for n in NOT_LOADED)]
    return report["status"], unwanted, done.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("call", "--help"),
        ("logout", "--help"),
        ("connect", "--help"),
        ("proxy", "--help"),
        ("gateway", "--help"),
        ("run", "--help"),
        ("--help",),
    ],
)
def test_help_loads_no_client_ui_or_http_stack(args: tuple[str, ...], tmp_path: Path) -> None:
    status, unwanted, output = _loaded(*args, config=tmp_path)
    assert status == 0
    assert unwanted == []
    if args[0] == "call":  # the long help is still the module's docstring
        assert "The answers file (JSON)" in output and "exit status says how it went" in output


def test_logout_with_nothing_kept_loads_no_oauth_client_and_writes_nothing(tmp_path: Path) -> None:
    status, unwanted, output = _loaded("logout", "https://mcp.example.com/mcp", config=tmp_path)
    assert status == 0 and "no login kept for https://mcp.example.com/mcp" in output
    assert unwanted == []
    assert list(tmp_path.iterdir()) == []  # no folder, no lock file: nothing was kept, nothing is written


def test_calls_long_help_is_the_batch_docstring() -> None:
    from backchannel.cli.arguments import _call_description
    from backchannel.ui import batch

    assert _call_description() == batch.__doc__
