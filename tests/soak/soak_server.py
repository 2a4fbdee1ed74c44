"""The server the soak test (``test_soak_fleet.py``) serves with ``backchannel run --http --workers 2
--redis URL``: a good client's tools, and one that marks a file each time it runs, so the test can
tell that no request with a truncated body was ever run.

- ``echo(text)``: ``text``.
- ``ask()``: a form (one string, ``name``); ``"<action>:<name>"``.
- ``mark(tag)``: creates ``$SOAK_MARKS/<tag>`` (a request whose body never arrived must not run it).
- ``slow()``: a task-capable tool the attackers start tasks of.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from backchannel import Context, Server

server = Server("soak")
MARKS = Path(os.environ.get("SOAK_MARKS", "."))


@server.tool()
def echo(text: str) -> str:
    return text


@server.tool()
async def ask(ctx: Context) -> str:
    answer = await ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
    return f"{answer.action}:{(answer.data or {}).get('name', '')}"


@server.tool()
def mark(tag: str) -> str:
    (MARKS / tag).touch()
    return tag


@server.tool(task="optional")
async def slow() -> str:
    await asyncio.sleep(2)
    return "slow"
