"""``backchannel check``'s cards for other people's servers (issue #33), each pinned to the fails
docs/check.md explains ("Other servers' cards"), made by the command as a person runs it.

To keep the cost down each peer runs once, in the groups where its fails are, with a small
fuzzing budget:

- an mcp 2.3.0 server (``tests/peers/pysdk_eliciting_server.py``, stdio), handshake era,
  robustness;
- FastMCP 4.2.3 (``benchmarks/peers/fastmcp_server.py stdio``), handshake era, second layer;
- the TypeScript SDK's example server (``simpleStreamableHttp.js``, Streamable HTTP), second
  layer: its tasks are checked, and it dies when a cancelled task's work ends;
- server-everything over Streamable HTTP, robustness (the HTTP checks), ``get-env`` and
  ``gzip-file-as-resource`` excluded.

Every server listens on 127.0.0.1 only (``loopback-only.cjs`` for the Node ones).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_check_cards import check, failures, verdicts

from peers.paths import EVERYTHING_ENTRY, LISTENING_RE, LOOPBACK_ONLY, NODE22, NODE_MODULES, have_npm_peers

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
BUDGET = ("--budget", "30")
TS_EXAMPLE = NODE_MODULES / "@modelcontextprotocol" / "sdk" / "dist" / "esm" / "examples" / "server"
TS_EXAMPLE = TS_EXAMPLE / "simpleStreamableHttp.js"

#: What each card fails, each explained in docs/check.md ("Other servers' cards").
PYSDK_FAILS = {
    "robustness.parse-error@2025-11-25",
    "robustness.invalid-request@2025-11-25",
    "robustness.deep@2025-11-25",
}
FASTMCP_FAILS = {"completion.errors@2025-11-25"}
TS_EXAMPLE_FAILS = {"logging.bad-level@2025-11-25", "tasks.cancel@2025-11-25"}
EVERYTHING_HTTP_FAILS = {
    "robustness.invalid-request@2025-11-25",
    "robustness.invalid-params@2025-11-25",
    "robustness.fuzz-errors@2025-11-25",
    "http.origin@2025-11-25",
    "http.host@2025-11-25",
    "http.unknown-session@2025-11-25",
}


def _node_server(argv: list[str], env: dict[str, str]) -> Iterator[str]:
    """Start a Node server on a free loopback port; yield its /mcp URL; stop it."""
    process = subprocess.Popen(
        argv, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT
    )
    try:
        assert process.stderr is not None
        port = None
        for line in process.stderr:  # bounded by the process: it prints the line or exits
            found = LISTENING_RE.search(line)
            if found:
                port = int(found["port"])
                break
        assert port is not None, "the server did not say where it listens"
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _card_fails(card: dict[str, Any]) -> set[str]:
    return set(failures(card))


def test_an_mcp_2_3_0_server_card() -> None:
    status, card, stderr = check(
        *BUDGET,
        "--era",
        "handshake",
        "--group",
        "robustness",
        "--tool",
        "elicits=ask_name",
        "--timeout",
        "4",  # three of its fails are answers that never come: each waits this long
        "--",
        sys.executable,
        str(ROOT / "tests" / "peers" / "pysdk_eliciting_server.py"),
    )
    assert _card_fails(card) == PYSDK_FAILS, (failures(card), stderr[-2000:])
    assert status == 1
    assert verdicts(card)["robustness.dead-client@2025-11-25"] == "pass"  # a form pending, stdin closed


def test_a_fastmcp_server_card() -> None:
    pytest.importorskip("fastmcp", reason="fastmcp is not installed (the benchmarks' extra)")
    status, card, stderr = check(
        *BUDGET,
        "--era",
        "handshake",
        "--group",
        "second-layer",
        "--",
        sys.executable,
        str(ROOT / "benchmarks" / "peers" / "fastmcp_server.py"),
        "stdio",
    )
    assert _card_fails(card) == FASTMCP_FAILS, (failures(card), stderr[-2000:])
    assert status == 1
    seen = verdicts(card)
    for passed in ("progress.token", "progress.monotonic", "progress.after-answer", "progress.unasked"):
        assert seen[f"{passed}@2025-11-25"] == "pass", passed
    # FastMCP declares no capabilities.tasks without its fastmcp-tasks extension
    assert seen["tasks.create@2025-11-25"] == "n/a"


@pytest.mark.skipif(not have_npm_peers(), reason="the npm peers are not installed (tests/peers/install.sh)")
def test_the_typescript_sdk_example_server_card() -> None:
    argv = [str(NODE22), "--require", str(LOOPBACK_ONLY), str(TS_EXAMPLE)]
    for url in _node_server(argv, {"MCP_PORT": "0", "MCP_AUTH_PORT": "0"}):
        status, card, stderr = check(*BUDGET, "--group", "second-layer", url)
        assert _card_fails(card) == TS_EXAMPLE_FAILS, (failures(card), stderr[-2000:])
        assert status == 1
        seen = verdicts(card)
        for passed in ("tasks.create", "tasks.status", "tasks.fields", "tasks.result", "tasks.cancel-terminal"):
            assert seen[f"{passed}@2025-11-25"] == "pass", passed
        assert "stopped answering" in failures(card)["tasks.cancel@2025-11-25"]


@pytest.mark.skipif(not have_npm_peers(), reason="the npm peers are not installed (tests/peers/install.sh)")
def test_server_everything_over_http_card() -> None:
    argv = [str(NODE22), "--require", str(LOOPBACK_ONLY), str(EVERYTHING_ENTRY), "streamableHttp"]
    for url in _node_server(argv, {"PORT": "0"}):
        status, card, stderr = check(
            *BUDGET, "--group", "robustness", "--exclude", "get-env", "--exclude", "gzip-file-as-resource", url
        )
        assert _card_fails(card) == EVERYTHING_HTTP_FAILS, (failures(card), stderr[-2000:])
        assert status == 1
