"""The official Python SDK's old-transport client (``mcp.client.sse.sse_client``, mcp 2.3.0)
against our server, started as a person would: ``backchannel run old_friends_server.py --http
--legacy-sse``.

The SDK's own examples (its URL-elicitation client among them) still connect to ``/sse``; the
guide has a server that keeps old clients keep the old endpoints. One SDK session runs every
step (``initialize``, tools, a call with progress and log lines, a question asked with
``elicitation/create`` and answered by POST); each test then checks one step.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from backchannel.testing import free_port, running_process
from peers.paths import have_pysdk

pytestmark = [pytest.mark.interop, pytest.mark.filterwarnings("ignore:The logging capability is deprecated")]

if not have_pysdk():
    pytest.skip("the official Python SDK (mcp==2.3.0) is not installed", allow_module_level=True)

import mcp_types as types  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.sse import sse_client  # noqa: E402

SERVER = Path(__file__).resolve().parent / "old_friends_server.py"
TIMEOUT = 60


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    port = free_port()
    argv = [sys.executable, "-m", "backchannel", "run", str(SERVER), "--http", "--port", str(port), "--legacy-sse"]
    with running_process(argv, port=port):
        yield f"http://127.0.0.1:{port}"


async def _session(base: str) -> dict[str, Any]:
    out: dict[str, Any] = {"progress": [], "logs": [], "questions": []}

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        out["logs"].append((params.level, params.data))

    async def on_question(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        out["questions"].append(params.message)
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        out["progress"].append((progress, total))

    async with (
        sse_client(f"{base}/sse") as (read, write),
        ClientSession(read, write, logging_callback=on_log, elicitation_callback=on_question) as session,
    ):
        init = await session.initialize()
        out["version"] = init.protocol_version
        out["server"] = (init.server_info.name, init.server_info.version)
        out["tools"] = sorted(tool.name for tool in (await session.list_tools()).tools)
        out["echo"] = (await session.call_tool("echo", {"text": "hi"})).content
        out["count"] = (await session.call_tool("count", {"steps": 3}, progress_callback=on_progress)).content
        out["ask"] = (await session.call_tool("ask_name", {})).content
        await session.set_logging_level("warning")
        out["quiet"] = (await session.call_tool("count", {"steps": 1})).content
        out["ping"] = await session.send_ping()
    return out


@pytest.fixture(scope="module")
def seen(base: str) -> dict[str, Any]:
    async def bounded() -> dict[str, Any]:
        async with asyncio.timeout(TIMEOUT):
            return await _session(base)

    return asyncio.run(bounded())


def test_the_sdk_client_connects_over_the_old_transport(seen: dict[str, Any]) -> None:
    assert seen["version"] == "2025-11-25"  # what the SDK asks for; the transport does not limit it
    assert seen["server"] == ("old-friends", "1.0.0")
    assert seen["tools"] == ["ask_name", "count", "echo"]


def test_calls_answer_on_the_stream(seen: dict[str, Any]) -> None:
    assert [block.text for block in seen["echo"]] == ["hi"]
    assert [block.text for block in seen["count"]] == ["counted 3"]
    assert seen["ping"] is not None


def test_progress_and_logs_reach_the_sdk_client(seen: dict[str, Any]) -> None:
    assert seen["progress"] == [(1, 3), (2, 3), (3, 3)]
    # Three info lines from the first count; none from the one after the level went to warning.
    assert seen["logs"] == [("info", "step 1"), ("info", "step 2"), ("info", "step 3")]
    assert [block.text for block in seen["quiet"]] == ["counted 1"]


def test_a_question_goes_out_on_the_stream_and_its_answer_comes_back_by_post(seen: dict[str, Any]) -> None:
    assert seen["questions"] == ["Who are you?"]
    assert [block.text for block in seen["ask"]] == ["hello Ada"]
