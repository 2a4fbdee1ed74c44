"""A small server that shows the basics: typed tools, structured output, progress, sampling, prompts,
resources, and the chapter's ``deploy_to_production`` story (roots, a form, URL-mode authorization, a
cancellable build: see ``examples/deploy_demo.py``).

Run it on stdio with ``backchannel run examples/demo_server.py``; ``backchannel demo`` connects to it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Annotated, Literal

from deploy_demo import add_deploy  # examples/deploy_demo.py, beside this file

from backchannel import Complete, Context, RequestError, Server, ToolError

server = Server(
    "demo", "0.1.0", instructions="A demo server: arithmetic, a weather report, a slow job and deploy_to_production."
)


@server.tool()
def add(a: int, b: Annotated[int, "the second number"] = 1) -> int:
    """Add two integers."""
    return a + b


@dataclass
class Report:
    city: str
    temperature: float
    unit: Literal["C", "F"]


@server.tool()
def weather(city: str, unit: Literal["C", "F"] = "C") -> Report:
    """Today's (made-up) weather for a city."""
    if not city.strip():
        raise ToolError("Tell me which city.")
    celsius = 10 + len(city) % 15
    return Report(city, celsius if unit == "C" else celsius * 9 / 5 + 32, unit)


@server.tool()
async def slow_count(to: int, ctx: Context) -> str:
    """Count slowly, reporting progress on the way."""
    for step in range(1, to + 1):
        await asyncio.sleep(0.05)
        await ctx.report_progress(step, to, f"counted {step}")
    return f"counted to {to}"


@server.tool()
async def haiku(topic: str, ctx: Context) -> str:
    """A haiku about a topic, written by the client's model (sampling): at the terminal, by you."""
    try:
        reply = await ctx.sample(
            f"Write a haiku about {topic}.",
            max_tokens=60,
            system_prompt="You are a poet who answers only in haiku.",
            model_preferences={"hints": [{"name": "claude"}], "intelligencePriority": 0.7, "speedPriority": 0.4},
            temperature=0.8,
        )
    except RequestError as exc:  # -1: the person refused (a handshake-era client says so; a stateless one just stops)
        raise ToolError(f"No haiku: the client answered {exc.message!r} ({exc.code}).") from None
    blocks = reply.content if isinstance(reply.content, list) else [reply.content]
    poem = "\n".join(getattr(block, "text", "") for block in blocks)
    return f"A haiku about {topic}, by {reply.model}:\n{poem}"


@server.prompt()
def code_review(
    code: str, language: Annotated[str, Complete(["python", "go", "rust", "typescript"])] = "python"
) -> str:
    """Ask for a careful review of a piece of code."""
    return f"Please review this {language} code for bugs and clarity:\n\n{code}"


@server.resource("demo://readme", mime_type="text/markdown")
def readme() -> str:
    return "# demo\nThis server exists to show backchannel's basics."


#: The cities the demo knows; ``read demo://cities/{name}`` completes them on Tab (any other name reads too).
CITIES = {
    "Amsterdam": "Netherlands",
    "Berlin": "Germany",
    "Lisbon": "Portugal",
    "London": "United Kingdom",
    "Madrid": "Spain",
    "Paris": "France",
    "Rome": "Italy",
    "Vienna": "Austria",
}


@server.resource("demo://cities/{name}")
def city(name: Annotated[str, Complete(list(CITIES))]) -> dict[str, str]:
    return {"name": name, "country": CITIES.get(name, "unknown")}


add_deploy(server)

if __name__ == "__main__":
    server.run()
