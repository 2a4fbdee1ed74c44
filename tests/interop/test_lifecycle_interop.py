"""Operation lifecycle (issue #6) against real peers: progress, cancellation and logging.

* Our ``Client.stdio`` against server-everything (TypeScript SDK reference server, handshake
  era only): ``trigger-long-running-operation`` with progress, then cancelled mid-way (the
  session goes on), and ``toggle-simulated-logging`` after ``set_logging_level("debug")``.
* The official Python SDK client (``tests/peers/pysdk_client.py``, mcp 2.3.0) against our
  ``tests/peers/backchannel_server.py --lifecycle`` in both eras: progress in order, a call
  cancelled with an anyio cancel scope (our handler is stopped, nothing leaks, the session
  goes on), and log levels: ``logging/setLevel`` (handshake era) or the per-request ``_meta``
  level (2026-07-28, from ``Client(log_level=...)`` or a call's ``meta``).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from backchannel.client import Client
from backchannel.protocol.events import ProgressReceived
from backchannel.testing import Tap, within
from backchannel.transports.stdio import StdioClientTransport
from backchannel.types.content import TextContent
from peers.paths import EVERYTHING_STDIO_CMD, PEERS_DIR, TESTS_DIR, have_npm_peers, have_pysdk, pysdk_client_cmd

pytestmark = pytest.mark.interop

LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
LONG_OP = "trigger-long-running-operation"
TIMEOUT = 60
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"

needs_npm = pytest.mark.skipif(not have_npm_peers(), reason="npm peers not installed (run tests/peers/install.sh)")
needs_pysdk = pytest.mark.skipif(not have_pysdk(), reason="the official Python SDK (mcp==2.3.0) is not installed")


def text(result: Any) -> str:
    [content] = result.content
    assert isinstance(content, TextContent)
    return content.text


# ============================================== our client vs server-everything


async def _everything_session() -> dict[str, Any]:
    out: dict[str, Any] = {"logs": []}
    logged = asyncio.Event()

    def on_log(params: dict[str, Any]) -> None:
        out["logs"].append(params)
        logged.set()

    command, *args = EVERYTHING_STDIO_CMD
    tap = Tap(StdioClientTransport(command, args, cwd=TESTS_DIR))  # what crossed the wire, to wait on
    client = Client(tap, era="auto", request_timeout=20, on_log=on_log)
    loop = asyncio.get_running_loop()
    async with asyncio.timeout(TIMEOUT), client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        out["long_op_arguments"] = sorted(tools[LONG_OP].input_schema.get("properties", {}))

        # 1. Progress, all the way through.
        progress: list[ProgressReceived] = []
        out["long_op"] = await client.call_tool(LONG_OP, {"duration": 0.5, "steps": 5}, on_progress=progress.append)
        out["progress"] = [(e.progress, e.total) for e in progress]

        # 2. Cancelled after the first progress notification.
        first = asyncio.Event()
        cancelled_progress: list[ProgressReceived] = []

        def on_progress(event: ProgressReceived) -> None:
            cancelled_progress.append(event)
            first.set()

        task = asyncio.create_task(client.call_tool(LONG_OP, {"duration": 3, "steps": 30}, on_progress=on_progress))
        await first.wait()
        token = tap.tool_calls_written(LONG_OP)[-1]["params"]["_meta"]["progressToken"]
        cancelled_at = loop.time()
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            out["cancel"] = "cancelled"
        else:  # pragma: no cover - would be the bug
            out["cancel"] = "finished"
        out["release_seconds"] = loop.time() - cancelled_at
        out["echo_after_cancel"] = text(await client.call_tool("echo", {"message": "still here"}))
        seen_at_cancel = len(cancelled_progress)
        read_at_cancel = len(tap.received)

        # server-everything does not stop the operation (it ignores the abort signal): its
        # progress goes on for a token we no longer track and must be dropped, as its late answer.
        # Wait until two such notifications have crossed the wire, then make a round trip: the
        # ping's answer follows them on the one pipe, so by its return our client has read them.
        def late_progress() -> list[dict[str, Any]]:
            return [
                m
                for m in tap.received[read_at_cancel:]
                if m.get("method") == "notifications/progress" and m["params"].get("progressToken") == token
            ]

        await within(lambda: len(late_progress()) >= 2, "server-everything's progress after the cancel", timeout=10)
        await client.ping()
        out["late_progress_on_the_wire"] = len(late_progress())
        out["progress_after_cancel"] = len(cancelled_progress) - seen_at_cancel
        out["tables_after_cancel"] = (
            client.connection.pending_requests,
            client.session.pending_outbound,
            client.session.active_progress_tokens,
        )

        # 3. Logging: level first, then the simulated logger (one message at once, then every 5 s).
        await client.set_logging_level("debug")
        out["toggle_on"] = text(await client.call_tool("toggle-simulated-logging", {}))
        async with asyncio.timeout(15):
            await logged.wait()
        out["toggle_off"] = text(await client.call_tool("toggle-simulated-logging", {}))
        out["ping"] = await client.ping()
    return out


@pytest.fixture(scope="module")
def everything() -> dict[str, Any]:
    if not have_npm_peers():
        pytest.skip("npm peers not installed (run tests/peers/install.sh)")
    return asyncio.run(_everything_session())


@needs_npm
def test_everything_long_operation_reports_increasing_progress_pg04_pg05(everything: dict[str, Any]) -> None:
    """PG-04, PG-05: ``trigger-long-running-operation`` (arguments from ``tools/list``) sends
    progress for our token, strictly increasing, with its total; the call then answers."""
    assert everything["long_op_arguments"] == ["duration", "steps"]
    assert everything["progress"] == [(1, 5), (2, 5), (3, 5), (4, 5), (5, 5)]
    values = [p for p, _ in everything["progress"]]
    assert all(a < b for a, b in itertools.pairwise(values))
    assert "completed" in text(everything["long_op"])


@needs_npm
def test_everything_cancel_mid_way_releases_at_once_and_the_session_goes_on_cn08_cn12(
    everything: dict[str, Any],
) -> None:
    """CN-08, CN-12, PG-08: cancelling the awaiting task ends the call at once (it sent
    ``notifications/cancelled``); later progress for that token is dropped; ``echo`` still answers."""
    assert everything["cancel"] == "cancelled"
    assert everything["release_seconds"] < 0.5
    assert everything["echo_after_cancel"] == "Echo: still here"
    assert everything["late_progress_on_the_wire"] >= 2  # the server did go on: there was something to drop
    assert everything["progress_after_cancel"] == 0
    assert everything["tables_after_cancel"] == (0, 0, 0)


@needs_npm
def test_everything_simulated_logging_after_set_level_lg02_lg03(everything: dict[str, Any]) -> None:
    """LG-02, LG-03: ``logging/setLevel`` to debug, then ``toggle-simulated-logging``: log
    messages arrive at ``on_log`` with a valid level."""
    assert everything["toggle_on"].startswith("Started simulated")
    assert everything["toggle_off"].startswith("Stopped simulated")
    assert everything["logs"]
    for message in everything["logs"]:
        assert message["level"] in LEVELS
        assert "Level" in message["data"] or "level" in message["data"]


# ======================================== the official SDK client vs our server

OUR_SERVER = [sys.executable, str(PEERS_DIR / "backchannel_server.py"), "--lifecycle"]
MODES = ["legacy", "2026-07-28"]

COMMON: list[tuple[str, str, dict[str, Any]]] = [
    ("progress", "call_tool_progress", {"name": "slow_progress", "arguments": {"steps": 5, "delay": 0.02}}),
    (
        "cancel",
        "call_tool_cancel",
        {"name": "slow_progress", "arguments": {"steps": 1000, "delay": 0.02}, "after_progress": 2},
    ),
    ("status", "call_tool", {"name": "lifecycle_status", "arguments": {}}),
    ("echo", "call_tool", {"name": "echo", "arguments": {"text": "still here"}}),
]
LEGACY_LOGS: list[tuple[str, str, dict[str, Any]]] = [
    ("chatty_default", "call_tool", {"name": "chatty", "arguments": {"tag": "default"}}),
    ("set_warning", "set_logging_level", {"level": "warning"}),
    ("chatty_warning", "call_tool", {"name": "chatty", "arguments": {"tag": "warning"}}),
    ("set_debug", "set_logging_level", {"level": "debug"}),
    ("chatty_debug", "call_tool", {"name": "chatty", "arguments": {"tag": "debug"}}),
]
MODERN_LOGS: list[tuple[str, str, dict[str, Any]]] = [
    ("chatty_none", "call_tool", {"name": "chatty", "arguments": {"tag": "none"}}),
    ("chatty_error", "call_tool", {"name": "chatty", "arguments": {"tag": "error"}, "meta": {LOG_LEVEL_KEY: "error"}}),
    ("chatty_debug", "call_tool", {"name": "chatty", "arguments": {"tag": "debug"}, "meta": {LOG_LEVEL_KEY: "debug"}}),
    ("set_debug", "set_logging_level", {"level": "debug"}),
    ("chatty_after_set", "call_tool", {"name": "chatty", "arguments": {"tag": "after_set"}}),
]


def _run_pysdk(mode: str, plan: list[tuple[str, str, dict[str, Any]]], *extra: str) -> dict[str, Any]:
    argv = pysdk_client_cmd(mode, OUR_SERVER, plan=json.dumps([{"op": op, "args": args} for _, op, args in plan]))
    argv[argv.index("--") : argv.index("--")] = ["--exclude-unset", *extra]
    proc = subprocess.run(
        argv, capture_output=True, text=True, timeout=TIMEOUT, cwd=Path(__file__).resolve().parents[2], check=False
    )
    assert proc.returncode == 0, f"pysdk_client exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    out = json.loads(proc.stdout)
    assert "closeError" not in out, out["closeError"]
    results = dict(zip([key for key, _, _ in plan], out["results"], strict=True))
    return {"mode": mode, "logs": out["logs"], **results}


@pytest.fixture(scope="module", params=MODES)
def sdk(request: pytest.FixtureRequest) -> dict[str, Any]:
    if not have_pysdk():
        pytest.skip("the official Python SDK (mcp==2.3.0) is not installed")
    mode: str = request.param
    return _run_pysdk(mode, COMMON + (LEGACY_LOGS if mode == "legacy" else MODERN_LOGS))


def ok(run: dict[str, Any], key: str) -> Any:
    value = run[key]
    assert not (isinstance(value, dict) and "error" in value), f"{key}: {value}"
    return value


def tagged_levels(run: dict[str, Any], tag: str) -> list[str]:
    return [m["level"] for m in run["logs"] if isinstance(m.get("data"), dict) and m["data"].get("tag") == tag]


@needs_pysdk
def test_sdk_progress_arrives_in_order_pg04_pg05_pg07(sdk: dict[str, Any]) -> None:
    """PG-04, PG-05, PG-07: the SDK's ``progress_callback`` sees every step, in order."""
    step = ok(sdk, "progress")
    assert step["progress"] == [[i, 5, f"step {i}/5"] for i in range(1, 6)]
    assert step["result"]["content"] == [{"type": "text", "text": "5 steps"}]


@needs_pysdk
def test_sdk_cancel_stops_our_handler_and_nothing_leaks_cn08_cn09_cn10(sdk: dict[str, Any]) -> None:
    """CN-08, CN-09, CN-10, PG-16: the SDK client cancels its call (anyio cancel scope, which
    sends ``notifications/cancelled``); our handler is cancelled, our tables are empty, no
    answer confused the SDK, and the session goes on."""
    cancel = ok(sdk, "cancel")
    assert cancel["cancelled"] is True
    assert "result" not in cancel
    assert [p for p, _, _ in cancel["progress"]][:2] == [1, 2]
    assert cancel["release_seconds"] < 1.0
    status = ok(sdk, "status")["structuredContent"]
    assert status == {
        "started": 2,
        "finished": 1,
        "cancelled": 1,
        "running": 0,
        "active_handlers": 0,
        "pending_inbound": 0,
        "pending_outbound": 0,
        "active_progress_tokens": 0,
    }
    assert ok(sdk, "echo")["content"] == [{"type": "text", "text": "still here"}]


@needs_pysdk
def test_sdk_log_levels_lg02_lg03_lg04(sdk: dict[str, Any]) -> None:
    """Handshake era (LG-02, LG-03, LG-04): the server's default (info) until ``setLevel``, then
    that level and above. 2026-07-28 (LG-04 reversed, LG-05 Δ): no ``logLevel`` in ``_meta`` means
    no logs; a per-request level filters that request's logs; ``logging/setLevel`` is gone."""
    assert {m.get("logger") for m in sdk["logs"]} == {"chatty"}
    if sdk["mode"] == "legacy":
        assert tagged_levels(sdk, "default") == LEVELS[1:]
        assert ok(sdk, "set_warning") == {}
        assert tagged_levels(sdk, "warning") == LEVELS[3:]
        assert tagged_levels(sdk, "debug") == LEVELS
    else:
        assert tagged_levels(sdk, "none") == []
        assert tagged_levels(sdk, "error") == LEVELS[4:]
        assert tagged_levels(sdk, "debug") == LEVELS
        assert sdk["set_debug"]["error"]["code"] == -32601
        assert tagged_levels(sdk, "after_set") == []


@needs_pysdk
def test_sdk_client_log_level_option_in_the_stateless_era_lg03() -> None:
    """LG-03 (stateless era): ``Client(log_level="notice")`` stamps every request; a call's own
    ``meta`` level overrides it for that request."""
    plan: list[tuple[str, str, dict[str, Any]]] = [
        ("chatty_client", "call_tool", {"name": "chatty", "arguments": {"tag": "client"}}),
        (
            "chatty_override",
            "call_tool",
            {"name": "chatty", "arguments": {"tag": "override"}, "meta": {LOG_LEVEL_KEY: "critical"}},
        ),
    ]
    run = _run_pysdk("2026-07-28", plan, "--log-level", "notice")
    ok(run, "chatty_client")
    assert tagged_levels(run, "client") == LEVELS[2:]
    assert tagged_levels(run, "override") == LEVELS[5:]
