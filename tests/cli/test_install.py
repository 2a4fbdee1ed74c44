"""``backchannel install TARGET SERVER``: a host's entry for a server (issue 27, "Connecting hosts").

Every run has ``HOME`` (and ``XDG_CONFIG_HOME``) in a temporary directory: the user's real
configuration is never read or written.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from _subprocesses import ROOT, checkout_env, run_cli
from backchannel import Client
from backchannel.testing import run

TIMEOUT = 60
SERVER = ROOT / "tests" / "fleet" / "cli_server.py"  # Server("fleet-cli")
OTHERS = {
    "mcpServers": {"other": {"command": "npx", "args": ["-y", "some-server"], "env": {"TOKEN": "x"}}},
    "globalShortcut": "Ctrl+Space",
}


def install(*args: str, home: Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**checkout_env(), "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    return run_cli("install", *args, timeout=TIMEOUT, env=env, cwd=cwd or home)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def expected_entry(**extra: Any) -> dict[str, Any]:
    return {**extra, "command": sys.executable, "args": ["-m", "backchannel", "run", str(SERVER)]}


def test_mcp_json_prints_the_entry(home: Path) -> None:
    done = install("mcp-json", str(SERVER), "--env", "REGION=eu", "--env", "EMPTY=", home=home)
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert printed == {"mcpServers": {"fleet-cli": {**expected_entry(), "env": {"REGION": "eu", "EMPTY": ""}}}}
    assert list(home.iterdir()) == []  # nothing written


def test_the_entry_runs_the_server(home: Path) -> None:
    """What a host does with the entry: spawn ``command`` with ``args`` (from anywhere) and talk."""
    entry = json.loads(install("mcp-json", str(SERVER), home=home).stdout)["mcpServers"]["fleet-cli"]

    async def tools() -> list[str]:
        async with Client.stdio(entry["command"], entry["args"], cwd=str(home)) as client:
            return [tool.name for tool in await client.list_tools()]

    assert sorted(run(tools)) == ["ask", "whoami"]


def test_claude_desktop_merges_and_keeps_the_other_entries(home: Path) -> None:
    config = home / ".config" / "Claude" / "claude_desktop_config.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps(OTHERS))
    done = install("claude-desktop", str(SERVER), "--name", "weather", home=home)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        f"backchannel install: added 'weather' in {config}; restart Claude Desktop (or reload its servers)"
    )
    written = json.loads(config.read_text())
    assert written == {
        "mcpServers": {**OTHERS["mcpServers"], "weather": expected_entry()},
        "globalShortcut": "Ctrl+Space",
    }
    # Again, with another option: the same entry is replaced, the others still kept.
    done = install("claude-desktop", str(SERVER), "--name", "weather", "--env", "A=1", home=home)
    assert done.returncode == 0 and "replaced 'weather'" in done.stdout
    written = json.loads(config.read_text())
    assert written["mcpServers"]["weather"] == {**expected_entry(), "env": {"A": "1"}}
    assert written["mcpServers"]["other"] == OTHERS["mcpServers"]["other"]


def test_a_new_file_is_made_where_each_host_keeps_it(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    places = {
        "claude-desktop": (home / ".config" / "Claude" / "claude_desktop_config.json", "mcpServers", {}),
        "cursor": (home / ".cursor" / "mcp.json", "mcpServers", {}),
        "claude-code": (project / ".mcp.json", "mcpServers", {"type": "stdio"}),
        "vscode": (project / ".vscode" / "mcp.json", "servers", {"type": "stdio"}),
    }
    for target, (path, key, extra) in places.items():
        done = install(target, str(SERVER), home=home, cwd=project)
        assert done.returncode == 0, done.stderr
        assert json.loads(path.read_text()) == {key: {"fleet-cli": expected_entry(**extra)}}, target


def test_config_names_the_file_and_a_module_gets_its_directory(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "bc_installed_module.py").write_text("from backchannel import Server\n\nmcp = Server('by-module')\n")
    config = tmp_path / "elsewhere" / "mcp.json"
    done = install("cursor", "bc_installed_module", "--config", str(config), home=home, cwd=project)
    assert done.returncode == 0, done.stderr
    entry = json.loads(config.read_text())["mcpServers"]["by-module"]
    assert entry["args"] == ["-m", "backchannel", "run", "bc_installed_module"]
    assert entry["env"] == {"PYTHONPATH": str(project)}  # the host starts it from a directory of its own
    assert not (home / ".cursor").exists()


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"mcpServers": []}', '{"mcpServers": {}} trailing'])
def test_a_file_it_cannot_read_is_refused_in_one_line_and_left_as_it_is(home: Path, text: str) -> None:
    config = home / "mcp.json"
    config.write_text(text)
    done = install("cursor", str(SERVER), "--config", str(config), home=home)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("backchannel install: "), done.stderr
    assert str(config) in lines[0] and "left as it is" in lines[0]
    assert config.read_text() == text
    assert [path.name for path in home.iterdir()] == ["mcp.json"]  # no temporary file left either


def test_a_server_that_does_not_load_is_refused_in_one_line(home: Path) -> None:
    broken = home / "broken.py"
    broken.write_text("import surely_not_installed_here\n")
    done = install("mcp-json", str(broken), home=home)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "ModuleNotFoundError" in done.stderr and "--name" in done.stderr
    done = install("mcp-json", str(home / "absent.py"), home=home)
    assert done.returncode == 2 and done.stderr.strip() == f"backchannel install: no such file: {home / 'absent.py'}"
