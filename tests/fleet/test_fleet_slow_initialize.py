"""A handshake-era ``initialize`` that takes longer than the app's ``sse_after`` (a gateway's mounts
connect their upstreams first, which takes seconds) is still answered as plain JSON after the
session's record is written: the client's next request, on another worker, finds the session.

It used to be answered as an SSE stream begun before the answer, whose headers told the client
the session id before the record existed, so ``notifications/initialized`` on the next worker got
404 "session not found" and the first worker ended the session at its handshake timeout.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from _fleet import RoundRobin

from backchannel import Client, Server
from backchannel.state.shared import SharedState
from backchannel.testing import run, serve_on_loopback
from backchannel.types.versions import Era

SSE_AFTER = 0.05


class SlowToStart(Server):
    """A mounted server that takes a while to be ready, as a remote mount connecting does."""

    async def ready(self, declared: dict[str, Any] | None, era: Era | None = None) -> None:
        await asyncio.sleep(SSE_AFTER * 4)  # (the slowness under test, not a wait for something)


class Statuses:
    """An ASGI app around ``app`` that notes the status of each HTTP response it gives."""

    def __init__(self, app: Any, seen: list[int]) -> None:
        self.app = app
        self.seen = seen

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def noting(message: Any) -> None:
            if message["type"] == "http.response.start":
                self.seen.append(message["status"])
            await send(message)

        await self.app(scope, receive, noting)


def _worker(state: SharedState) -> Any:
    inner = SlowToStart("inner")

    @inner.tool()
    def hello() -> str:
        return "hello"

    gateway = Server("gateway", state=state)
    gateway.mount("in", inner)
    return gateway.http_app(sse_after=SSE_AFTER)


def test_a_slow_initialize_is_answered_after_the_record_is_written(new_state: Callable[[], SharedState]) -> None:
    async def body() -> None:
        statuses: list[int] = []
        apps = [_worker(new_state()) for _ in range(2)]
        balancer = RoundRobin(apps, serve=[Statuses(app, statuses) for app in apps])
        async with serve_on_loopback(balancer) as base, Client.http(base + "/mcp", era="handshake") as client:
            for _ in range(2):  # each on the next worker
                result = await client.call_tool("in_hello", {})
                assert result.content[0].text == "hello"  # type: ignore[union-attr]
        methods = [body.split(b'"method":"')[1].split(b'"')[0] for _, _, body in balancer.served if body]
        assert methods[:2] == [b"initialize", b"notifications/initialized"]  # on worker 0, then worker 1
        assert [worker for worker, _, _ in balancer.served[:2]] == [0, 1]
        assert 404 not in statuses, list(zip(methods, statuses, strict=False))  # every request found its session

    run(body, timeout=30)
