"""``backchannel proxy`` when its upstream fails, and how it ends (issue #29, "Bad input").

An upstream that won't start, never answers, can't be reached or dies is named in one line on
the proxy's stderr, and every request of the host gets a JSON-RPC error (-32603, the upstream
named in ``data.upstream``): the proxy never goes silent, and the next request starts the
upstream again. The host closing its end (EOF) or Ctrl-C ends the proxy and the upstream it
spawned. A line the proxy cannot serve is refused in one line with status 2, and the command's
parser does not load the bridge. The host here writes JSON lines itself (``_stdio_host.py``), to
see each answer whole.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _stdio_host import StdioHost

from _subprocesses import checkout_env, run_cli, wait_for_children
from backchannel.testing import free_port
from peers.paths import PEERS_DIR

UPSTREAM = PEERS_DIR / "stateless_upstream.py"
PREFIX = "backchannel proxy: "


def unavailable(answer: dict[str, object], upstream: str) -> str:
    """The message of ``answer``, once it is the error that names ``upstream`` as unavailable."""
    error = answer.get("error")
    assert isinstance(error, dict), answer
    assert error["code"] == -32603 and error["data"] == {"upstream": upstream}, error
    message = error["message"]
    assert isinstance(message, str) and message.startswith(f"upstream {upstream} is unavailable: "), message
    return message


def proxy_lines(host: StdioHost) -> list[str]:
    return [line for line in host.stderr().splitlines() if line.startswith(PREFIX)]


def gone(pid: int, timeout: float = 20.0) -> bool:
    """Whether process ``pid`` has exited (or is a zombie) within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def stateless_upstream() -> list[str]:
    if not UPSTREAM.is_file():
        pytest.skip(f"{UPSTREAM.name} (the hand-written 2026-07-28 upstream) is not in this checkout")
    return [sys.executable, str(UPSTREAM), "--stdio"]


def test_an_upstream_that_will_not_start_is_named_once_and_every_request_answered(tmp_path: Path) -> None:
    host = StdioHost("--", "no-such-upstream-command", "--flag", stderr_path=tmp_path / "stderr")
    try:
        name = "no-such-upstream-command --flag"
        message = unavailable(host.initialize(), name)
        assert "No such file or directory" in message
        unavailable(host.initialize(), name)  # a host that tries again is answered again
        assert proxy_lines(host) == [f"{PREFIX}{message}"]  # one line, however many requests failed
        assert "Traceback" not in host.stderr()
        assert host.close() == 0
    finally:
        host.kill()


def test_an_upstream_that_never_answers_is_unavailable_after_the_timeout(tmp_path: Path) -> None:
    silent = [sys.executable, "-c", "import time; time.sleep(120)"]
    host = StdioHost(
        "--upstream-era", "handshake", "--upstream-timeout", "1", "--", *silent, stderr_path=tmp_path / "stderr"
    )
    try:
        message = unavailable(host.initialize(timeout=60), " ".join(silent))
        assert "no answer within 1 s" in message
        assert proxy_lines(host) == [f"{PREFIX}{message}"]
        assert host.close() == 0
    finally:
        host.kill()


def test_an_upstream_url_that_cannot_be_reached_is_named(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"  # nothing listens there
    host = StdioHost(url, stderr_path=tmp_path / "stderr")
    try:
        message = unavailable(host.initialize(), url)
        assert "cannot be reached" in message
        assert proxy_lines(host) == [f"{PREFIX}{message}"]
        assert host.close() == 0
    finally:
        host.kill()


def test_an_upstream_that_dies_mid_call_is_named_and_started_again(
    tmp_path: Path, stateless_upstream: list[str]
) -> None:
    host = StdioHost("--", *stateless_upstream, stderr_path=tmp_path / "stderr")
    try:
        assert "result" in host.initialize()
        (child,) = wait_for_children(host.process.pid, 1, 20)
        slow = {"name": "su_slow", "arguments": {"seconds": 30}, "_meta": {"progressToken": "p"}}
        host.send({"id": "slow", "method": "tools/call", "params": slow})
        started = host.read()
        assert started["method"] == "notifications/progress" and started["params"]["progressToken"] == "p"
        os.kill(child, signal.SIGKILL)
        answer = host.read()
        assert answer["id"] == "slow"
        message = unavailable(answer, " ".join(stateless_upstream))
        assert "killed by SIGKILL" in message
        assert proxy_lines(host) == [f"{PREFIX}{message}"]
        again = host.request("tools/call", {"name": "su_cancelled", "arguments": {}})  # a new upstream answers
        assert again["result"]["structuredContent"] == {"cancelled": []}
        assert host.close() == 0
    finally:
        host.kill()


@pytest.mark.parametrize("ending", ["eof", "ctrl-c"])
def test_the_host_leaving_or_ctrl_c_ends_the_proxy_and_its_upstream(
    tmp_path: Path, stateless_upstream: list[str], ending: str
) -> None:
    host = StdioHost("--", *stateless_upstream, stderr_path=tmp_path / "stderr")
    try:
        assert "result" in host.initialize()
        (child,) = wait_for_children(host.process.pid, 1, 20)
        if ending == "eof":
            assert host.close() == 0
        else:
            host.process.send_signal(signal.SIGINT)  # to the proxy alone, not its process group
            assert host.process.wait(20) == 130
        assert gone(child), "the upstream outlived the proxy"
        assert "Traceback" not in host.stderr()
    finally:
        host.kill()


@pytest.mark.parametrize(
    ("words", "said"),
    [
        ([], "give the upstream"),
        (["--header", "X-Key: 1", "--", "python", "server.py"], "--header is for an http(s):// upstream"),
        (["--client-secret-env", "SECRET", "https://example.com/mcp"], "give --client-id too"),
        (["--client-id", "svc", "--", "python", "server.py"], "--client-id logs in to an http(s):// upstream"),
        (["https://example.com/mcp", "--header", "X-Key: 1"], "options go before it"),
        (["--header", "Authorization: Bearer t", "--client-id", "svc", "https://example.com/mcp"], "give one"),
    ],
)
def test_a_line_the_proxy_cannot_serve_is_refused_in_one_line(words: list[str], said: str) -> None:
    done = run_cli("proxy", *words, timeout=60, env=checkout_env())
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith(PREFIX) and said in line


def test_the_parser_does_not_load_the_bridge() -> None:
    probe = "import sys; from backchannel.cli.arguments import build_parser; build_parser(); "
    probe += "print(sorted(m for m in sys.modules if m.startswith(('backchannel.bridge', 'backchannel.client'))))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, env=checkout_env())
    assert done.returncode == 0 and done.stdout.strip() == "[]", done


def test_help_says_what_the_log_level_is_and_how_a_host_runs_it() -> None:
    done = run_cli("proxy", "--help", timeout=60, env=checkout_env())
    assert done.returncode == 0
    words = " ".join(done.stdout.split())
    assert "the proxy's own log on stderr" in words
    assert '{"mcpServers": {"name": {"command": "backchannel", "args": ["proxy", "https://..."]}}}' in words


PROXY_HTTP = (sys.executable, "-m", "backchannel", "proxy", "--serve", "http", "--port")
CLIENT_INFO = {"name": "t", "version": "1"}


def test_an_http_proxy_stopped_stops_its_upstream(tmp_path: Path, stateless_upstream: list[str]) -> None:
    """``--serve http``: the sessions never pass through ``Proxy.serve``; the HTTP app's shutdown
    closes the upstream (its stdin, then SIGTERM). This upstream outlives the end of its stdin, so
    only that close ends it, before the proxy itself is gone."""
    import httpx2 as httpx

    stubborn = (
        "import runpy, sys, time; sys.argv = [sys.argv[1], '--stdio']; "
        "runpy.run_path(sys.argv[0], run_name='__main__'); time.sleep(300)"
    )
    port = free_port()
    stderr = (tmp_path / "stderr").open("w")
    proxy = subprocess.Popen(
        [*PROXY_HTTP, str(port), "--", sys.executable, "-c", stubborn, str(UPSTREAM)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
        env=checkout_env(),
    )
    child = None
    try:
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        deadline = time.monotonic() + 30
        while True:  # until it listens (bounded)
            try:
                answer = httpx.post(
                    f"http://127.0.0.1:{port}/mcp",
                    json=initialize,
                    headers={"Accept": "application/json, text/event-stream"},
                    timeout=30,
                )
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline, "the proxy never listened"
                time.sleep(0.05)
        assert answer.status_code == 200, answer.text
        (child,) = wait_for_children(proxy.pid, 1, 20)
        proxy.send_signal(signal.SIGTERM)
        assert proxy.wait(30) == 0 or proxy.returncode in (-signal.SIGTERM, 143)
        assert gone(child, timeout=5), "the upstream outlived the HTTP proxy"
    finally:
        proxy.kill()
        if child is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)
        stderr.close()
