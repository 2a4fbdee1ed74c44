"""``backchannel check``'s command line: a line that cannot be run is one line and status 2; the
groups and eras it is told to run are the only ones on the card; the check package is loaded
only when ``check`` runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
BROKEN = str(HERE / "broken_server.py")


def backchannel(*words: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(
        [sys.executable, "-m", "backchannel", *words],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env=env,
    )


@pytest.mark.parametrize(
    ("words", "said"),
    [
        (["check"], "give the server: -- COMMAND"),
        (["check", "--"], "give the server: -- COMMAND"),
        (["check", "--header", "X-Key: 1", "--", sys.executable, BROKEN], "--header is for an http(s):// server"),
        (["check", "--", "no-such-command-for-check"], "no such command: no-such-command-for-check"),
        (["check", "http://127.0.0.1:9/mcp", "extra"], "unexpected words after the URL: extra"),
        (["check", "--config", "/nonexistent/check.toml", "--", sys.executable, BROKEN], "cannot read it"),
    ],
)
def test_a_line_that_cannot_run_is_one_line_and_status_2(words: list[str], said: str) -> None:
    done = backchannel(*words)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0], done.stderr
    assert lines[0].startswith("backchannel check: ")


@pytest.mark.parametrize(
    ("words", "said"),
    [
        (["--tool", "flies=x"], "'flies' is no role"),
        (["--tool", "slow"], "is not ROLE=NAME"),
        (["--budget", "-1"], "is not a number of frames"),
        (["--group", "tasks"], "invalid choice: 'tasks'"),
        (["--fleet", "0"], "is not a number of sessions"),
    ],
)
def test_a_bad_option_is_refused_by_the_parser(words: list[str], said: str) -> None:
    done = backchannel("check", *words, "--", sys.executable, BROKEN)
    assert done.returncode == 2
    assert said in done.stderr


def test_the_fleet_group_needs_its_number_of_sessions() -> None:
    done = backchannel("check", "--group", "fleet", "http://127.0.0.1:9/mcp")
    assert done.returncode == 2
    assert done.stderr.strip() == "backchannel check: --group fleet needs --fleet N (how many sessions at once)"


def test_a_token_variable_that_is_not_set_is_one_line() -> None:
    env_name = "BACKCHANNEL_CHECK_NO_SUCH_VARIABLE"
    done = backchannel("check", "--foreign-token-env", env_name, "http://127.0.0.1:9/mcp")
    assert done.returncode == 2
    said = f"backchannel check: --foreign-token-env: the environment variable {env_name} is not set"
    assert done.stderr.strip() == said


def test_a_bad_config_names_the_file_and_the_key(tmp_path: Path) -> None:
    config = tmp_path / "check.toml"
    config.write_text("[tools]\nslow = { name = 3 }\n")
    done = backchannel("check", "--config", str(config), "--", sys.executable, BROKEN)
    assert done.returncode == 2
    assert f"{config}: tools.slow.name: must be the tool's name" in done.stderr


def test_only_the_groups_and_era_asked_for_run() -> None:
    done = backchannel(
        "check", "--json", "--quiet", "--group", "eras", "--era", "handshake", "--", sys.executable, BROKEN
    )
    assert done.returncode == 1  # the broken server's counter-offer and ping
    card = json.loads(done.stdout)
    assert {entry["group"] for entry in card["checks"]} == {"eras"}
    assert "eras.discover" not in {entry["check"] for entry in card["checks"]}  # the stateless era was not asked
    assert done.stderr == ""


def test_the_check_package_loads_only_for_check() -> None:
    code = (
        "import sys\n"
        "from backchannel.cli.arguments import build_parser\n"
        "parser, _ = build_parser()\n"
        "parser.parse_args(['check', '--', 'x'])\n"
        "assert not any(m == 'backchannel.check' or m.startswith('backchannel.check.') for m in sys.modules), "
        "sorted(m for m in sys.modules if m.startswith('backchannel.check'))\n"
        "assert 'asyncio' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
