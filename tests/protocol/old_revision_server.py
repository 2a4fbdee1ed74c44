"""A server that uses every optional field a newer revision added, for the old-revision wire
tests (``test_old_revision_fields.py``): run it (``python old_revision_server.py`` serves stdio)
or ``build()`` it in-process.

* ``weather(city)``: a structured result (``outputSchema``, ``structuredContent``), with a
  title, annotations, icons and ``_meta``.
* ``made()``: a ``CallToolResult`` made by hand with ``structuredContent`` and no content.
* ``count(steps)``: a progress notification with a message per step.
* a prompt with a title and an argument completer (so ``completions`` is declared); a
  resource and a template with a title, icons and ``lastModified`` annotations.
* the server has a title and a website.
"""

from __future__ import annotations

from dataclasses import dataclass

from backchannel import Context, Server
from backchannel.types.tools import CallToolResult

ICONS = [{"src": "https://example.com/icon.png", "mimeType": "image/png"}]
ANNOTATIONS = {"audience": ["user"], "priority": 0.5, "lastModified": "2025-01-12T15:00:58Z"}


@dataclass
class Weather:
    city: str
    temperature: float


def build() -> Server:
    server = Server("rich", "1.0.0", title="Rich server", website_url="https://example.com")

    @server.tool(
        title="Weather",
        annotations={"readOnlyHint": True},
        icons=ICONS,
        meta={"com.example/kind": "forecast"},
    )
    def weather(city: str) -> Weather:
        """The weather in a city."""
        return Weather(city, 14.0)

    @server.tool()
    def made() -> CallToolResult:
        return CallToolResult(content=[], structured_content={"made": "by hand"})

    @server.tool(structured_output=False)
    async def count(steps: int, ctx: Context) -> str:
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step} of {steps}")
        return f"counted {steps}"

    @server.prompt(title="Greeting", icons=ICONS, completers={"name": ["Ada", "Alan"]})
    def greet(name: str) -> str:
        return f"Hello {name}"

    @server.resource("demo://readme", title="Read me", icons=ICONS, annotations=ANNOTATIONS, meta={"k": 1})
    def readme() -> str:
        return "read me"

    @server.resource("demo://notes/{name}", title="A note", icons=ICONS, annotations=ANNOTATIONS)
    def note(name: str) -> str:
        return f"note {name}"

    return server


server = build()

if __name__ == "__main__":
    server.run()
