"""``Client(log_level=...)`` asks for log messages the same way in both eras (issue #27, item 6).

Stateless era: the level rides in every request's ``_meta`` as
``io.modelcontextprotocol/logLevel`` (2026-07-28 logging.mdx: "The server MUST NOT emit
``notifications/message`` for a request that does not include this field"). Handshake era:
``logging/setLevel`` right after ``initialize``. Either only when the server declares
``logging``. A real server process over stdio (``tests/progress/_progress_server.py``: ``chatty``
logs once at each of the eight levels), the client's side of the wire recorded by a ``Tap``;
the official Python SDK's server for one that declares no ``logging``. The terminal's
``backchannel call --log-level`` goes the same way and prints the same lines in either era.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from backchannel import Client
from backchannel.testing import Tap, run
from backchannel.transports.stdio import StdioClientTransport
from backchannel.types import meta as M

TESTS = Path(__file__).resolve().parents[1]
SRC = str(TESTS.parent / "src")
SERVER = str(TESTS / "progress" / "_progress_server.py")
PYSDK_SERVER = str(TESTS / "peers" / "pysdk_server.py")
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
BOUND = 60.0
ERAS = ["handshake", "stateless"]


def _client(tap: Tap, era: str, **options: Any) -> Client:
    tap.around(StdioClientTransport(sys.executable, [SERVER], env={"PYTHONPATH": SRC}))
    return Client(tap, era=era, request_timeout=30, **options)


async def _chatty(client: Client) -> None:
    await client.call_tool("chatty", {"tag": "t"})
    await client.list_tools()  # a round trip: every log message of the call has been handled


@pytest.mark.parametrize("era", ERAS)
def test_log_level_brings_the_same_messages_in_both_eras(era: str) -> None:
    tap = Tap()
    logs: list[str] = []

    async def body() -> None:
        async with _client(tap, era, log_level="warning", on_log=lambda p: logs.append(p["level"])) as client:
            await _chatty(client)

    run(body(), BOUND)
    assert logs == ["warning", "error", "critical", "alert", "emergency"]
    set_level = tap.requests_written("logging/setLevel")
    call = tap.tool_calls_written("chatty")[0]
    if era == "handshake":
        assert [request["params"] for request in set_level] == [{"level": "warning"}]
        requests = [m for m in tap.written if "method" in m and "id" in m]
        assert [m["method"] for m in requests[:2]] == ["initialize", "logging/setLevel"]
    else:
        assert set_level == []
        assert call["params"]["_meta"][M.LOG_LEVEL] == "warning"
        assert all(m["params"]["_meta"].get(M.LOG_LEVEL) == "warning" for m in tap.requests_written("tools/list"))


@pytest.mark.parametrize("era", ERAS)
def test_without_log_level_nothing_is_asked_for(era: str) -> None:
    """The default asks for nothing: the stateless-era server then sends nothing; a handshake-era
    one sends what its own default level (``Server(log_level="info")``) lets through, which the
    2025-11-25 protocol gives no way to turn off."""
    tap = Tap()
    logs: list[str] = []

    async def body() -> None:
        async with _client(tap, era, on_log=lambda p: logs.append(p["level"])) as client:
            await _chatty(client)

    run(body(), BOUND)
    assert tap.requests_written("logging/setLevel") == []
    assert M.LOG_LEVEL not in tap.tool_calls_written("chatty")[0]["params"].get("_meta", {})
    assert logs == ([] if era == "stateless" else list(LEVELS[1:]))


@pytest.mark.parametrize("era", ERAS)
def test_a_server_without_logging_is_not_asked(era: str) -> None:
    """The official SDK's peer declares no ``logging``: no ``logging/setLevel`` (it would refuse
    it), no level in ``_meta``, and the client connects all the same."""
    pytest.importorskip("mcp")
    tap = Tap()
    tap.around(StdioClientTransport(sys.executable, [PYSDK_SERVER]))

    async def body() -> dict[str, Any]:
        async with Client(tap, era=era, log_level="debug", request_timeout=30) as client:
            await client.list_tools()
            return client.server_capabilities

    capabilities = run(body(), BOUND)
    assert "logging" not in capabilities
    assert tap.requests_written("logging/setLevel") == []
    assert all(M.LOG_LEVEL not in (m.get("params") or {}).get("_meta", {}) for m in tap.requests_written("tools/list"))


def test_an_unknown_level_is_refused_at_once() -> None:
    with pytest.raises(ValueError, match=r"unknown log level 'loud'; use one of debug, info"):
        Client.stdio(sys.executable, [SERVER], log_level="loud")  # type: ignore[arg-type]


def _call(era: str, *extra: str) -> list[str]:
    argv = [sys.executable, "-m", "backchannel", "call", "chatty", "--args", "tag=t", "--era", era, *extra]
    argv += ["--", sys.executable, SERVER]
    env = {**os.environ, "PYTHONPATH": SRC}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=BOUND, env=env, check=False)
    assert done.returncode == 0, done.stderr
    return done.stderr.splitlines()


@pytest.mark.parametrize("extra", [(), ("--log-level", "error")], ids=["default", "error"])
def test_backchannel_call_prints_the_same_logs_in_either_era(extra: tuple[str, ...]) -> None:
    handshake, stateless = _call("handshake", *extra), _call("stateless", *extra)
    assert handshake == stateless
    expected = (
        []
        if not extra
        else [f'backchannel call: [{level}] chatty: {{"tag": "t", "level": "{level}"}}' for level in LEVELS[4:]]
    )
    assert handshake == expected
