"""Other implementations' clients driving our server's tasks, each in the era it has tasks in.

- FastMCP with ``fastmcp-tasks`` (SEP-2663, 2026-07-28 only), the one Python implementation:
  ``fastmcp_tasks_client.py`` in its own venv (``tests/peers/install-fastmcp-tasks.sh``).
- The official TypeScript SDK 1.32.2 (2025-11-25 experimental tasks only: it has no client for
  the extension): ``ts_tasks_client.mjs``, its ``client.experimental.tasks`` API.

(The official Python SDK 2.3.0 has no tasks client, in either era.)
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from _tasks_server import tasks_server

from backchannel.testing import run, serve_on_loopback
from peers.paths import NODE22, have_npm_peers

pytestmark = pytest.mark.interop
HERE = Path(__file__).resolve().parent
FASTMCP_PYTHON = HERE.parents[1] / ".venv-fastmcp-tasks" / "bin" / "python"


async def peer_output(argv: list[str]) -> dict[str, Any]:
    """Serve ``_tasks_server`` over HTTP, run the peer with the endpoint's URL, and read its JSON line."""
    async with serve_on_loopback(tasks_server().http_app()) as base:
        process = await asyncio.create_subprocess_exec(
            *argv, base + "/mcp", stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        out, err = await asyncio.wait_for(process.communicate(), 45)
    assert process.returncode == 0, err.decode()[-3000:]
    return json.loads(out.decode().strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.skipif(not FASTMCP_PYTHON.is_file(), reason="run tests/peers/install-fastmcp-tasks.sh")
def test_fastmcps_client_follows_answers_and_cancels_our_tasks() -> None:
    seen = run(peer_output([str(FASTMCP_PYTHON), str(HERE / "fastmcp_tasks_client.py")]), timeout=60)
    # call_tool polled the task to its end, answering its question through tasks/update.
    assert seen["transparent"] == ["fastmcp answered Question 1? @w0"]
    assert seen["handle_status"] == "working"
    assert seen["handle_after_cancel"] == "cancelled"
    assert seen["failed"] == "the service behind the tool is down"  # our failed task's inlined error


@pytest.mark.skipif(not have_npm_peers(), reason="run tests/peers/install.sh")
def test_the_typescript_sdks_client_streams_answers_cancels_and_lists_our_tasks() -> None:
    seen = run(peer_output([str(NODE22), str(HERE / "ts_tasks_client.mjs")]), timeout=60)
    assert seen["protocolVersion"] == "2025-11-25"
    task_id = seen["stream"]["taskId"]
    kinds = [item["type"] for item in seen["stream"]["seen"]]
    assert kinds[0] == "taskCreated" and kinds[-1] == "result"
    assert seen["stream"]["seen"][-1]["text"] == "ts answered Question 1?, ts answered Question 2? @w0"
    # Both questions reached its elicitation handler, tied to the task.
    assert seen["asked"] == [
        {"message": "Question 1?", "related": {"taskId": task_id}},
        {"message": "Question 2?", "related": {"taskId": task_id}},
    ]
    assert seen["cancelled"] == "cancelled" and seen["listed"] is True
    assert [item["type"] for item in seen["failed"]][-1] == "error"
