"""A server whose tool runs the spec's tool loop in sampling (``client/sampling.mdx``, "Sampling with Tools").

``forecast(city)`` offers the client's model a ``get_weather`` tool; when the model uses it, the
server answers each use with a ``tool_result`` and samples again with ``toolChoice: none``, as the
spec's multi-turn example does. ``capabilities`` reports what the client declared.
"""

from __future__ import annotations

from typing import Any

import msgspec

from backchannel import Context, Server
from backchannel.types.content import ToolUseContent

server = Server("sampler", "0.1.0")
WEATHER = {
    "name": "get_weather",
    "description": "Current weather for a city",
    "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


def _texts(content: Any) -> str:
    blocks = content if isinstance(content, list) else [content]
    return " ".join(getattr(block, "text", "") for block in blocks)


@server.tool()
async def forecast(city: str, ctx: Context) -> str:
    """Ask the client's model about the weather, with a tool to look it up."""
    question = {"role": "user", "content": {"type": "text", "text": f"What is the weather in {city}?"}}
    first = await ctx.sample([question], max_tokens=200, tools=[WEATHER], tool_choice="auto")
    blocks = first.content if isinstance(first.content, list) else [first.content]
    uses = [block for block in blocks if isinstance(block, ToolUseContent)]
    if not uses:
        return f"{first.model} without tools: {_texts(first.content)}"
    results = [
        {"type": "tool_result", "toolUseId": use.id, "content": [{"type": "text", "text": f"{use.input['city']}: 18C"}]}
        for use in uses
    ]
    used = {"role": "assistant", "content": msgspec.to_builtins(blocks)}
    final = await ctx.sample(
        [question, used, {"role": "user", "content": results}], max_tokens=200, tools=[WEATHER], tool_choice="none"
    )
    return f"{final.model} after {len(uses)} tool use(s): {_texts(final.content)}"


@server.tool()
def capabilities(ctx: Context) -> dict[str, Any]:
    """What the client declared."""
    return dict(ctx.client_capabilities or {})


if __name__ == "__main__":
    server.run()
