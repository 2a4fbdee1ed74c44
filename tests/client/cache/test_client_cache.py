"""The client's cache (2026-07-28 server/utilities/caching.mdx), counted on the wire.

Our server answers the stateless era's lists with ``ttlMs`` (``cache_ttl_ms``) and ``cacheScope``
(``cache_scope``, private by default). Each test counts the requests that reached the server
(a ``Tap`` on its end, or a count of the POSTs it was sent) and reads what the client returned.
"""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from backchannel import Client, RequestError, Server
from backchannel.client.cache import ClientCache, MemoryCache
from backchannel.client.events import ListChanged
from backchannel.testing import FakeClock, Tap, connected, run
from backchannel.types.versions import EraSpelling

ERA: EraSpelling = "stateless"


def _server(**options: Any) -> Server:
    server = Server("cached", **options)
    server.add_tool(lambda: "x", name="first")
    return server


def test_a_list_is_served_from_the_cache_while_fresh_then_fetched_again() -> None:
    """caching.mdx "Freshness Calculation": fresh while now < t_received + ttlMs, then re-fetched."""
    clock = FakeClock()
    tap = Tap()

    async def body() -> list[int]:
        seen = []
        async with connected(
            _server(cache_ttl_ms=5000), ERA, wrap_server=tap.around, cache=MemoryCache(clock=clock)
        ) as c:
            for advance in (0, 0, 4.999, 0.001, 0):
                clock.advance(advance)
                assert [tool.name for tool in await c.list_tools()] == ["first"]
                seen.append(len(tap.requests_received("tools/list")))
        return seen

    # Two from the cache, one more once 5 s have passed, then from the cache again.
    assert run(body) == [1, 1, 1, 2, 2]


def test_a_result_without_a_positive_ttl_is_never_cached() -> None:
    """caching.mdx: ttlMs 0 means immediately stale; so does an absent one (the handshake era sends none)."""

    async def body(era: EraSpelling, **options: Any) -> int:
        tap = Tap()
        async with connected(_server(**options), era, wrap_server=tap.around) as client:
            for _ in range(3):
                await client.list_tools()
        return len(tap.requests_received("tools/list"))

    assert run(body(ERA, cache_ttl_ms=0)) == 3
    assert run(body("handshake")) == 3
    assert run(body(ERA)) == 1  # the default: 60 s


def test_a_cached_list_is_dropped_when_list_changed_arrives() -> None:
    """caching.mdx "Interaction with Notifications": the notification invalidates a fresh entry at once."""
    server = _server()
    tap = Tap()

    async def body() -> tuple[list[str], list[str], int, int]:
        async with connected(server, ERA, wrap_server=tap.around) as client:
            before = [tool.name for tool in await client.list_tools()]
            async with client.listen(tools=True) as events:
                server.add_tool(lambda: "y", name="second")
                assert await anext(aiter(events)) == ListChanged("tools")
                after = [tool.name for tool in await client.list_tools()]
                again = len(tap.requests_received("tools/list"))
                await client.list_tools()
            return before, after, again, len(tap.requests_received("tools/list"))

    before, after, fetched, last = run(body)
    assert (before, after) == (["first"], ["first", "second"])
    assert fetched == 2  # the notification sent the client back to the server...
    assert last == 2  # ... and the new answer is cached in turn


def test_private_results_are_never_shared_across_principals_but_public_ones_are() -> None:
    """caching.mdx "Cache Scope Field": a shared store keys private entries by authorization context."""

    async def posts_for(scope: str, tokens: list[str], principals: list[str | None]) -> list[int]:
        server = _server(cache_scope=scope)
        app = server.http_app()
        lists: list[int] = []

        async def counting(scope_: Any, receive: Any, send: Any) -> None:
            if scope_["type"] == "http" and scope_["method"] == "POST":
                body = (await receive())["body"]
                if b'"tools/list"' in body:
                    lists.append(1)
                replay = iter([{"type": "http.request", "body": body, "more_body": False}])

                async def receive_again() -> dict[str, Any]:
                    return next(replay, None) or await receive()

                return await app(scope_, receive_again, send)
            return await app(scope_, receive, send)

        shared = MemoryCache()
        seen = []
        async with httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=counting), base_url="http://127.0.0.1"
        ) as http:
            for token, principal in zip(tokens, principals, strict=True):
                client = Client.http(
                    "http://127.0.0.1/mcp",
                    httpx_client=http,
                    headers={"Authorization": f"Bearer {token}"},
                    era=ERA,
                    cache=shared,
                    cache_principal=principal,
                )
                async with client:
                    assert [tool.name for tool in await client.list_tools()] == ["first"]
                seen.append(len(lists))
        await app.aclose()
        return seen

    # Private: another token is another authorization context; the same token is the same one.
    assert run(posts_for("private", ["alice", "bob", "alice", "bob"], [None] * 4)) == [1, 2, 2, 2]
    # Public: any client of that server may be served the entry.
    assert run(posts_for("public", ["alice", "bob"], [None, None])) == [1, 1]
    # A principal named by the caller wins over the tokens (say, two tokens of one user).
    assert run(posts_for("private", ["old", "new"], ["user-7", "user-7"])) == [1, 1]


def test_a_caller_can_turn_the_cache_off_or_skip_it_once() -> None:
    tap = Tap()

    async def body() -> tuple[int, int]:
        async with connected(_server(), ERA, wrap_server=tap.around, cache=None) as client:
            await client.list_tools()
            await client.list_tools()
        off = len(tap.requests_received("tools/list"))
        async with connected(_server(), ERA, wrap_server=tap.around) as client:
            await client.request("tools/list")
            await client.request("tools/list", cached=False)
        return off, len(tap.requests_received("tools/list")) - off

    assert run(body) == (2, 2)


def test_an_answer_sent_for_before_a_drop_is_not_kept() -> None:
    """A notification that overtakes an answer: the answer may predate the change, so it is not kept."""
    store = MemoryCache()
    cache = ClientCache(store, server="s", principal="p", version=lambda: "2026-07-28")
    result = {"tools": [], "ttlMs": 60_000, "cacheScope": "public"}

    async def body() -> tuple[Any, Any]:
        stamp = cache.stamp()
        await cache.drop((("tools/list", None),))  # list_changed arrived while tools/list was on its way
        await cache.keep("tools/list", None, result, stamp)
        overtaken = await cache.fresh("tools/list", None)
        await cache.keep("tools/list", None, result, cache.stamp())
        return overtaken, await cache.fresh("tools/list", None)

    assert run(body) == (None, result)


def test_requests_carrying_retry_fields_neither_read_nor_fill_the_cache() -> None:
    """caching.mdx "Cache Key": requests carrying inputResponses or requestState MUST NOT be cached."""
    cache = ClientCache(MemoryCache(), server="s", principal="p", version=lambda: "2026-07-28")
    result = {"contents": [], "ttlMs": 60_000, "cacheScope": "public"}

    async def body() -> list[Any]:
        retried = {"uri": "res://a", "requestState": "opaque"}
        await cache.keep("resources/read", retried, result, cache.stamp())
        await cache.keep("resources/read", {"uri": "res://a"}, result, cache.stamp())
        return [await cache.fresh("resources/read", retried), await cache.fresh("resources/read", {"uri": "res://a"})]

    assert run(body) == [None, result]


def test_a_failed_page_drops_every_cached_page_of_that_list() -> None:
    """caching.mdx "Interaction with Pagination": each page is cached by its cursor; a cursor the server
    refuses may mean every cached page is void, so the client drops them and starts again."""
    server = _server(page_size=1)
    server.add_tool(lambda: "y", name="second")
    tap = Tap()

    async def body() -> list[int]:
        counts = []
        async with connected(server, ERA, wrap_server=tap.around) as client:
            for _ in range(2):
                assert [tool.name for tool in await client.list_tools()] == ["first", "second"]
                counts.append(len(tap.requests_received("tools/list")))
            with pytest.raises(RequestError):
                await client.list_tools_page("not-a-cursor-of-ours")
            counts.append(len(tap.requests_received("tools/list")))
            await client.list_tools()
            counts.append(len(tap.requests_received("tools/list")))
        return counts

    # Two pages, then both from the cache; the refused cursor; then both pages from the server again.
    assert run(body) == [2, 2, 3, 5]
