"""Listing N tools a page at a time costs each page its page, not a copy of all N (``visible``).

The list routes page through one list of what the caller may see; without a principal that list
is kept until a tool (prompt, resource, template) is registered or withdrawn, so a client walking
10,000 tools in pages of 100 no longer makes the server copy 10,000 entries 100 times
(``benchmarks/run.py --curves``, the tools curve; ``docs/performance.md``). The pages must still
show every change at once.
"""

from __future__ import annotations

from typing import Any

from _server_harness import connected, run

from backchannel import Server
from backchannel.server.scopes import visible


def lookup(query: str) -> str:
    """Look the query up."""
    return query


def _server(count: int) -> Server:
    server = Server("pages", page_size=100)
    for i in range(count):
        server.add_tool(lookup, name=f"tool_{i:04d}", structured_output=False)
    return server


def test_the_list_is_made_once_per_change() -> None:
    server = _server(250)
    table, tools = server.registry.scopes, server.registry.tools
    first = visible(table, "tool", tools)
    assert visible(table, "tool", tools) is first  # the next page reads the same list
    server.add_tool(lookup, name="late", structured_output=False)
    after = visible(table, "tool", tools)
    assert after is not first and after[-1].name == "late"
    server.remove_tool("tool_0000")
    assert visible(table, "tool", tools)[0].name == "tool_0001"


def test_pages_show_every_change_on_the_wire() -> None:
    # The handshake era: a stateless-era client keeps a list for the ttlMs the server gave it.
    server = _server(250)

    table, tools = server.registry.scopes, server.registry.tools

    async def body() -> list[list[str]]:
        async with connected(server, "handshake") as (client, _):
            seen: list[list[str]] = []
            for change in (None, "again", "add", "remove"):
                kept = visible(table, "tool", tools)
                if change == "again":  # three pages, no change: all of them read one list
                    await client.list_tools()
                    assert visible(table, "tool", tools) is kept
                    continue
                if change == "add":
                    server.add_tool(lookup, name="added", structured_output=False)
                elif change == "remove":
                    server.remove_tool("tool_0100")
                listed: Any = await client.list_tools()
                seen.append([tool.name for tool in listed])
            return seen

    before, added, removed = run(body)
    assert before == [f"tool_{i:04d}" for i in range(250)]
    assert added == [*before, "added"]
    assert removed == [name for name in added if name != "tool_0100"]
