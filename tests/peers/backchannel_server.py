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
``--url-elicitation`` adds ``url_confirm``, ``url_connect``, ``url_gated`` and ``url_pages``
(issue #4, URL mode with no configuration; see ``add_url_elicitation_tools``).
``--rsc`` adds roots, sampling and completion (issue #5; see ``add_rsc_tools``): tools
``root_uris(refresh)`` and ``sample_text(prompt, max_tokens)``, prompt ``scaffold(language,
framework)`` and template ``rsc://packages/{package}`` with completable arguments.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from backchannel.server import Context, Server
from backchannel.server.completion import Complete
from backchannel.types.errors import ToolError

_OUR_HTTP = "backchannel.http_host.h1.connection"  # run_http's (and the loopback listener's) HTTP/1.1 server

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


class _InstantGrant:
    """A ``UrlFlowHandler`` whose "third party" answers at once: ``begin`` sends the browser
    straight to the callback; ``finish`` records that the principal is connected."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.connected: set[str | None] = set()

    async def begin(self, flow: Any) -> str:
        from backchannel.server.url_elicitation import UrlElicitations

        return f"{UrlElicitations.of(self.server).callback_url}?state={flow.state}&code=granted"

    async def finish(self, flow: Any, params: Any) -> None:
        self.connected.add(flow.owner)


def add_url_elicitation_tools(server: Server) -> None:
    """URL-mode elicitation with no configuration (the pages on a loopback side listener):

    * ``url_confirm()``: ``ctx.elicit_url`` with the confirmation page alone; answers the action.
    * ``url_connect()``: the page, then an instant "OAuth" grant via the callback; answers
      ``"<action>: connected"`` / ``"<action>: not connected"``.
    * ``url_gated()``: handshake era ``-32042`` (``via="error"``) until connected, then ``"ready"``.
    * ``url_pages()``: ``{"base_url", "listening", "http_stack"}`` (which of our HTTP server,
      uvicorn, httpx and starlette are imported), to check the listener starts only on demand.
    """
    connect_grant, gated_grant = _InstantGrant(server), _InstantGrant(server)

    @server.tool(description="Confirm something in the browser (URL elicitation).", structured_output=False)
    async def url_confirm(ctx: Context) -> str:
        return (await ctx.elicit_url("Confirm the test action in your browser.")).action

    @server.tool(description="Connect a test account in the browser (URL elicitation).", structured_output=False)
    async def url_connect(ctx: Context) -> str:
        outcome = await ctx.elicit_url("Connect your test account.", flow=connect_grant)
        return f"{outcome.action}: {'connected' if ctx.principal in connect_grant.connected else 'not connected'}"

    @server.tool(description="Needs a connected account (-32042 until then).", structured_output=False)
    async def url_gated(ctx: Context) -> str:
        if ctx.principal in gated_grant.connected:
            return "ready"
        outcome = await ctx.elicit_url("Connect your test account first.", flow=gated_grant, via="error")
        return f"{outcome.action}: {'ready' if ctx.principal in gated_grant.connected else 'not ready'}"

    @server.tool(description="Where the URL-elicitation pages are served.")
    def url_pages() -> dict[str, Any]:
        import sys

        flows = server.url_elicitations
        return {
            "base_url": flows.base_url if flows is not None else None,
            "listening": flows.listening if flows is not None else False,
            "http_stack": sorted(m for m in (_OUR_HTTP, "uvicorn", "httpx", "httpx2", "starlette") if m in sys.modules),
        }


RSC_LANGUAGES = ["python", "perl", "php", "go", "rust", "typescript"]
RSC_FRAMEWORKS = {
    "python": ["django", "flask", "fastapi", "falcon"],
    "go": ["gin", "echo", "fiber"],
    "rust": ["axum", "actix", "rocket"],
    "typescript": ["express", "nest", "next"],
}
#: 150 numbered packages and three more: a prefix matching over 100 gets 100 values and ``hasMore``.
RSC_PACKAGES = [f"pkg-{i:03d}" for i in range(150)] + ["numpy", "pandas", "pytest"]


def rsc_frameworks(value: str, arguments: dict[str, str]) -> list[str]:
    """The frameworks of ``arguments["language"]`` (none without it) that start with ``value``."""
    return [name for name in RSC_FRAMEWORKS.get(arguments.get("language", ""), []) if name.startswith(value)]


def add_rsc_tools(server: Server) -> None:
    """Roots, sampling and completion (issue #5):

    * ``root_uris(refresh=False)``: ``ctx.list_roots(refresh=)``, answered as structured
      ``{"uris": [...], "names": [...], "paths": [...], "from_client": bool}``.
    * ``sample_text(prompt, max_tokens=64)``: ``ctx.sample(prompt, max_tokens=,
      system_prompt="Be brief.")``, answered as ``{"text", "model", "stop_reason", "role"}``.
    * prompt ``scaffold(language, framework)``: ``language`` completes from ``RSC_LANGUAGES``
      (a static list), ``framework`` from ``RSC_FRAMEWORKS[context.arguments["language"]]``.
    * template ``rsc://packages/{package}``: ``package`` completes from ``RSC_PACKAGES``.
    * ``notifications_seen()``: the methods of the notifications that reached
      ``Server.handle_notification`` so far, in order, as ``{"methods": [...]}``.
    """
    seen: list[str] = []
    handle_notification = server.handle_notification

    def recording(notification: Any, connection: Any) -> Any:
        seen.append(notification.method)
        return handle_notification(notification, connection)

    server.handle_notification = recording  # type: ignore[method-assign]

    @server.tool(description="The methods of the notifications the server handled so far.")
    def notifications_seen() -> dict[str, Any]:
        return {"methods": list(seen)}

    @server.tool(description="The client's roots (ctx.list_roots).")
    async def root_uris(ctx: Context, refresh: bool = False) -> dict[str, Any]:
        roots = await ctx.list_roots(refresh=refresh)
        return {
            "uris": [item.uri for item in roots],
            "names": [item.name for item in roots],
            "paths": [str(item.path) if item.path is not None else None for item in roots],
            "from_client": roots.from_client,
        }

    @server.tool(description="Ask the client's model (ctx.sample) and return its text.")
    async def sample_text(ctx: Context, prompt: str, max_tokens: int = 64) -> dict[str, Any]:
        result = await ctx.sample(prompt, max_tokens=max_tokens, system_prompt="Be brief.")
        blocks = result.content if isinstance(result.content, list) else [result.content]
        text = "".join(getattr(block, "text", "") for block in blocks)
        return {"text": text, "model": result.model, "stop_reason": result.stop_reason, "role": result.role}

    @server.prompt(description="Scaffold a project in a language and framework.")
    def scaffold(
        language: Annotated[str, Complete(RSC_LANGUAGES)],
        framework: Annotated[str, Complete(rsc_frameworks)],
    ) -> str:
        return f"Scaffold a {language} project with {framework}."

    @server.resource("rsc://packages/{package}", name="package", description="A package by name.")
    def package(package: Annotated[str, Complete(RSC_PACKAGES)]) -> str:
        return f"package {package}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--page-size", type=int, default=0, help="page size of every list (0 = one page)")
    parser.add_argument("--lifecycle", action="store_true", help="add the progress/cancellation/logging tools")
    parser.add_argument("--http", type=int, metavar="PORT", default=None, help="serve HTTP on 127.0.0.1:PORT")
    parser.add_argument("--elicitation", action="store_true", help="add the ask_project elicitation tool")
    parser.add_argument("--url-elicitation", action="store_true", help="add the url_* URL-elicitation tools")
    parser.add_argument("--rsc", action="store_true", help="add the roots/sampling/completion tools and prompt")
    ns = parser.parse_args()
    server = build_server(ns.page_size)
    if ns.lifecycle:
        add_lifecycle_tools(server)
    if ns.elicitation:
        add_elicitation_tools(server)
    if ns.url_elicitation:
        add_url_elicitation_tools(server)
    if ns.rsc:
        add_rsc_tools(server)
    if ns.http is not None:
        server.run_http("127.0.0.1", ns.http)
    else:
        server.run()


if __name__ == "__main__":
    main()
