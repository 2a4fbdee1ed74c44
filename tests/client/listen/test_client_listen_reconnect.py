"""``client.listen`` opens a broken stream again by itself, over real Streamable HTTP (uvicorn, loopback).

A small ASGI layer in front of our server breaks one stream on the test's word, the way a network
or a proxy would, while the server stays up:

- ``ended``: the stream of the first ``subscriptions/listen`` ends without its answer (2026-07-28
  subscriptions.mdx, "Graceful Closure": a close without the response is an unexpected disconnect,
  which the client MAY take as a trigger to reconnect);
- ``cut``: the connection under that stream is dropped mid-response;
- ``get``: the handshake era's GET stream is dropped; the transport resumes it (``Last-Event-ID``)
  and the server's ``resources/subscribe`` still holds, so the iterator goes on unaware.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from backchannel import Client, Server
from backchannel.client import RetryOptions
from backchannel.client.events import ListChanged, ResourceUpdated, Resubscribed
from backchannel.testing import run, serve_on_loopback, within

WAIT = 10.0
FAST = RetryOptions(listen_backoff=0.05)


class Breaker:
    """ASGI in front of ``app``: ``brake.set()`` breaks the first stream of ``kind`` (see the module)."""

    def __init__(self, app: Any, kind: str) -> None:
        self.app = app
        self.kind = kind
        self.brake = asyncio.Event()
        self.listens = 0
        self.tools_lists = 0
        self.gets = 0
        self._broken = False
        self.serving: asyncio.Task[None] | None = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body = b""
        self.gets += scope["method"] == "GET"
        if scope["method"] == "POST":
            message = await receive()
            body = message.get("body", b"")
            while message.get("more_body"):
                message = await receive()
                body += message.get("body", b"")
            self.listens += b'"subscriptions/listen"' in body
            self.tools_lists += b'"tools/list"' in body
        target = b'"subscriptions/listen"' in body if self.kind != "get" else scope["method"] == "GET"
        if self._broken or not target:
            await self.app(scope, _replaying(body, receive) if body else receive, send)
            return
        self._broken = True
        left = asyncio.Event()

        async def app_receive() -> dict[str, Any]:
            if body and not hasattr(app_receive, "done"):
                app_receive.done = True  # type: ignore[attr-defined]
                return {"type": "http.request", "body": body, "more_body": False}
            await left.wait()
            return {"type": "http.disconnect"}

        async def app_send(message: dict[str, Any]) -> None:
            if not left.is_set():
                await send(message)

        self.serving = asyncio.create_task(self.app(scope, app_receive, app_send))  # the server goes on
        await self.brake.wait()
        left.set()  # from now on the server's writes go nowhere, and it hears that the client left
        if self.kind != "ended":
            raise ConnectionResetError("cut by the test")  # uvicorn drops the connection mid-response
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def _replaying(body: bytes, receive: Any) -> Any:
    sent = False

    async def again() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()  # type: ignore[no-any-return]

    return again


@contextlib.asynccontextmanager
async def _served(server: Server, kind: str) -> AsyncIterator[tuple[str, Breaker]]:
    app = server.http_app()
    breaker = Breaker(app, kind)
    try:
        async with serve_on_loopback(breaker) as base:
            yield base + "/mcp", breaker
    finally:
        if breaker.serving is not None:
            breaker.serving.cancel()
        await app.aclose()


def _server() -> Server:
    server = Server("flaky")
    server.add_tool(lambda: "x", name="first")
    server.add_resource("res://w", lambda: "w")
    return server


async def _keep_updating(server: Server, uri: str) -> None:
    while True:
        server.notify_resource_updated(uri)
        await asyncio.sleep(0.05)


async def _next(events: Any) -> Any:
    return await asyncio.wait_for(anext(aiter(events)), WAIT)


@pytest.mark.parametrize("kind", ["ended", "cut"])
def test_a_broken_listen_stream_is_opened_again_and_says_so(kind: str) -> None:
    server = _server()

    async def body() -> tuple[list[Any], int, int]:
        async with _served(server, kind) as (url, breaker), Client.http(url, era="stateless", retries=FAST) as client:
            await client.list_tools()  # cached for 60 s
            async with client.listen("res://w", tools=True) as events:
                breaker.brake.set()
                seen = [await _next(events)]
                # Changes made while the stream was down went unheard: the cached list went with them.
                listed = breaker.tools_lists
                await client.list_tools()
                refetched = breaker.tools_lists - listed
                server.notify_resource_updated("res://w")
                server.add_tool(lambda: "y", name="second")
                seen += [await _next(events), await _next(events)]
            return seen, breaker.listens, refetched

    seen, listens, refetched = run(body(), 30)
    assert seen == [Resubscribed(1), ResourceUpdated("res://w"), ListChanged("tools")]
    assert listens == 2
    assert refetched == 1


def test_the_handshake_get_stream_is_resumed_under_the_iterator() -> None:
    server = _server()

    async def body() -> tuple[Any, Any]:
        async with (
            _served(server, "get") as (url, breaker),
            Client.http(url, era="handshake") as client,
            client.listen("res://w") as events,
        ):
            server.notify_resource_updated("res://w")
            before = await _next(events)  # the GET stream carries it
            breaker.brake.set()  # the GET stream breaks; the transport opens it again
            await within(lambda: breaker.gets == 2, "the GET stream opened again")
            # What the server sends while no stream is open may be lost (the spec allows it): keep
            # telling until the iterator hears, which proves it outlived the break.
            telling = asyncio.create_task(_keep_updating(server, "res://w"))
            try:
                return before, await _next(events)
            finally:
                telling.cancel()

    assert run(body(), 30) == (ResourceUpdated("res://w"), ResourceUpdated("res://w"))
