"""One request on an HTTP/1.1 connection (``connection.py``): the ``receive`` and ``send`` its ASGI app is given.

``receive`` hands the app the body as the connection parses it (a ``100 Continue`` first, when
the client asked for one and the app reads it), and lets a connection paused on a full buffer
read on. ``send`` turns the app's messages into the response's bytes, waiting first while the
client is slow to read them.

A response with a ``content-length`` goes out as one write, head and body together; one without
is sent chunked, each ``http.response.body`` as soon as it is given (an SSE event must not wait).
Such a stream's head waits for its first part until the end of the loop turn that started it:
the first event is most often ready in that turn (an MCP stream's priming event and first
message are), and head and event then go out in one write, one packet for a proxy in front to
read, instead of two.

``raw_response`` is the bytes of an answer the connection writes without an app (a 400, 408,
431 or 500).
"""

from __future__ import annotations

__all__ = ["Request", "raw_response"]

import asyncio
from typing import TYPE_CHECKING, Any

from ...framing import http as H
from ..asgi import Message, Scope

if TYPE_CHECKING:
    from .connection import Connection


_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
_PHRASES = {
    200: "OK",
    201: "Created",
    202: "Accepted",
    204: "No Content",
    302: "Found",
    304: "Not Modified",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    406: "Not Acceptable",
    408: "Request Timeout",
    413: "Content Too Large",
    415: "Unsupported Media Type",
    422: "Unprocessable Content",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    503: "Service Unavailable",
}
_status_lines: dict[int, bytes] = {}


def _status_line(status: int) -> bytes:
    line = _status_lines.get(status)
    if line is None:
        phrase = _PHRASES.get(status)
        if phrase is None:  # (the table holds what MCP answers; the stdlib's is an import away)
            import http

            try:
                phrase = http.HTTPStatus(status).phrase
            except ValueError:
                phrase = ""
        line = _status_lines[status] = f"HTTP/1.1 {status} {phrase}\r\n".encode("latin-1")
    return line


def raw_response(rejection: H.Rejection) -> bytes:
    """``rejection`` as the bytes of an HTTP/1.1 response that closes its connection."""
    body = rejection.body()
    headers = {
        "content-type": "application/json",
        **rejection.headers,
        "content-length": str(len(body)),
        "connection": "close",
    }
    lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    return _status_line(rejection.status) + (lines + "\r\n").encode("latin-1") + body


class Request:
    """One request being answered: its scope, and the ``receive``/``send`` the app gets."""

    __slots__ = (
        "chunked",
        "chunks",
        "conn",
        "delivered_end",
        "disconnected",
        "expect_continue",
        "head",
        "keep_alive",
        "left_to_send",
        "more_body",
        "no_body",
        "response_complete",
        "response_started",
        "scope",
        "unread",
        "waiter",
    )

    def __init__(self, conn: Connection, scope: Scope, keep_alive: bool, expect_continue: bool) -> None:
        self.conn = conn
        self.scope = scope
        self.keep_alive = keep_alive
        self.expect_continue = expect_continue
        self.chunks: list[bytes] = []
        self.unread = 0
        self.more_body = True
        self.delivered_end = False
        self.disconnected = False
        self.response_started = False
        self.response_complete = False
        self.chunked = False
        self.no_body = False
        self.left_to_send = -1  # the content-length not yet sent; -1 when there is none
        self.head: bytes | None = None
        self.waiter: asyncio.Event | None = None  # (made by the first wait: most bodies are there at once)

    def wake(self) -> None:
        if self.waiter is not None:
            self.waiter.set()

    def leave(self) -> None:
        """The client is gone (or must be treated as gone): reads say so, sends go nowhere."""
        self.disconnected = True
        self.wake()

    # ------------------------------------------------------------- receive

    async def receive(self) -> Message:
        conn = self.conn
        if self.expect_continue:
            self.expect_continue = False
            if self.more_body and not self.chunks and not self.response_started and not conn.transport.is_closing():
                conn.transport.write(_CONTINUE)
        while not (
            self.disconnected
            or self.response_complete
            or self.chunks
            or (not self.more_body and not self.delivered_end)
        ):
            if conn.reading_paused:
                conn.resume_reading()
            # An event, not a future: an app may wait in two tasks at once (its body, and a
            # watcher for the client leaving), and either may be cancelled without the other.
            waiter = self.waiter
            if waiter is None:
                waiter = self.waiter = asyncio.Event()
            waiter.clear()
            await waiter.wait()
        if self.disconnected or self.response_complete:
            return {"type": "http.disconnect"}
        chunks = self.chunks
        body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        chunks.clear()
        self.unread = 0
        if conn.reading_paused:
            conn.resume_reading()
        if not self.more_body:
            self.delivered_end = True
        return {"type": "http.request", "body": body, "more_body": self.more_body}

    # ------------------------------------------------------------- send

    async def send(self, message: Message) -> None:
        conn = self.conn
        if conn.write_paused is not None and not self.disconnected:
            await conn.drain()
        if self.disconnected:
            return  # the client left: what the app still sends goes nowhere (as under uvicorn)
        kind = message["type"]
        if not self.response_started:
            if kind != "http.response.start":
                raise RuntimeError(f"expected 'http.response.start', got {kind!r}")
            self._start(message["status"], message.get("headers", ()))
        elif not self.response_complete:
            if kind != "http.response.body":
                raise RuntimeError(f"expected 'http.response.body', got {kind!r}")
            self._body(message.get("body", b""), message.get("more_body", False))
        else:
            raise RuntimeError(f"{kind!r} sent after the response was complete")

    def _start(self, status: int, headers: Any) -> None:
        self.expect_continue = False
        parts = [_status_line(status)]
        length = -1
        count = 0
        say_close = True  # (unless the app's own headers say ``connection: close``)
        for name, value in headers:
            lowered = name.lower()
            if lowered == b"content-length":
                length = int(value)
            elif lowered == b"connection" and value.lower() == b"close":
                self.keep_alive = say_close = False
            parts += (name, b": ", value, b"\r\n")
            count += 1
        scope = self.scope
        self.no_body = status < 200 or status in (204, 304) or scope["method"] == "HEAD"
        if length < 0 and not self.no_body:
            if scope["http_version"] == "1.1":
                self.chunked = True
                parts.append(b"transfer-encoding: chunked\r\n")
                count += 1
            else:  # HTTP/1.0 has no chunks: the body ends where the connection does
                self.keep_alive = False
        if not self.keep_alive and say_close:
            parts.append(b"connection: close\r\n")
            count += 1
        parts.append(b"\r\n")
        head = b"".join(parts)
        # A line break in a name or value would let it write headers (or a response) of its own:
        # every line break must be one of ours (the status line, one per header, the blank line).
        lines = head.count(b"\n")
        if lines != count + 2 or head.count(b"\r") != lines:
            raise RuntimeError("a response header contains a line break")
        self.response_started = True
        self.left_to_send = length
        self.head = head  # sent with the body, in one write
        if length < 0:
            # A stream's first event may be long coming: its head goes at the end of this turn if no
            # event took it along by then.
            self.conn.loop.call_soon(self.send_head)

    def send_head(self) -> None:
        """Write the head still waiting for the first part of the body (if the client is still here)."""
        head = self.head
        transport = self.conn.transport
        if head is not None and not self.disconnected and not transport.is_closing():
            self.head = None
            transport.write(head)

    def _body(self, body: bytes, more_body: bool) -> None:
        if self.no_body:
            data = b""
        elif self.chunked:
            data = b"%x\r\n%b\r\n" % (len(body), body) if body else b""
            if not more_body:
                data += b"0\r\n\r\n"
        else:
            data = body
            if self.left_to_send >= 0:
                self.left_to_send -= len(body)
                if self.left_to_send < 0:
                    raise RuntimeError("the response body is longer than its content-length")
        head = self.head
        if head is not None:
            self.head = None
            data = head + data
        if data:
            self.conn.transport.write(data)
        if not more_body:
            if self.left_to_send > 0 and not self.no_body:
                # Kept alive, the client would read the next response as the rest of this body.
                raise RuntimeError("the response body is shorter than its content-length")
            self.response_complete = True
            self.chunks.clear()
            self.unread = 0  # (what is left of the body is read past: it no more holds reading back)
            self.wake()
            self.conn.answered(self)
