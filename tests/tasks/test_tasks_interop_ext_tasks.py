"""The official tasks client, ``@modelcontextprotocol/ext-tasks`` 0.2.2, driving our server's
2026-07-28 tasks (SEP-2663) through ``ext_tasks_client.mjs``.

A completed task inlines the tool's ``CallToolResult``, and a 2026-07-28 ``Result`` carries
``resultType`` (schema.ts ``Result``: "Servers implementing this protocol version MUST include
this field"); the package checks it, and refused every completed task of ours without it, a
tool's own error included (issue #27.3).
"""

from __future__ import annotations

import pytest
from test_tasks_interop import peer_output

from backchannel.testing import run
from peers.paths import NODE22, NODE_MODULES, have_npm_peers

pytestmark = pytest.mark.interop
EXT_TASKS = NODE_MODULES / "@modelcontextprotocol" / "ext-tasks" / "package.json"
DRIVER = str(NODE_MODULES.parent / "tasks" / "ext_tasks_client.mjs")


@pytest.mark.skipif(not (have_npm_peers() and EXT_TASKS.is_file()), reason="run tests/peers/install.sh")
def test_the_ext_tasks_client_accepts_our_completed_and_failed_tasks() -> None:
    seen = run(peer_output([str(NODE22), DRIVER]), timeout=60)
    assert seen["era"] == "modern"
    assert seen["quick"] == {
        "kind": "task",
        "status": "completed",
        "text": "done by ext-tasks",
        "isError": False,
        "resultType": "complete",
    }
    # A tool's own error completes the task (SEP-2663 §Task Status), with the result inlined.
    assert seen["tool_error"] == {
        "kind": "task",
        "status": "completed",
        "text": "the tool saw a problem",
        "isError": True,
        "resultType": "complete",
    }
    failed = {"kind": "task", "status": "failed", "error": "the service behind the tool is down"}
    assert seen["protocol_error"] == failed
