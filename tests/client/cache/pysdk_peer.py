"""A stdio server built with the official Python SDK (``mcp==2.3.0``) for the cache and listen tests.

Run it as ``python tests/client/cache/pysdk_peer.py``; it serves both eras (the SDK decides per
connection). Every ``tools/list`` and ``resources/read`` result carries the SDK's cache hints
(``ttlMs`` 60000, ``cacheScope`` public) in the stateless era, and each read says how many reads
the server has answered (``read #N``), so a test sees from the text alone whether a read reached
the server. ``res://asks`` asks the client's name first (an ``InputRequiredResult`` in the
stateless era: the multi round-trip a cache must never keep).

Tools: ``touch(uri)`` announces that ``uri`` changed (``subscriptions/listen`` streams, and
in the handshake era a session that sent ``resources/subscribe`` for it); ``grow()`` adds a
tool and announces the tools list changed.
"""

from __future__ import annotations

from typing import Any

from mcp.server.caching import CacheHint
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import (
    ElicitRequest,
    ElicitRequestFormParams,
    EmptyResult,
    InputRequiredResult,
    ReadResourceRequestParams,
    ReadResourceResult,
    SubscribeRequestParams,
    TextResourceContents,
    UnsubscribeRequestParams,
)

HINT = CacheHint(ttl_ms=60_000, scope="public")
server: MCPServer[Any] = MCPServer(
    "pysdk-cached", version="2.3.0-peer", log_level="WARNING", cache_hints={"tools/list": HINT, "resources/read": HINT}
)
reads = 0
subscribed: set[str] = set()


@server.resource("res://plain", name="plain")
def plain() -> str:
    return "listed only: reads are answered by read_resource below"


@server.tool(description="Announce that a resource changed.")
async def touch(uri: str, ctx: Context) -> str:
    await ctx.notify_resource_updated(uri)  # subscriptions/listen streams (2026-07-28)
    if uri in subscribed:
        await ctx.session.send_resource_updated(uri)  # resources/subscribe (handshake era)
    return f"touched {uri}"


@server.tool(description="Add a tool and announce the tools list changed.")
async def grow(ctx: Context) -> str:
    name = f"grown_{len(await server.list_tools())}"
    server.add_tool(lambda: name, name=name)
    await ctx.notify_tools_changed()
    if ctx.protocol_version != "2026-07-28":
        await ctx.session.send_tool_list_changed()
    return name


async def read_resource(ctx: Any, params: ReadResourceRequestParams) -> ReadResourceResult | InputRequiredResult:
    global reads
    who = ""
    if params.uri == "res://asks" and ctx.protocol_version == "2026-07-28":
        if not params.input_responses:
            form = ElicitRequestFormParams(
                message="Who is reading?",
                requested_schema={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
            )
            return InputRequiredResult(input_requests={"who": ElicitRequest(params=form)}, request_state="asked")
        answer = params.input_responses["who"]
        who = f" for {getattr(answer, 'content', None) or {}}"
    reads += 1
    return ReadResourceResult(contents=[TextResourceContents(uri=params.uri, text=f"read #{reads}{who}")])


async def subscribe(ctx: Any, params: SubscribeRequestParams) -> EmptyResult:
    subscribed.add(params.uri)
    return EmptyResult()


async def unsubscribe(ctx: Any, params: UnsubscribeRequestParams) -> EmptyResult:
    subscribed.discard(params.uri)
    return EmptyResult()


low = server._lowlevel_server
low.add_request_handler("resources/read", ReadResourceRequestParams, read_resource)
low.add_request_handler("resources/subscribe", SubscribeRequestParams, subscribe)
low.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, unsubscribe)

if __name__ == "__main__":
    server.run("stdio")
