"""Decline memory (issue 12, item 11; the chapter's rule: after a decline, don't pop the same
form again in the session). The form is the tool and its schema; the memory is kept per
handshake-era session, and in the stateless era per stdio/memory connection and per
authenticated HTTP principal (an anonymous HTTP caller is always asked), for the server's
``decline_ttl``. Its store is the server's ``StateStore``, bounded per scope."""

from __future__ import annotations

from typing import Any

import httpx2 as httpx
import pytest
from _elicit_wire import run, session

from backchannel import Client, Context, Server
from backchannel.http_host.authenticator import BearerTokens
from backchannel.server.state import MemoryStore

FORM = {"type": "object", "properties": {"project": {"type": "string"}}, "required": ["project"]}
URL = "http://127.0.0.1/mcp"


class Clock:
    def __init__(self) -> None:
        self.now = 5_000.0

    def __call__(self) -> float:
        return self.now


def tracker(**options: Any) -> Server:
    server = Server("tracker", **options)

    @server.tool()
    async def file(item: str, ctx: Context) -> str:
        return (await ctx.elicit(f"Where should {item!r} be filed?", FORM)).action

    return server


class Person:
    """Declines every form; remembers which messages it was shown."""

    def __init__(self) -> None:
        self.shown: list[str] = []

    def __call__(self, params: dict[str, Any]) -> dict[str, Any]:
        self.shown.append(params["message"])
        return {"action": "decline"}


# ------------------------------------------------------------------ stateless era over HTTP


async def _file_over_http(app: Any, token: str | None, items: list[str]) -> list[str]:
    person = Person()
    headers = {"authorization": f"Bearer {token}"} if token else {}
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1", headers=headers)
    async with http, Client.http(URL, httpx_client=http, era="stateless", elicitation=person) as client:  # type: ignore[arg-type]
        for item in items:
            result = await client.call_tool("file", {"item": item})
            assert result.content[0].text == "decline"  # type: ignore[union-attr]
    return person.shown


def test_stateless_http_remembers_per_principal() -> None:
    async def body() -> None:
        app = tracker().http_app(authenticator=BearerTokens({"tok-a": "alice", "tok-b": "bob"}))
        assert await _file_over_http(app, "tok-a", ["First", "Second"]) == ["Where should 'First' be filed?"]
        # Alice again, on new connections: still remembered (it is hers, not a connection's).
        assert await _file_over_http(app, "tok-a", ["Third"]) == []
        # Bob is somebody else.
        assert await _file_over_http(app, "tok-b", ["Fourth"]) == ["Where should 'Fourth' be filed?"]
        await app.aclose()

    run(body)


def test_stateless_http_without_a_principal_remembers_nothing() -> None:
    """Anonymous callers are indistinguishable: one's decline must not silence another's form."""

    async def body() -> None:
        app = tracker().http_app()
        shown = await _file_over_http(app, None, ["First", "Second"])
        assert shown == ["Where should 'First' be filed?", "Where should 'Second' be filed?"]
        await app.aclose()

    run(body)


# ------------------------------------------------------------------ bounded in time, both eras


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_a_decline_is_remembered_for_decline_ttl(era: str) -> None:
    clock = Clock()
    person = Person()

    async def body() -> None:
        server = tracker(state=MemoryStore(clock=clock), decline_ttl=60.0)
        async with session(server, era, elicitation=person) as (client, _):
            await client.call_tool("file", {"item": "First"})
            clock.now += 59
            await client.call_tool("file", {"item": "Second"})
            assert len(person.shown) == 1
            clock.now += 2  # 61 s after the decline
            await client.call_tool("file", {"item": "Third"})
            assert person.shown == ["Where should 'First' be filed?", "Where should 'Third' be filed?"]

    run(body)


def test_the_memory_of_one_connection_is_bounded() -> None:
    from backchannel.server import elicitation

    async def body() -> None:
        server = Server("forms")

        @server.tool()
        async def ask(n: int, ctx: Context) -> str:
            schema = {"type": "object", "properties": {f"field{n}": {"type": "string"}}}
            return (await ctx.elicit("Fill in", schema)).action

        person = Person()
        async with session(server, "handshake", elicitation=person) as (client, _):
            for n in range(elicitation._DECLINES_KEPT + 1):
                await client.call_tool("ask", {"n": n})
            assert len(person.shown) == elicitation._DECLINES_KEPT + 1
            await client.call_tool("ask", {"n": 0})  # remembered
            await client.call_tool("ask", {"n": elicitation._DECLINES_KEPT})  # past the bound: asked again
            assert len(person.shown) == elicitation._DECLINES_KEPT + 2
        assert isinstance(server.state, MemoryStore)
        assert len(server.state) == elicitation._DECLINES_KEPT

    run(body, timeout=60)
