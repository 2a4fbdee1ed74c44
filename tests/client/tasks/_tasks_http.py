"""``tasks_wire_server.WireServer`` over Streamable HTTP, in process (ASGI), stateless era only.

Each POST carries one request and gets its answer as JSON; the app keeps every POST's
headers beside its body, so a test reads what a load balancer would route on.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from tasks_wire_server import WireServer

from backchannel import Client

URL = "http://wire.test/mcp"


class WireHttpApp:
    def __init__(self, *, lazy: bool = False) -> None:
        #: (headers with lower-case names, JSON body) of every POST, in order.
        self.posts: list[tuple[dict[str, str], dict[str, Any]]] = []
        self._pending: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self.server = WireServer(10, self._deliver, lazy=lazy)

    def _deliver(self, message: dict[str, Any]) -> None:
        pending = self._pending.pop(message.get("id"), None)
        if pending is not None and not pending.done():
            pending.set_result(message)

    def posted(self, method: str) -> list[tuple[dict[str, str], dict[str, Any]]]:
        return [(headers, body) for headers, body in self.posts if body.get("method") == method]

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if scope["method"] != "POST":
            await _reply(send, 405, b"")
            return
        body = b""
        while True:
            event = await receive()
            body += event.get("body", b"")
            if not event.get("more_body"):
                break
        headers = {key.decode().lower(): value.decode() for key, value in scope["headers"]}
        message = json.loads(body)
        self.posts.append((headers, message))
        if "id" not in message or "method" not in message:
            await _reply(send, 202, b"")
            return
        answer = asyncio.get_running_loop().create_future()
        self._pending[message["id"]] = answer
        await self.server.handle(message)
        await _reply(send, 200, json.dumps(await answer).encode())


async def _reply(send: Any, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"application/json")] if body else []
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@asynccontextmanager
async def http_client(app: WireHttpApp, **options: Any) -> AsyncIterator[Client]:
    """A stateless-era ``Client`` of ``app`` through httpx2's ASGI transport (no socket)."""
    async with (
        httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app)) as http,
        Client.http(URL, httpx_client=http, era="stateless", **options) as client,
    ):
        yield client
