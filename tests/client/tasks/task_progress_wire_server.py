"""A 2025-11-25 tasks server on raw JSON-RPC lines (stdio, no backchannel code) that reports a task's
progress on the creating request's token, and then once more after the task has ended.

    python tests/client/tasks/task_progress_wire_server.py

One tool, ``count`` (taskSupport ``optional``). A task-augmented call is answered with the task
(``working``), then progress 1 and 2 follow on the call's token. ``tasks/get`` says ``completed``
(and, unlike our server and the TypeScript SDK, no ``notifications/tasks/status`` is ever sent, so
the client learns of the end by polling alone). ``tasks/result`` first sends progress 3 on the
token, which breaks PG-15 on purpose (the client has seen the terminal status by then: it asks
for the result only once a poll said so), and then answers ``counted``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

NOW = "2025-11-25T10:00:00Z"
TASK = {"taskId": "task-1", "createdAt": NOW, "lastUpdatedAt": NOW, "ttl": None, "pollInterval": 10}


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def progress(token: Any, value: int) -> None:
    send({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": token, "progress": value}})


def main() -> None:
    token: Any = None
    for line in sys.stdin:
        message = json.loads(line)
        method, rid, params = message.get("method"), message.get("id"), message.get("params") or {}
        if rid is None or method is None:
            continue  # notifications and answers: nothing to do
        result: dict[str, Any]
        if method == "initialize":
            capabilities = {"tools": {}, "tasks": {"requests": {"tools": {"call": {}}}}}
            info = {"name": "task-progress-wire", "version": "1"}
            result = {"protocolVersion": "2025-11-25", "capabilities": capabilities, "serverInfo": info}
        elif method == "tools/list":
            schema = {"type": "object"}
            result = {"tools": [{"name": "count", "inputSchema": schema, "execution": {"taskSupport": "optional"}}]}
        elif method == "tools/call" and "task" in params:
            token = params["_meta"]["progressToken"]
            send({"jsonrpc": "2.0", "id": rid, "result": {"task": {**TASK, "status": "working"}}})
            progress(token, 1)
            progress(token, 2)
            continue
        elif method == "tasks/get":
            result = {**TASK, "status": "completed"}
        elif method == "tasks/result":
            progress(token, 3)
            related = {"io.modelcontextprotocol/related-task": {"taskId": TASK["taskId"]}}
            result = {"content": [{"type": "text", "text": "counted"}], "_meta": related}
        elif method == "ping":
            result = {}
        else:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"no {method}"}})
            continue
        send({"jsonrpc": "2.0", "id": rid, "result": result})


if __name__ == "__main__":
    main()
