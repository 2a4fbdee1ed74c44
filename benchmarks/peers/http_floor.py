"""The HTTP floor: the bench contract's ``echo`` over Streamable HTTP with no framework.

    PORT=8123 python benchmarks/peers/http_floor.py     # http://127.0.0.1:8123/mcp

One ``asyncio.Protocol`` per connection, ``httptools`` parsing, ``orjson`` in and out, on uvloop when
it is installed, as ``run_http`` serves (``BACKCHANNEL_LOOP=asyncio`` picks asyncio's own loop for
both): what answering an echo POST costs in Python before any framework adds its
checks, routing and abstractions. It does what the wire needs and nothing more:

- a stateless-era request (2026-07-28: its ``_meta`` carries ``io.modelcontextprotocol/protocolVersion``)
  is answered on its own, with no session; its mirrored headers are not compared;
- ``initialize`` opens a handshake-era session (an id in a set, sent as ``Mcp-Session-Id``); a later
  POST names one (else 400) that exists (else 404);
- a notification or a response gets ``202``; ``tools/call`` of ``echo`` is answered as
  ``application/json``; any other request gets ``-32601``.

No Host, Origin, Accept or Content-Type check, no size or time limit, no SSE, no JSON-RPC envelope
check: a lower bound, not a server to use. Requests on a connection are answered in order, each as
soon as its body is complete, in the parser's callback; keep-alive as HTTP/1.1 says.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
from typing import Any

import httptools
import orjson

PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES = {"tools": {}, "prompts": {}, "completions": {}, "logging": {}}
SERVER_INFO = {"name": "http-floor", "version": "1.0.0"}

_JSON_HEAD = b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
_REASONS = {200: b"OK", 202: b"Accepted", 400: b"Bad Request", 404: b"Not Found", 405: b"Method Not Allowed"}


class Floor:
    """What every connection shares: the sessions opened so far."""

    def __init__(self) -> None:
        self.sessions: set[bytes] = set()
        self.serials = itertools.count(1)

    def answer(self, method: bytes, url: bytes, session: bytes | None, body: bytes) -> bytes:
        """The whole response (head and body) to one request."""
        if url != b"/mcp" or method != b"POST":
            return _response(405 if url == b"/mcp" else 404, b"")
        try:
            message = orjson.loads(body)
        except orjson.JSONDecodeError:
            return _error(400, None, -32700, "Parse error")
        if type(message) is not dict:
            return _error(400, None, -32600, "Invalid Request")
        request_id = message.get("id")
        name = message.get("method")
        if name is None or request_id is None:  # a notification, or an answer to a request of ours
            return _response(202, b"")
        params = message.get("params") or {}
        meta = params.get("_meta")
        if meta is None or PROTOCOL_VERSION_KEY not in meta:  # the handshake era: a session
            if name == "initialize":
                return self.initialize(request_id, params)
            if session is None:
                return _error(400, request_id, -32600, "Mcp-Session-Id header required")
            if session not in self.sessions:
                return _error(404, request_id, -32600, "session not found")
        if name == "tools/call" and params.get("name") == "echo":
            text = {"content": [{"type": "text", "text": params["arguments"]["text"]}]}
            return _response(200, orjson.dumps({"jsonrpc": "2.0", "id": request_id, "result": text}))
        return _error(200, request_id, -32601, f"Method not found: {name}")

    def initialize(self, request_id: Any, params: dict[str, Any]) -> bytes:
        session = b"floor-%d" % next(self.serials)
        self.sessions.add(session)
        result = {
            "protocolVersion": params.get("protocolVersion", "2025-11-25"),
            "capabilities": CAPABILITIES,
            "serverInfo": SERVER_INFO,
        }
        body = orjson.dumps({"jsonrpc": "2.0", "id": request_id, "result": result})
        return _JSON_HEAD % (200, b"OK", len(body)) + b"mcp-session-id: " + session + b"\r\n\r\n" + body


def _response(status: int, body: bytes) -> bytes:
    return _JSON_HEAD % (status, _REASONS[status], len(body)) + b"\r\n" + body


def _error(status: int, request_id: Any, code: int, message: str) -> bytes:
    error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return _response(status, orjson.dumps(error))


class Connection(asyncio.Protocol):
    """One client connection: httptools calls back, each complete request is answered at once."""

    def __init__(self, floor: Floor) -> None:
        self.floor = floor
        self.parser = httptools.HttpRequestParser(self)
        self.transport: asyncio.Transport | None = None
        self.url = b""
        self.session: bytes | None = None
        self.body: list[bytes] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            assert self.transport is not None
            self.transport.write(_error(400, None, -32600, "Bad Request"))
            self.transport.close()

    def on_message_begin(self) -> None:
        self.url = b""
        self.session = None
        self.body = []

    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        if len(name) == 14 and name.lower() == b"mcp-session-id":
            self.session = value

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        assert self.transport is not None
        body = self.body[0] if len(self.body) == 1 else b"".join(self.body)
        self.transport.write(self.floor.answer(self.parser.get_method(), self.url, self.session, body))
        if not self.parser.should_keep_alive():
            self.transport.close()


async def serve(port: int) -> None:
    loop = asyncio.get_running_loop()
    floor = Floor()
    server = await loop.create_server(lambda: Connection(floor), "127.0.0.1", port, backlog=1024)
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    async with server:
        await stop.wait()


def main() -> None:
    port = int(os.environ.get("PORT", "8000"))
    if os.environ.get("BACKCHANNEL_LOOP", "").strip().lower() != "asyncio":
        try:
            import uvloop
        except ImportError:
            pass
        else:
            uvloop.run(serve(port))
            return
    asyncio.run(serve(port))


if __name__ == "__main__":
    main()
