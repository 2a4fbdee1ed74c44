"""An upstream for the bridge's tests: a backchannel server over stdio whose tools use every part
of the reverse channel and the lifecycle (a form, a URL flow, sampling, roots, progress, logs, a
call that waits to be cancelled).

    python tests/bridge/upstream_server.py [--versions handshake|stateless|all]
"""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import dataclass

from backchannel import Context, Server
from backchannel.types.errors import MCPError
from backchannel.types.versions import HANDSHAKE_VERSIONS, STATELESS_VERSIONS, VERSIONS


@dataclass
class Person:
    name: str
    happy: bool = True


def build(versions: tuple[str, ...]) -> Server:
    server = Server("bridge-upstream", "1.0.0", versions=versions, instructions="the bridge's test upstream")
    cancelled: list[str] = []

    @server.tool()
    async def ask(ctx: Context) -> str:
        """Ask the person their name (a form)."""
        answer = await ctx.elicit("Who are you?", Person)
        return f"{answer.action}:{answer.data.name if answer.data else ''}"

    @server.tool()
    async def ask_twice(ctx: Context) -> str:
        """Two forms, one after the other."""
        first = await ctx.elicit("First?", Person, key="first")
        second = await ctx.elicit("Second?", Person, key="second")
        return f"{first.data.name if first.data else '-'}+{second.data.name if second.data else '-'}"

    @server.tool()
    async def sample(ctx: Context, prompt: str) -> str:
        """Ask the client's model."""
        reply = await ctx.sample(prompt, max_tokens=20)
        content = reply.content[0] if isinstance(reply.content, list) else reply.content
        return str(getattr(content, "text", ""))

    @server.tool()
    async def roots(ctx: Context) -> str:
        """The client's roots."""
        found = await ctx.list_roots()
        return ",".join(root.uri for root in found)

    @server.tool()
    async def progress(ctx: Context, steps: int = 3) -> str:
        """Report ``steps`` steps, then answer."""
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
        return "done"

    @server.tool()
    async def chatty(ctx: Context) -> str:
        """Log at every level."""
        for level in ("debug", "info", "warning", "error"):
            await ctx.log(level, f"a {level} message")
        return "logged"

    @server.tool()
    async def slow(ctx: Context) -> str:
        """Wait until cancelled (at most 60 s)."""
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.append(str(ctx.request_id))
            raise
        return "not cancelled"

    @server.tool()
    def cancellations() -> str:
        """The ids of the calls of ``slow`` that were cancelled."""
        return ",".join(cancelled)

    @server.tool(task="optional")
    async def job(ctx: Context, label: str) -> str:
        """Work that may run as a task, asking a form on the way."""
        answer = await ctx.elicit(f"Go on with {label}?", Person)
        return f"{label} by {answer.data.name if answer.data else '-'}"

    @server.tool()
    def refuse() -> str:
        """Fail with an error of the server's own code and data."""
        raise MCPError("refused on purpose", code=-32099, data={"why": "a test"})

    @server.tool()
    def echo(text: str) -> str:
        """``text`` back."""
        return text

    @server.resource("memo://note", mime_type="text/plain")
    def note() -> str:
        return "a note"

    @server.prompt()
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello {name}"

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--versions", choices=("handshake", "stateless", "all"), default="all")
    args = parser.parse_args()
    versions = {"handshake": HANDSHAKE_VERSIONS, "stateless": STATELESS_VERSIONS, "all": VERSIONS}[args.versions]
    build(tuple(versions)).run()


if __name__ == "__main__":
    main()
