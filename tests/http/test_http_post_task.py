"""A handshake-era POST and the request it carries, served as the runtime serves every request.

Driven as raw ASGI calls so every ``send`` across concurrent responses is visible: an
elicitation answered by another POST (202) ends the call's stream with its answer, a tool
runs in the context of the HTTP request that carried it, a cancelled call ends its stream.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
from typing import Any

import pytest

from backchannel.http_host.asgi import CLIENT_LEFT, TIMED_OUT, Mailbox
from backchannel.server import Context, Server

REQUEST_TAG: contextvars.ContextVar[str] = contextvars.ContextVar("request_tag", default="unset")
LEGACY = "2025-11-25"


def build() -> Server:
    server = Server("post-task")

    @server.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
        return f"hello {answer.data['name'] if answer.data else answer.action}"

    @server.tool()
    async def tagged() -> str:
        await asyncio.sleep(0)
        return REQUEST_TAG.get()

    return server


class Wire:
    """Calls an ASGI app the way a server would and logs every send, in order, across requests."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.log: list[tuple[str, dict[str, Any]]] = []
        self.session: str | None = None

    async def post(self, name: str, message: dict[str, Any], on_body: Any = None) -> dict[str, str]:
        headers = [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json")]
        headers.append((b"accept", b"application/json, text/event-stream"))
        if self.session is not None:
            headers += [(b"mcp-session-id", self.session.encode()), (b"mcp-protocol-version", LEGACY.encode())]
        scope = {"type": "http", "method": "POST", "path": "/mcp", "root_path": "", "headers": headers}
        body, done = json.dumps(message).encode(), asyncio.Event()
        sent = False

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await done.wait()
            return {"type": "http.disconnect"}

        started: dict[str, str] = {}

        async def send(event: dict[str, Any]) -> None:
            self.log.append((name, event))
            if event["type"] == "http.response.start":
                started.update({k.decode(): v.decode() for k, v in event["headers"]})
            elif on_body is not None:
                on_body(event.get("body", b""))

        await self.app(scope, receive, send)
        done.set()
        return started

    async def open(self) -> None:
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY,
                "capabilities": {"elicitation": {}},
                "clientInfo": {"name": "wire", "version": "0"},
            },
        }
        self.session = (await self.post("init", init))["mcp-session-id"]
        await self.post("initialized", {"jsonrpc": "2.0", "method": "notifications/initialized"})


def _messages(body: bytes) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in body.split(b"\n") if line.startswith(b"data: ") and line[6:].strip()]


def test_an_elicited_call_is_answered_on_its_stream_and_the_elicitation_answer_gets_202() -> None:
    async def body() -> None:
        app = build().http_app()
        wire = Wire(app)
        await wire.open()
        answering: list[asyncio.Task[dict[str, str]]] = []
        answers: list[str] = []

        def on_call_body(chunk: bytes) -> None:
            for message in _messages(chunk):
                if message.get("method") == "elicitation/create":
                    reply = {
                        "jsonrpc": "2.0",
                        "id": message["id"],
                        "result": {"action": "accept", "content": {"name": "ada"}},
                    }
                    answering.append(asyncio.ensure_future(wire.post("reply", reply)))
                elif "result" in message:
                    answers.append(message["result"]["content"][0]["text"])

        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ask", "arguments": {}}}
        await wire.post("call", call, on_call_body)
        await asyncio.gather(*answering)
        await app.aclose()
        assert answers == ["hello ada"]
        calls = [event for name, event in wire.log if name == "call"]
        assert calls[-1]["type"] == "http.response.body" and not calls[-1].get("more_body")  # the stream ended
        status = next(e["status"] for n, e in wire.log if n == "reply" and e["type"] == "http.response.start")
        assert status == 202

    asyncio.run(body())


def test_a_tool_runs_in_the_context_of_the_http_request_that_carried_it() -> None:
    # What ASGI middleware sets for a request (a trace id, a request-scoped logger) reaches the tool.
    async def body() -> None:
        inner = build().http_app()

        async def middleware(scope: Any, receive: Any, send: Any) -> None:
            token = REQUEST_TAG.set(f"request-{len(wire.log)}")
            try:
                await inner(scope, receive, send)
            finally:
                REQUEST_TAG.reset(token)

        wire = Wire(middleware)
        await wire.open()
        seen: list[str] = []

        def on_body(chunk: bytes) -> None:
            seen.extend(m["result"]["content"][0]["text"] for m in _messages(chunk) if "result" in m)
            if chunk.startswith(b"{"):
                seen.append(json.loads(chunk)["result"]["content"][0]["text"])

        tag = f"request-{len(wire.log)}"
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "tagged", "arguments": {}}}
        await wire.post("call", call, on_body)
        await inner.aclose()
        assert seen == [tag]
        assert REQUEST_TAG.get() == "unset"  # and nothing of the request's context leaks out of it

    asyncio.run(body())


def test_mailbox_gives_items_in_order_and_gone_on_timeout() -> None:
    async def body() -> None:
        box: Mailbox[int] = Mailbox()
        box.put(1)
        box.put(2)
        assert [await box.get(0.01), await box.get(0.01)] == [1, 2]
        assert await box.get(0.01) is TIMED_OUT  # nothing came in time
        later = asyncio.get_running_loop().call_later(0.01, box.put, 3)
        assert await box.get(1.0) == 3  # a waiting reader wakes for an item
        later.cancel()
        box.put(CLIENT_LEFT)
        assert await box.get() is CLIENT_LEFT

    asyncio.run(body())


@pytest.mark.parametrize("reply_too", [True, False], ids=["cancel-then-late-reply", "cancel-only"])
def test_a_cancelled_elicited_call_ends_its_stream_without_an_answer(reply_too: bool) -> None:
    async def body() -> None:
        app = build().http_app()
        wire = Wire(app)
        await wire.open()
        got: list[dict[str, Any]] = []
        posting: list[asyncio.Task[dict[str, str]]] = []

        def on_body(chunk: bytes) -> None:
            for message in _messages(chunk):
                got.append(message)
                if message.get("method") == "elicitation/create":
                    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
                    reply = {
                        "jsonrpc": "2.0",
                        "id": message["id"],
                        "result": {"action": "accept", "content": {"name": "x"}},
                    }
                    order = [cancel, reply] if reply_too else [cancel]
                    for index, out in enumerate(order):
                        posting.append(asyncio.ensure_future(wire.post(f"after-{index}", out)))

        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ask", "arguments": {}}}
        await asyncio.wait_for(wire.post("call", call, on_body), 5)
        await asyncio.gather(*posting)
        await app.aclose()
        assert [m.get("method") for m in got] == ["elicitation/create"]  # no answer after the cancellation
        ends = [e for n, e in wire.log if n == "call" and e["type"] == "http.response.body"]
        assert ends[-1].get("more_body") is False  # the response was ended, not left hanging

    asyncio.run(body())
