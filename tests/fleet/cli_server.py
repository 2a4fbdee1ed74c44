"""The server `backchannel run --http --redis URL --workers N` serves in ``test_fleet_cli.py``."""

from __future__ import annotations

import os

from backchannel import Context, Server

server = Server("fleet-cli")


@server.tool()
def whoami() -> str:
    """The pid of the worker process that ran this call."""
    return str(os.getpid())


@server.tool()
async def ask(ctx: Context) -> str:
    answer = await ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
    return f"{answer.action}:{(answer.data or {}).get('name', '')}@{os.getpid()}"
