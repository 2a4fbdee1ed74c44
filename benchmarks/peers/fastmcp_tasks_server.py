"""The tasks addendum of the bench contract (``benchmarks/tasks.py``) on FastMCP with ``fastmcp-tasks``.

    PORT=8123 .venv-fastmcp-tasks/bin/python benchmarks/peers/fastmcp_tasks_server.py

Written as FastMCP's documentation shows: a ``task=`` tool and ``TasksExtension`` with the
in-memory Docket (``memory://``), served over Streamable HTTP at ``127.0.0.1:$PORT/mcp``.
It runs from ``.venv-fastmcp-tasks`` (``tests/peers/install-fastmcp-tasks.sh``).
"""

from __future__ import annotations

import asyncio
import os
from datetime import timedelta

import uvicorn
from fastmcp import FastMCP
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension

mcp = FastMCP("fastmcp-bench-tasks")
mcp.add_extension(TasksExtension(url="memory://"))


@mcp.tool(task=TaskConfig(mode="optional", poll_interval=timedelta(milliseconds=10)), output_schema=None)
async def work(ms: int) -> str:
    """Wait ``ms`` milliseconds, then answer."""
    if ms:
        await asyncio.sleep(ms / 1000)
    return "worked"


if __name__ == "__main__":
    uvicorn.run(mcp.http_app(), host="127.0.0.1", port=int(os.environ["PORT"]), log_level="warning")
