"""``subscriptions/listen`` (2026-07-28 subscriptions.mdx): acknowledged first, only what was asked,
every notification tagged with the subscription id, and the stream ends when the client cancels."""

from __future__ import annotations

import asyncio
from typing import Any

from _server_harness import MODERN, run

from backchannel import Server
from backchannel.transports.memory import memory_pair
from backchannel.types import meta as M

ENVELOPE = {M.PROTOCOL_VERSION: MODERN, M.CLIENT_CAPABILITIES: {}}


def _server() -> Server:
    server = Server("listening")
    server.add_tool(lambda: "x", name="first")
    server.add_resource("res://watched", lambda: "v1")
    return server


async def _next_message(side: Any) -> dict[str, Any]:
    batch = await side.receive()
    assert batch, "the server closed the stream"
    (message,) = batch
    return message  # type: ignore[no-any-return]


def test_listen_acknowledges_then_streams_only_requested_notifications_with_the_id() -> None:
    server = _server()

    async def body() -> list[dict[str, Any]]:
        client, server_side = memory_pair()
        serving = asyncio.create_task(server.serve(server_side))
        filters = {"toolsListChanged": True, "resourceSubscriptions": ["res://watched"], "promptsListChanged": True}
        client.write([{"jsonrpc": "2.0", "id": "sub-1", "method": "subscriptions/listen",
                       "params": {"_meta": ENVELOPE, "notifications": filters}}])  # fmt: skip
        seen = [await _next_message(client)]
        server.add_tool(lambda: "y", name="second")
        server.add_prompt(lambda: "p", name="new_prompt")  # not honoured: the server had no prompts
        server.notify_resource_updated("res://other")  # not subscribed
        server.notify_resource_updated("res://watched")
        seen.append(await _next_message(client))
        seen.append(await _next_message(client))
        client.write([{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "sub-1"}}])
        await client.close()
        await serving
        return seen

    ack, tools_changed, updated = run(body)
    assert ack == {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {
            "_meta": {M.SUBSCRIPTION_ID: "sub-1"},
            "notifications": {"toolsListChanged": True, "resourceSubscriptions": ["res://watched"]},
        },
    }
    assert tools_changed == {
        "jsonrpc": "2.0",
        "method": "notifications/tools/list_changed",
        "params": {"_meta": {M.SUBSCRIPTION_ID: "sub-1"}},
    }
    assert updated["method"] == "notifications/resources/updated"
    assert updated["params"] == {"uri": "res://watched", "_meta": {M.SUBSCRIPTION_ID: "sub-1"}}


def test_cancelling_the_listen_request_ends_it_without_an_answer() -> None:
    server = _server()

    async def body() -> tuple[int, list[Any]]:
        client, server_side = memory_pair()
        serving = asyncio.create_task(server.serve(server_side))
        client.write([{"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen",
                       "params": {"_meta": ENVELOPE, "notifications": {"toolsListChanged": True}}}])  # fmt: skip
        await _next_message(client)
        client.write([{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}])
        # The cancellation was dispatched before this request was read, so it has landed by the reply.
        client.write([{"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": {"_meta": ENVELOPE}}])
        reply = await _next_message(client)
        listeners_after = len(server.subscriptions)
        server.add_tool(lambda: "y", name="after_cancel")
        client.write([{"jsonrpc": "2.0", "id": 9, "method": "ping", "params": {"_meta": ENVELOPE}}])
        after = await _next_message(client)
        assert after["id"] == 9  # no list_changed for the cancelled subscription came first
        await client.close()
        await serving
        return listeners_after, [reply]

    listeners, (reply,) = run(body)
    assert listeners == 0
    assert reply["id"] == 8  # no answer for 7 and no list_changed after it was cancelled


def test_listen_is_not_a_handshake_era_method() -> None:
    server = _server()

    async def body() -> dict[str, Any]:
        client, server_side = memory_pair()
        serving = asyncio.create_task(server.serve(server_side))
        init = {"protocolVersion": "2025-11-25", "capabilities": {}}
        client.write([{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}])
        await _next_message(client)
        client.write([{"jsonrpc": "2.0", "id": 2, "method": "subscriptions/listen", "params": {}}])
        reply = await _next_message(client)
        await client.close()
        await serving
        return reply

    assert run(body)["error"]["code"] == -32601
