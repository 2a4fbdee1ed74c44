"""``async for event in client.listen(...)`` against our own server, in both eras, read on the wire.

Stateless era (2026-07-28 basic/patterns/subscriptions.mdx): one ``subscriptions/listen`` request
per ``listen``, its filter in ``params.notifications``, demultiplexed by the subscription id the
server stamps on each notification; leaving ends it with ``notifications/cancelled`` (stdio and
memory). Handshake era (2025-11-25 server/resources.mdx, "Subscriptions"): ``resources/subscribe``
per URI, once however many listeners watch it, ``resources/unsubscribe`` when the last one leaves.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from backchannel import Client, Server
from backchannel.client.events import ListChanged, LogMessage, ResourceUpdated
from backchannel.server import Context
from backchannel.testing import Tap, connected, run, within
from backchannel.transports.memory import memory_pair
from backchannel.types.errors import ConnectionClosed
from backchannel.types.versions import EraSpelling

ERAS: list[EraSpelling] = ["stateless", "handshake"]
WAIT = 5.0


def _server() -> Server:
    server = Server("watched")
    server.add_tool(lambda: "x", name="first")
    server.add_resource("res://a", lambda: "a")
    server.add_resource("res://b", lambda: "b")

    @server.tool()
    async def chatty(ctx: Context) -> str:
        await ctx.info("one")
        await ctx.warning({"two": 2}, logger="db")
        return "done"

    return server


async def _next(events: Any) -> Any:
    return await asyncio.wait_for(anext(aiter(events)), WAIT)


@pytest.mark.parametrize("era", ERAS)
def test_listen_yields_what_changed_and_asks_the_server_as_its_era_says(era: EraSpelling) -> None:
    server = _server()
    tap = Tap()

    async def body() -> list[Any]:
        async with connected(server, era, wrap_server=tap.around) as client:
            async with client.listen("res://a", tools=True) as events:
                acknowledged = events.acknowledged
                server.notify_resource_updated("res://b")  # not watched
                server.notify_resource_updated("res://a")
                server.add_tool(lambda: "y", name="second")
                seen = [await _next(events), await _next(events)]
            return [acknowledged, *seen]

    acknowledged, *seen = run(body)
    assert acknowledged == {"toolsListChanged": True, "resourceSubscriptions": ["res://a"]}
    assert seen == [ResourceUpdated("res://a"), ListChanged("tools")]
    if era == "stateless":
        (listen,) = tap.requests_received("subscriptions/listen")
        assert listen["params"]["notifications"] == {"toolsListChanged": True, "resourceSubscriptions": ["res://a"]}
        cancelled = tap.notifications_received("notifications/cancelled")
        assert [c["params"]["requestId"] for c in cancelled] == [listen["id"]]  # leaving ended it
        assert not tap.requests_received("resources/subscribe")
    else:
        assert [r["params"] for r in tap.requests_received("resources/subscribe")] == [{"uri": "res://a"}]
        assert [r["params"] for r in tap.requests_received("resources/unsubscribe")] == [{"uri": "res://a"}]
        assert not tap.requests_received("subscriptions/listen")


def test_each_stateless_listen_hears_only_what_carries_its_subscription_id() -> None:
    """subscriptions.mdx "Multiple Concurrent Subscriptions": clients demultiplex by the subscription id."""
    server = _server()

    async def body() -> tuple[Any, Any, list[Any]]:
        async with (
            connected(server, "stateless") as client,
            client.listen(tools=True) as tools,
            client.listen("res://b") as resources,
        ):
            server.notify_resource_updated("res://b")
            server.add_tool(lambda: "y", name="second")
            heard = await _next(tools), await _next(resources)
            server.notify_resource_updated("res://b")
            # The tools listener heard no update of res://b: its next event is the next tools change.
            server.add_tool(lambda: "z", name="third")
            return *heard, [await _next(tools), await _next(resources)]

    tools, resources, more = run(body)
    assert (tools, resources) == (ListChanged("tools"), ResourceUpdated("res://b"))
    assert more == [ListChanged("tools"), ResourceUpdated("res://b")]


def test_two_handshake_listeners_of_one_uri_share_one_subscription() -> None:
    server = _server()
    tap = Tap()

    async def body() -> list[int]:
        counts = []
        async with connected(server, "handshake", wrap_server=tap.around) as client:
            first = client.listen("res://a")
            await first.start()
            async with client.listen("res://a") as second:
                counts.append(len(tap.requests_received("resources/subscribe")))
                await first.aclose()
                counts.append(len(tap.requests_received("resources/unsubscribe")))
                server.notify_resource_updated("res://a")
                assert await _next(second) == ResourceUpdated("res://a")  # still subscribed for the second
            counts.append(len(tap.requests_received("resources/unsubscribe")))
        return counts

    assert run(body) == [1, 0, 1]


@pytest.mark.parametrize("era", ERAS)
def test_leaving_a_bare_async_for_stops_listening(era: EraSpelling) -> None:
    server = _server()
    tap = Tap()

    async def body() -> int:
        async with connected(server, era, wrap_server=tap.around) as client:
            async for event in client.listen("res://a"):
                assert event == ResourceUpdated("res://a")
                break
            else:
                raise AssertionError("the loop ended without an event")
            await client.list_resources()  # a round trip: the stop has reached the server
            return len(server.subscriptions)

    def subscribed() -> bool:  # the server will send the update after what made the client listen
        if era == "stateless":
            return len(server.subscriptions) == 1
        asked = tap.requests_received("resources/subscribe")
        return bool(asked) and bool(tap.responses_written(asked[0]["id"]))

    async def updating() -> None:
        await within(subscribed, "the subscription")
        server.notify_resource_updated("res://a")

    async def both() -> int:
        notifier = asyncio.create_task(updating())
        listeners = await body()
        await notifier
        return listeners

    assert run(both) == 0
    stops = tap.notifications_received("notifications/cancelled") + tap.requests_received("resources/unsubscribe")
    assert len(stops) == 1


def test_log_messages_and_notifications_are_async_iterators_too() -> None:
    server = _server()

    async def body() -> tuple[list[Any], list[str]]:
        async with connected(server, "stateless") as client:
            await client.set_logging_level("info")
            async with client.log_messages() as logs, client.notifications("notifications/message") as raw:
                await client.call_tool("chatty")
                messages = [await _next(logs), await _next(logs)]
                methods = [(await _next(raw)).method, (await _next(raw)).method]
        return messages, methods

    messages, methods = run(body)
    assert messages == [LogMessage("info", None, "one"), LogMessage("warning", "db", {"two": 2})]
    assert methods == ["notifications/message", "notifications/message"]


def test_a_server_that_offers_no_subscriptions_acknowledges_none_and_is_not_asked() -> None:
    server = Server("no resources")
    server.add_tool(lambda: "x", name="first")
    tap = Tap()

    async def body() -> dict[str, Any] | None:
        async with (
            connected(server, "handshake", wrap_server=tap.around) as client,
            client.listen("res://a", tools=True) as events,
        ):
            return events.acknowledged

    assert run(body) == {"toolsListChanged": True}
    assert not tap.requests_received("resources/subscribe")


@pytest.mark.parametrize("era", ERAS)
def test_every_iterator_ends_with_connection_closed_when_the_server_goes_away(era: EraSpelling) -> None:
    server = _server()

    async def body() -> list[str]:
        client_side, server_side = memory_pair()
        serving = asyncio.create_task(server.serve(server_side))
        ended = []
        async with (
            Client(client_side, era=era) as client,
            client.listen("res://a") as events,
            client.log_messages() as logs,
        ):
            await server_side.close()  # the server's end goes away
            for stream in (events, logs):
                try:
                    await _next(stream)
                except ConnectionClosed:
                    ended.append("closed")
        serving.cancel()
        return ended

    assert run(body) == ["closed", "closed"]
