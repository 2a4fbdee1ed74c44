"""Under Redis Cluster a script may touch only keys of one slot: every key the server keeps for a
caller (``ctx.once`` results, declined forms) carries the hash tag of the bucket counting it."""

from __future__ import annotations

import re
from typing import Any

from backchannel import Context, Server
from backchannel.server.state import MemoryStore
from backchannel.testing import connected, run

TAG = re.compile(r"\{([^}]+)\}")


def _server(store: MemoryStore) -> Server:
    server = Server("slots", state=store)

    @server.tool()
    async def deploy(ctx: Context) -> str:
        answer = await ctx.elicit("Deploy?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
        if answer.action != "accept":
            return answer.action
        return await ctx.once("deploy", lambda: "deployed")

    return server


def test_once_and_decline_keys_share_their_buckets_slot() -> None:
    store = MemoryStore()

    async def body() -> None:
        answers: list[dict[str, Any]] = [{"action": "accept", "content": {"ok": True}}, {"action": "decline"}]
        async with connected(_server(store), "stateless", elicitation=lambda p: answers.pop(0)) as client:
            assert (await client.call_tool("deploy", {})).content[0].text == "deployed"  # type: ignore[union-attr]
            assert (await client.call_tool("deploy", {})).content[0].text == "decline"  # type: ignore[union-attr]

    run(body)
    kinds = set()
    for key, entry in store._entries.items():
        assert entry.bucket is not None, key
        (key_tag,) = TAG.findall(key)
        (bucket_tag,) = TAG.findall(entry.bucket)
        assert key_tag == bucket_tag, (key, entry.bucket)
        kinds.add(key.split(":")[0])
    assert kinds == {"once", "decline"}
