"""The server these tests serve over the deprecated HTTP+SSE transport (``backchannel run
tests/legacy_sse/old_friends_server.py --http --legacy-sse``, or ``build()`` in-process).

* ``echo(text)``: the text back.
* ``count(steps)``: a progress notification and an ``info`` log line per step, then ``"counted <steps>"``.
* ``ask_name()``: asks the person for a name (``ctx.elicit``); ``"hello <name>"``, or the action.
  In a session of a revision without elicitation (2024-11-05, 2025-03-26) it cannot ask, and
  says so: ``"cannot ask: <why>"``.
"""

from __future__ import annotations

from pydantic import BaseModel

from backchannel.server import Context, Server
from backchannel.types.errors import MissingCapability


class Name(BaseModel):
    name: str


def build() -> Server:
    server = Server("old-friends", "1.0.0")

    @server.tool(structured_output=False)
    def echo(text: str) -> str:
        return text

    @server.tool(structured_output=False)
    async def count(steps: int, ctx: Context) -> str:
        for step in range(1, steps + 1):
            await ctx.report_progress(step, total=steps)
            await ctx.info(f"step {step}")
        return f"counted {steps}"

    @server.tool(elicits=[Name], structured_output=False)
    async def ask_name(ctx: Context) -> str:
        try:
            answer = await ctx.elicit("Who are you?", Name)
        except MissingCapability as exc:
            return f"cannot ask: {exc.message}"
        return f"hello {answer.data.name}" if answer.data is not None else answer.action

    return server


server = build()
