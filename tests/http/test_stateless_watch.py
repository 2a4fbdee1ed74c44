"""When a stateless-era request watches for its client leaving (``http_host/stateless.py``).

A request answered within ``WATCH_AFTER`` never reads its connection past the body: no
watcher task is made for it (about 8% of the instructions a quick stateless call cost
its worker). That a client leaving a longer request still cancels it is
``test_http_modern.py``'s ``test_closing_the_response_cancels_the_request``.
"""

from __future__ import annotations

import asyncio
from collections.abc import MutableMapping
from typing import Any

import orjson
from _http_harness import call, modern, modern_headers, run

from backchannel import Context, Server
from backchannel.types import meta as M

ELICIT: dict[str, Any] = {M.CLIENT_CAPABILITIES: {"elicitation": {"form": {}}}}


class Exchange:
    """One POST through the app's ASGI interface: the body, then whatever the test lets through."""

    def __init__(self, message: dict[str, Any]) -> None:
        self.body = orjson.dumps(message)
        headers = modern_headers(message, host="127.0.0.1:8000")
        self.scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": "/mcp",
            "raw_path": b"/mcp",
            "root_path": "",
            "query_string": b"",
            "server": ("127.0.0.1", 8000),
            "client": ("127.0.0.1", 50000),
            "headers": [(name.encode(), value.encode()) for name, value in headers.items()],
        }
        self.reads = 0
        self.left = asyncio.Event()
        self.sent: list[MutableMapping[str, Any]] = []

    async def receive(self) -> dict[str, Any]:
        self.reads += 1
        if self.reads == 1:
            return {"type": "http.request", "body": self.body, "more_body": False}
        await self.left.wait()  # as a server does: nothing more until the client goes
        return {"type": "http.disconnect"}

    async def send(self, message: MutableMapping[str, Any]) -> None:
        self.sent.append(message)

    def answer(self) -> dict[str, Any]:
        body = b"".join(m.get("body", b"") for m in self.sent if m["type"] == "http.response.body")
        result: dict[str, Any] = orjson.loads(body)
        return result


def server() -> Server:
    server = Server("watch", "1.0", state_key=b"k" * 32)

    @server.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", {"type": "object", "properties": {"name": {"type": "string"}}})
        return f"hello {answer.data}"

    return server


def test_a_round_answered_at_once_reads_nothing_past_its_body() -> None:
    """The stateless ``ask``'s first round (an async handler that asks at once): its answer is
    out without a single read of the connection after the body."""

    async def body() -> None:
        app = server().http_app()
        exchange = Exchange(modern(call("ask", request_id="a"), **ELICIT))
        await app(exchange.scope, exchange.receive, exchange.send)
        assert exchange.sent[0]["status"] == 200
        result = exchange.answer()["result"]
        assert result["resultType"] == "input_required" and len(result["inputRequests"]) == 1
        assert exchange.reads == 1
        await app.aclose()

    run(body)
