"""Era detection does not depend on how busy the machine is (issue #27, item 1).

Over stdio the ``server/discover`` probe's clock starts once the server process has read the
probe (the kernel says how much of its stdin is unread), not at spawn; a probe that went
unanswered is never followed by ``initialize`` on the same process (the server is spawned
afresh); and every failure says what happened. Real processes throughout: our own server with
a startup delay, a process that reads and never answers, one that reads nothing, and the
official Python SDK's server behind a relay that reads at once and passes each line on late.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from backchannel import Client
from backchannel.testing import run
from backchannel.types.errors import RemoteProtocolError, RequestTimeout
from peers.paths import EVERYTHING_STDIO_CMD, have_npm_peers

TESTS = Path(__file__).resolve().parents[1]
SRC = str(TESTS.parent / "src")
SLOW_SERVER = [str(TESTS / "progress" / "_progress_server.py"), "--startup-delay", "4", "--stateless-only"]
RELAY = str(TESTS / "client" / "_late_relay.py")
PYSDK_SERVER = str(TESTS / "peers" / "pysdk_server.py")
#: Reads every line it is given and answers none (a handshake-era server that ignores the probe).
SILENT = ["-c", "import sys\nfor _ in sys.stdin: pass"]
#: Reads nothing (a process stuck before it serves); it ends when the client stops it.
DEAF = ["-c", "import time\ntime.sleep(30)"]
BOUND = 120.0


def _stdio(args: list[str], **options: Any) -> Client:
    return Client.stdio(sys.executable, args, env={"PYTHONPATH": SRC}, **options)


@pytest.mark.parametrize("era", ["auto", "stateless"])
def test_a_server_4_s_slow_to_start_is_found_in_the_stateless_era(era: str) -> None:
    """The default 3 s probe timeout, a server that sleeps 4 s before it reads: stateless (it
    speaks only 2026-07-28, and refuses ``initialize``)."""

    async def body() -> tuple[str | None, str | None, list[str]]:
        async with _stdio(SLOW_SERVER, era=era) as client:
            assert client.probe_timeout == 3.0
            tools = [tool.name for tool in await client.list_tools()]
            return client.era, client.protocol_version, tools

    era_found, version, tools = run(body(), BOUND)
    assert (era_found, version) == ("stateless", "2026-07-28")
    assert "steps" in tools


def test_stateless_era_timeout_says_no_answer_to_the_probe() -> None:
    async def body() -> None:
        async with _stdio(SILENT, era="stateless", probe_timeout=0.5):
            raise AssertionError("connected to a server that never answers")

    with pytest.raises(RequestTimeout) as caught:
        run(body(), BOUND)
    assert str(caught.value) == (
        "cannot use the stateless era (2026-07-28): no answer to server/discover within 0.5 s of the server reading it"
    )


def test_stateless_era_refused_says_the_servers_error() -> None:
    """server-everything (the TypeScript SDK 1.32.2) speaks only the handshake era and answers the
    probe with -32601: the message quotes it, not a guess."""
    if not have_npm_peers():
        pytest.skip("npm peers not installed (run tests/peers/install.sh)")
    command, *args = EVERYTHING_STDIO_CMD

    async def body() -> None:
        async with Client.stdio(command, args, era="stateless", cwd=str(TESTS)):
            raise AssertionError("a handshake-era server was spoken to in the stateless era")

    with pytest.raises(RemoteProtocolError) as caught:
        run(body(), BOUND)
    assert str(caught.value) == (
        "cannot use the stateless era (2026-07-28): it answered server/discover with error -32601: Method not found"
    )


def test_a_server_that_reads_nothing_is_named_so() -> None:
    async def body() -> None:
        async with _stdio(DEAF, probe_timeout=0.5, request_timeout=1.0):
            raise AssertionError("connected to a server that reads nothing")

    with pytest.raises(RequestTimeout, match=r"^the server process read none of its input within 1 s$"):
        run(body(), BOUND)


def test_a_late_answer_to_the_probe_meets_no_initialize(tmp_path: Path) -> None:
    """The official SDK's server takes ``server/discover`` for its era and then refuses
    ``initialize`` (-32022). Behind the relay it reads the probe at once and answers 2 s later,
    past the 0.5 s probe timeout: the client starts the server afresh, and the new process gets
    ``initialize`` first. The process that read the probe never gets ``initialize``."""
    pytest.importorskip("mcp")
    log = tmp_path / "relayed.log"
    log.touch()
    args = [RELAY, "2", str(log), "--", sys.executable, PYSDK_SERVER]

    async def body() -> tuple[str | None, dict[str, Any], str]:
        async with _stdio(args, probe_timeout=0.5, request_timeout=30) as client:
            echoed = await client.call_tool("echo", {"text": "hi"})
            return client.era, client.server_info, str(echoed.content[0].text)  # type: ignore[union-attr]

    era, info, echoed = run(body(), BOUND)
    assert (era, info["name"], echoed) == ("handshake", "pysdk-peer", "hi")
    relayed: dict[str, list[str]] = {}
    for line in log.read_text().splitlines():
        pid, method = line.split()
        relayed.setdefault(pid, []).append(method)
    firsts = [methods[0] for methods in relayed.values()]
    assert firsts.count("initialize") == 1, relayed
    assert all("initialize" not in methods for methods in relayed.values() if methods[0] == "server/discover")
