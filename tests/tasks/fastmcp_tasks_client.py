"""FastMCP's client with its tasks extension (``fastmcp-tasks``, SEP-2663) against our server.

    .venv-fastmcp-tasks/bin/python tests/tasks/fastmcp_tasks_client.py URL

Runs in that venv (``tests/peers/install-fastmcp-tasks.sh``). Calls ``_tasks_server``'s tools
as FastMCP's documentation shows and prints one JSON object of what it saw:

* ``transparent``: ``client.call_tool("steps", ...)``: FastMCP polls the task we return and
  answers its question through its ``elicitation_handler`` (``tasks/update``);
* ``handle``: ``call_tool_task(client, "hold")``, then ``cancel()`` and the status after;
* ``failed``: the message FastMCP raises for a task that failed with a JSON-RPC error.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import fastmcp_tasks  # noqa: F401 - importing it turns on the client's task support
from fastmcp import Client
from fastmcp.exceptions import ToolError
from fastmcp_tasks import call_tool_task


async def answer(message: str, response_type: Any, params: Any, context: Any) -> dict[str, Any]:
    return {"answer": f"fastmcp answered {message}"}


async def main(url: str) -> None:
    seen: dict[str, Any] = {}
    async with Client(url, elicitation_handler=answer) as client:
        result = await client.call_tool("steps", {"rounds": 1})
        seen["transparent"] = [block.text for block in result.content]
        task = await call_tool_task(client, "hold", {})
        seen["handle_status"] = (await task.status()).status
        await task.cancel()
        seen["handle_after_cancel"] = (await task.wait(timeout=10)).status
        try:
            await client.call_tool("protocol_error", {})
        except ToolError as exc:
            seen["failed"] = str(exc)
    print(json.dumps(seen))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
