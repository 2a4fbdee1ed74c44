"""The server the fuzzer attacks: something behind every method, and no side effects.

Every route has something registered (tools of each argument shape, prompts and
templates with completers, static resources over more than one page) and every
server-to-client question is asked by some tool (elicitation, roots, sampling),
so fuzzed frames reach each place a wire value is read. Nothing touches the
network or the filesystem: the default roots are an empty list.

Run as ``python tests/fuzz/fuzz_server.py`` (stdio); ``FUZZ_MAX_LINE_BYTES`` sets
the largest inbound line (default 1 MiB, so that oversized lines are cheap to send).
``make_server()`` gives a fresh instance for in-process tests.
"""

from __future__ import annotations

__all__ = ["make_server"]

import os
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from backchannel.server import Server
from backchannel.server.completion import Complete
from backchannel.server.context import Context

Level = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
FRUITS = ["apple", "apricot", "banana", "blueberry", "cherry", "date", "fig", "grape"]


@dataclass
class Person:
    name: str
    age: int


def make_server() -> Server:
    # Short waits: a fuzzed client that never answers a question must not hold a call for long.
    # No completion rate limit: the fuzzer sends thousands of completion frames to check how each is
    # read, and a limit (tested on its own in tests/completion) would answer most of them -31429.
    server = Server(
        "fuzz-fixture",
        "1.0.0",
        page_size=2,
        log_level="debug",
        elicitation_timeout=2.0,
        default_roots=[],
        completion_rate=None,
    )

    @server.tool()
    def echo(text: str) -> str:
        """Return ``text`` unchanged."""
        return text

    @server.tool()
    def add(a: int, b: int) -> int:
        """The sum of two integers."""
        return a + b

    @server.tool()
    def shapes(items: list[int], table: dict[str, float], flag: bool = False, pick: Literal["x", "y"] = "x") -> str:
        """Arguments of every JSON shape."""
        return f"{len(items)} {len(table)} {flag} {pick}"

    @server.tool()
    async def chatty(ctx: Context, level: Level = "info", steps: Annotated[int, "at most 5"] = 2) -> str:
        """Logs at ``level`` and reports progress ``steps`` times."""
        count = max(0, min(steps, 5))
        for step in range(count):
            await ctx.log(level, {"step": step, "of": count})
            await ctx.report_progress(step + 1, count)
        return f"{count} steps"

    @server.tool()
    async def ask(ctx: Context) -> str:
        """Asks the person a form (either era)."""
        answer = await ctx.elicit("Who are you?", Person)
        return answer.action if answer.data is None else f"{answer.action} {answer.data.name}"

    @server.tool()
    async def roots(ctx: Context) -> str:
        """The client's roots."""
        found = await ctx.list_roots(refresh=True)
        return ",".join(item.uri for item in found)

    @server.tool()
    async def sample(ctx: Context) -> str:
        """One sampled message."""
        result = await ctx.sample("Say hello", max_tokens=5)
        return result.model

    @server.tool()
    async def several(ctx: Context) -> str:
        """Two questions in one round (stateless era)."""
        person, found = await ctx.gather(ctx.elicit("Who?", Person), ctx.list_roots())
        return f"{person.action} {len(found)}"

    @server.tool()
    async def once(ctx: Context) -> str:
        """Work remembered across rounds, then a question."""
        first = await ctx.once("stamp", lambda: "done")
        answer = await ctx.elicit("Confirm?", Person)
        return f"{first} {answer.action}"

    @server.prompt()
    def greet(name: Annotated[str, Complete(FRUITS)], style: str = "plain") -> str:
        """A greeting."""
        return f"Hello {name} ({style})"

    @server.prompt()
    async def confirm(ctx: Context, topic: str) -> str:
        """A prompt that asks first."""
        answer = await ctx.elicit(f"About {topic}?", Person)
        return f"{topic}: {answer.action}"

    def by_prefix(value: str, arguments: dict[str, str]) -> list[str]:
        return [fruit for fruit in FRUITS if fruit.startswith(value)]

    for letter in "abc":
        server.add_resource(
            f"fuzz://static/{letter}", lambda letter=letter: f"static {letter}", name=f"static-{letter}"
        )

    @server.resource("fuzz://items/{id}", completers={"id": by_prefix})
    def item(id: str) -> dict[str, Any]:
        return {"id": id}

    @server.resource("fuzz://files/{+path}")
    def file(path: str) -> str:
        return f"not a real file: {path}"

    @server.resource("fuzz://search{?q,limit}")
    def search(q: str = "", limit: str = "10") -> str:
        return f"{q}:{limit}"

    @server.resource("fuzz://asks/{topic}")
    async def asking(topic: str, ctx: Context) -> str:
        answer = await ctx.elicit(f"Read {topic}?", Person)
        return answer.action

    return server


if __name__ == "__main__":
    limit = int(os.environ.get("FUZZ_MAX_LINE_BYTES", str(1024 * 1024)))
    make_server().run(max_line_bytes=limit)
