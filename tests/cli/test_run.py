"""``backchannel run`` spoken to over raw stdio pipes, and the demo client end to end."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEMO_SERVER = ROOT / "examples" / "demo_server.py"
DEMO_CLIENT = ROOT / "examples" / "demo_client.py"
CONSOLE_SCRIPT = Path(sys.executable).with_name("backchannel")
TIMEOUT = 30

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "pipes", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}

TWO_SERVERS = """
from backchannel import Server

alpha = Server("alpha-server")
beta = Server("beta-server")
not_a_server = 42
"""


class Running:
    """A ``backchannel run`` child; ``ask`` writes one JSON line and reads answers until its id."""

    def __init__(self, command: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(b"")

    def tell(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        self.tell(message)
        while True:
            line = self.lines.get(timeout=TIMEOUT)
            assert line, f"the server exited: {self.finish()}"
            answer = json.loads(line)
            if answer.get("id") == message["id"]:
                return answer  # type: ignore[no-any-return]

    def finish(self) -> tuple[int, str]:
        """Close stdin (the spec's shutdown), wait; (exit code, stderr)."""
        assert self.process.stdin is not None and self.process.stderr is not None
        if not self.process.stdin.closed:
            self.process.stdin.close()
        code = self.process.wait(timeout=TIMEOUT)
        return code, self.process.stderr.read().decode()


def run_command(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> Running:
    return Running([sys.executable, "-m", "backchannel", "run", *args], cwd=cwd, env=env)


def initialize(target: str, **options: Any) -> dict[str, Any]:
    running = run_command(target, **options)
    try:
        answer = running.ask(INITIALIZE)
    finally:
        code, stderr = running.finish()
    assert code == 0, stderr
    assert "result" in answer, answer
    return answer["result"]  # type: ignore[no-any-return]


def fails(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    """Run a target that must not start; its stderr."""
    done = subprocess.run(
        [sys.executable, "-m", "backchannel", "run", *args],
        input=b"",
        capture_output=True,
        timeout=TIMEOUT,
        cwd=cwd,
        env=env,
    )
    assert done.returncode != 0
    assert done.stdout == b""  # nothing but JSON-RPC may ever go to stdout
    return done.stderr.decode()


def write(path: Path, source: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))
    return path


# -- the demo server over raw pipes ---------------------------------------------------------------


def test_demo_server_over_stdio() -> None:
    running = run_command(str(DEMO_SERVER))
    try:
        init = running.ask(INITIALIZE)
        running.tell(INITIALIZED)
        called = running.ask(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "add", "arguments": {"a": 2, "b": 40}},
            }
        )
        bad = running.ask(
            {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "add", "arguments": {}}}
        )
    finally:
        code, stderr = running.finish()
    assert code == 0, stderr
    result = init["result"]
    assert result["protocolVersion"] == "2025-11-25"
    assert result["serverInfo"] == {"name": "demo", "version": "0.1.0"}
    assert set(result["capabilities"]) == {"logging", "tools", "prompts", "resources", "completions"}
    assert result["instructions"].startswith("A demo server")
    assert called["result"]["structuredContent"] == {"result": 42}
    # Bad arguments are a tool execution error the model can correct (SEP-1303), not -32602.
    assert bad["result"]["isError"] is True
    assert bad["result"]["content"][0]["text"].startswith("Invalid arguments for tool 'add': a: required field missing")


def test_demo_server_speaks_the_modern_era_too() -> None:
    running = run_command(str(DEMO_SERVER))
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    try:
        answer = running.ask({"jsonrpc": "2.0", "id": "d", "method": "server/discover", "params": {"_meta": meta}})
    finally:
        running.finish()
    assert answer["result"]["resultType"] == "complete"
    assert answer["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "demo"


# -- choosing the Server ----------------------------------------------------------------------------


def test_path_with_name_picks_that_server(tmp_path: Path) -> None:
    path = write(tmp_path / "two.py", TWO_SERVERS)
    assert initialize(f"{path}:beta")["serverInfo"]["name"] == "beta-server"
    assert initialize(f"{path}:alpha")["serverInfo"]["name"] == "alpha-server"


def test_two_servers_and_no_name_lists_both(tmp_path: Path) -> None:
    path = write(tmp_path / "two.py", TWO_SERVERS)
    stderr = fails(str(path))
    assert "alpha" in stderr and "beta" in stderr
    assert "not_a_server" not in stderr
    assert ":NAME" in stderr
    assert "Traceback" not in stderr


def test_a_preferred_name_wins_over_others(tmp_path: Path) -> None:
    path = write(tmp_path / "preferred.py", TWO_SERVERS + "\nserver = Server('the-one')\n")
    assert initialize(str(path))["serverInfo"]["name"] == "the-one"


def test_no_server_is_a_clear_error(tmp_path: Path) -> None:
    path = write(tmp_path / "empty.py", "x = 1\n")
    stderr = fails(str(path))
    assert "defines no backchannel Server" in stderr
    assert "Traceback" not in stderr


def test_a_name_that_is_not_a_server(tmp_path: Path) -> None:
    path = write(tmp_path / "two.py", TWO_SERVERS)
    for name in ("not_a_server", "gamma"):
        stderr = fails(f"{path}:{name}")
        assert f"no Server named {name!r}" in stderr
        assert "Traceback" not in stderr


def test_missing_file_and_missing_module(tmp_path: Path) -> None:
    assert "no such file" in fails(str(tmp_path / "absent.py"))
    stderr = fails("surely_no_such_module_here", cwd=tmp_path)
    assert "no module named 'surely_no_such_module_here'" in stderr
    assert "Traceback" not in stderr


def test_a_file_can_import_its_siblings(tmp_path: Path) -> None:
    write(tmp_path / "sibling_names.py", "NAME = 'from-a-sibling'\n")
    path = write(
        tmp_path / "uses_sibling.py",
        """
        from backchannel import Server
        from sibling_names import NAME

        app = Server(NAME)
        """,
    )
    assert initialize(str(path))["serverInfo"]["name"] == "from-a-sibling"


PACKAGE_MODULE = """
from backchannel import Server

mcp = Server("packaged")
"""


def test_package_module_from_the_working_directory(tmp_path: Path) -> None:
    write(tmp_path / "bc_pkg_demo" / "__init__.py", "")
    write(tmp_path / "bc_pkg_demo" / "serving.py", PACKAGE_MODULE)
    assert initialize("bc_pkg_demo.serving", cwd=tmp_path)["serverInfo"]["name"] == "packaged"
    assert initialize("bc_pkg_demo.serving:mcp", cwd=tmp_path)["serverInfo"]["name"] == "packaged"


def test_package_module_from_pythonpath(tmp_path: Path) -> None:
    write(tmp_path / "lib" / "bc_pkg_pp" / "__init__.py", "")
    write(tmp_path / "lib" / "bc_pkg_pp" / "serving.py", PACKAGE_MODULE)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "lib")}
    assert initialize("bc_pkg_pp.serving", cwd=elsewhere, env=env)["serverInfo"]["name"] == "packaged"


def test_a_package_directory_in_the_working_directory(tmp_path: Path) -> None:
    # "bc_pkg_dir" exists as a directory here; it is a package to import, not a missing file.
    write(tmp_path / "bc_pkg_dir" / "__init__.py", PACKAGE_MODULE)
    assert initialize("bc_pkg_dir", cwd=tmp_path)["serverInfo"]["name"] == "packaged"


@pytest.mark.skipif(not CONSOLE_SCRIPT.exists(), reason="the backchannel console script is not installed")
def test_console_script_imports_from_the_working_directory(tmp_path: Path) -> None:
    write(tmp_path / "bc_console_mod.py", PACKAGE_MODULE)
    running = Running([str(CONSOLE_SCRIPT), "run", "bc_console_mod"], cwd=tmp_path)
    try:
        answer = running.ask(INITIALIZE)
    finally:
        code, stderr = running.finish()
    assert code == 0, stderr
    assert answer["result"]["serverInfo"]["name"] == "packaged"


# -- the demo client ----------------------------------------------------------------------------------


def demo_client(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(DEMO_CLIENT), *args], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_demo_client_modern() -> None:
    output = demo_client()
    assert "connected to demo (stateless era, 2026-07-28)" in output
    assert "add(2, 40) -> {'result': 42}" in output
    assert "slow_count(5) -> counted to 5" in output
    assert "progress 5/5: counted 5" in output
    assert "weather(' ') -> error: True Tell me which city." in output
    assert "resource demo://cities/Porto -> " in output


def test_demo_client_legacy() -> None:
    output = demo_client("--legacy")
    assert "connected to demo (handshake era, 2025-11-25)" in output
    assert "add(2, 40) -> {'result': 42}" in output
    assert "slow_count(5) -> counted to 5" in output
