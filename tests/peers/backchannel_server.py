"""A stdio MCP server built on ``backchannel.server.Server``, used as a test peer.

Run it as ``python tests/peers/backchannel_server.py [--page-size N]``. It exposes the same
surface as ``pysdk_server.py`` (same names and shapes) so ``pysdk_client.py`` can drive both:

* tools: ``echo(text) -> str`` (text content only), ``add(a, b) -> int`` (structured:
  ``{"result": a + b}``), ``weather(city) -> WeatherReport`` (structured object),
  ``fail(message)`` (raises ``ToolError`` -> ``isError: true``), and ``t00`` .. ``t24``
  (filler tools, each returns its own name).
* prompts: ``greet(name)`` and ``compare(left, right)``.
* resources: static ``res://hello`` (text) and template ``res://items/{id}``.

``--page-size N`` sets ``Server(page_size=N)`` for every list method (0 = one page).
``--http PORT`` serves Streamable HTTP on ``http://127.0.0.1:PORT/mcp`` (both eras) instead of stdio.
``--lifecycle`` adds the operation-lifecycle tools (issue #6; see ``add_lifecycle_tools``):
``slow_progress(steps, delay)``, ``chatty(tag)`` and ``lifecycle_status()``.
``--elicitation`` adds ``ask_project(reason)`` (issue #4; see ``add_elicitation_tools``).
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, Field

from backchannel.server import Context, Server
from backchannel.types.errors import ToolError

FILLER_TOOLS = [f"t{i:02d}" for i in range(25)]


class WeatherReport(BaseModel):
    city: str
    temperature_c: float = Field(description="Temperature in degrees Celsius")
    conditions: str
    humidity_pct: int


def _filler(name: str) -> Callable[[], str]:
    def filler() -> str:
        return name

    return filler


def build_server(page_size: int = 0) -> Server:
    server = Server("backchannel-peer", version="0.1.0-peer", page_size=page_size or None)

    @server.tool(description="Echo the text back.", structured_output=False)
    def echo(text: str) -> str:
        return text

    @server.tool(description="Add two integers.")
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool(description="A canned weather report (structured output from a pydantic model).")
    def weather(city: str) -> WeatherReport:
        return WeatherReport(city=city, temperature_c=21.5, conditions="sunny", humidity_pct=40)

    @server.tool(description="Always fails with the given message (isError result).", structured_output=False)
    def fail(message: str = "boom") -> str:
        raise ToolError(message)

    for tool_name in FILLER_TOOLS:
        server.add_tool(
            _filler(tool_name),
            name=tool_name,
            description=f"Filler tool {tool_name}.",
            structured_output=False,
        )

    @server.prompt(description="Greet someone by name.")
    def greet(name: str) -> str:
        return f"Hello, {name}!"

    @server.prompt(description="Compare two things.")
    def compare(left: str, right: str) -> str:
        return f"Compare {left} with {right}."

    @server.resource("res://hello", name="hello", description="A static greeting.", mime_type="text/plain")
    def hello() -> str:
        return "Hello, world!"

    @server.resource("res://items/{id}", name="item", description="An item by id.", mime_type="text/plain")
    def item(id: str) -> str:
        return f"item {id}"

    return server


LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def add_lifecycle_tools(server: Server) -> None:
    """Tools for progress, cancellation and logging:

    * ``slow_progress(steps=5, delay=0.05)``: ``steps`` progress notifications (``i`` of total
      ``steps``, message ``"step i/steps"``), ``delay`` seconds apart; answers ``"<steps> steps"``.
    * ``chatty(tag)``: one log message at each of the eight levels, data ``{"tag", "level"}``,
      logger ``"chatty"`` (the client's level decides which are sent).
    * ``lifecycle_status()``: once no ``slow_progress`` runs (waits up to 5 s), how many started,
      finished and were cancelled, and the server's tables apart from this request itself.
    """
    counts = {"started": 0, "finished": 0, "cancelled": 0, "running": 0}

    @server.tool(description="Report progress in steps, delay seconds apart.", structured_output=False)
    async def slow_progress(ctx: Context, steps: int = 5, delay: float = 0.05) -> str:
        counts["started"] += 1
        counts["running"] += 1
        try:
            for i in range(1, steps + 1):
                await asyncio.sleep(delay)
                await ctx.report_progress(i, total=steps, message=f"step {i}/{steps}")
        except asyncio.CancelledError:
            counts["cancelled"] += 1
            raise
        finally:
            counts["running"] -= 1
        counts["finished"] += 1
        return f"{steps} steps"

    @server.tool(description="Log once at each of the eight levels.", structured_output=False)
    async def chatty(tag: str, ctx: Context) -> str:
        for level in LOG_LEVELS:
            await ctx.log(level, {"tag": tag, "level": level}, logger="chatty")
        return tag

    @server.tool(description="Counts of slow_progress calls and the server's own tables.")
    async def lifecycle_status(ctx: Context) -> dict[str, Any]:
        for _ in range(500):
            if counts["running"] == 0:
                break
            await asyncio.sleep(0.01)
        connection = ctx.connection
        return {
            **counts,
            "active_handlers": connection.active_handlers - 1,
            "pending_inbound": connection.session.pending_inbound - 1,
            "pending_outbound": connection.session.pending_outbound,
            "active_progress_tokens": connection.session.active_progress_tokens,
        }


class ProjectForm(BaseModel):
    """The form ``ask_project`` sends: one required field, two with defaults."""

    name: str = Field(description="Project name", min_length=1)
    language: Literal["python", "typescript", "go"] = "python"
    stars: int = Field(default=0, ge=0, description="GitHub stars")


def add_elicitation_tools(server: Server) -> None:
    """``ask_project(reason="setup")``: asks the person for ``ProjectForm`` with ``ctx.elicit``
    (``elicitation/create`` in the handshake era, an ``InputRequiredResult`` in the stateless
    era) and answers ``"accept: <name> (<language>, <stars> stars)"``, ``"decline"`` or
    ``"cancel"``. Without the client's ``elicitation`` capability it fails with -32021."""

    @server.tool(description="Ask the user about their project.", elicits=[ProjectForm], structured_output=False)
    async def ask_project(ctx: Context, reason: str = "setup") -> str:
        answer = await ctx.elicit(f"Tell me about your project ({reason})", ProjectForm)
        if answer.data is None:
            return answer.action
        return f"accept: {answer.data.name} ({answer.data.language}, {answer.data.stars} stars)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--page-size", type=int, default=0, help="page size of every list (0 = one page)")
    parser.add_argument("--lifecycle", action="store_true", help="add the progress/cancellation/logging tools")
    parser.add_argument("--http", type=int, metavar="PORT", default=None, help="serve HTTP on 127.0.0.1:PORT")
    parser.add_argument("--elicitation", action="store_true", help="add the ask_project elicitation tool")
    ns = parser.parse_args()
    server = build_server(ns.page_size)
    if ns.lifecycle:
        add_lifecycle_tools(server)
    if ns.elicitation:
        add_elicitation_tools(server)
    if ns.http is not None:
        server.run_http("127.0.0.1", ns.http)
    else:
        server.run()


if __name__ == "__main__":
    main()
