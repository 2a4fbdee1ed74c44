"""One HTTP/1.1 connection of ``run_http``'s server: httptools parses, an ASGI 3.0 app answers.

A connection serves its requests in order, one at a time (pipelined ones wait their turn),
keeps itself alive between them (``keep_alive`` seconds idle at most) and bounds what a client
can hold of the server:

- the request line and headers must arrive within ``header_timeout`` seconds of the
  connection opening (or of the first byte of a later request on it), and the body
  within ``body_timeout`` seconds of the headers; else ``408`` with a JSON-RPC error
  body, and the connection closes. (An app that answers before reading the whole body
  does not stop the body's clock: a body still trickling in after the answer closes
  the connection all the same.)
- what the parser holds of a request it has not finished is bounded, counted in raw bytes
  as they arrive (an int add per read): the request line and headers together may not
  pass ``MAX_HEAD_BYTES`` (else ``431``), a chunk-size line with its extensions
  ``MAX_CHUNK_LINE`` and a chunked body's trailer ``MAX_HEAD_BYTES`` (else ``400``).
  httptools keeps an unfinished header line itself, copying it on every read: without
  the count, one line with no end grew without limit, and quadratically in CPU.
- what httptools cannot parse, before the body or in it (a bad chunk size or trailer, a
  ``Transfer-Encoding`` other than chunked), is answered ``400``; the connection closes
  either way, once it has dropped what the client was still sending (``DRAIN_AFTER_REFUSAL``:
  closed with bytes unread, a socket resets, and the reset can take the answer). A request
  whose body never arrived whole (a framing error, the body's timeout, the client
  half-closing in the middle) is never given it: its app hears the client leave
  (``http.disconnect``) before any end of body.
- pipelined requests are parsed ahead of their turn at most ``PIECE`` bytes at a time:
  once one waits its turn, the connection stops parsing (and reading) until it has had
  it. Each one waiting holds a scope, tens of times its bytes.
- past ``max_connections`` open connections, a new connection makes room: the one that
  has waited longest for its client's bytes (a request's headers or body) is closed
  with a 408, or else an idle kept-alive one is closed. A slow client cannot keep
  others out that way. When every connection is being served, requests on the new
  one are answered ``503`` with ``Retry-After`` and a JSON-RPC error body, and it closes.

A client that half-closes after its requests (``shutdown(SHUT_WR)``) gets their answers, then
the connection closes. A request with an absolute-form target (``POST http://host/mcp``) is
given the target's authority as its ``host`` header (RFC 9112 §3.2.2: the server MUST
ignore the received Host), so the app's allowed-host check reads what the request is for.
A request asking to upgrade (which we do not do) is served as a plain one, body included
(RFC 9110 §7.8), and the connection closes with its answer.

Each connection has at most one timer pending: a phase (headers, body, idle) only moves
its deadline, and the timer, when it fires, re-arms itself for the current deadline
or finds nothing due. A request costs a clock reading and a few attribute writes per
phase; the open connections are looked through only past the cap.

The app sees the scope uvicorn gives it, built here from the parsed head; what it reads
and sends goes through a ``Request``, the second class here: its ``receive`` hands the app the
body as the connection parses it (a ``100 Continue`` first, when the client asked for one and
the app reads it), and lets a connection paused on a full buffer read on; its ``send`` turns the
app's messages into the response's bytes, waiting first while the client is slow to read them.
The two live in one module, as uvicorn's ``httptools_impl.py`` keeps its protocol and its
request-response cycle: the connection feeds and pauses the request, the request resumes,
drains and frees the connection; apart, each file imported the other.

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

__all__ = [
    "DRAIN_AFTER_REFUSAL",
    "DRAIN_AFTER_REFUSAL_BYTES",
    "HIGH_WATER",
    "KEEP_ALIVE",
    "MAX_CHUNK_LINE",
    "MAX_HEAD_BYTES",
    "PIECE",
    "Connection",
    "Request",
    "Shared",
    "raw_response",
]

import asyncio
import itertools
import logging
import math
import time
from collections import deque
from typing import Any, Literal

import httptools

from ...framing import http as H
from ...types.errors import InternalError, InvalidRequest
from ..asgi import Message, Scope, Send, send_bytes
from ..limits import busy, too_slow

logger = logging.getLogger("backchannel.http")

#: The request line and headers together. Real MCP requests carry a few KiB (a bearer token,
#: cookies, trace context); 64 KiB leaves room for fat JWTs and proxies' headers while bounding
#: what one connection may make us hold before its request is even known (nginx answers 400
#: past 32 KiB by default, Node 431 past 16 KiB).
MAX_HEAD_BYTES = 64 * 1024
#: A chunk-size line with its extensions (no client we know sends extensions; a size is a few
#: hex digits). A chunked body's trailer may take ``MAX_HEAD_BYTES``, as its head does.
MAX_CHUNK_LINE = 4 * 1024
#: Bytes handed to the parser at a time, unless they are all the body of known length being
#: read: pipelined requests parsed in one go all wait their turn (a scope each, tens of times
#: their bytes), so between pieces the connection stops once one is waiting.
PIECE = 2 * 1024
#: Unread request body above which the connection stops reading from its socket until the app reads.
HIGH_WATER = 64 * 1024
#: Seconds a kept-alive connection may sit with no request (uvicorn's default: clients see no change).
KEEP_ALIVE = 5.0
#: Seconds a closed connection may take to hand its client what is left to send; then it is cut.
#: A closing connection counts no more against the cap: one whose client reads nothing would
#: otherwise keep its socket, and what is buffered for it, for ever.
LINGER = 10.0
#: After a refusal the connection ends its side once the answer is out and drops what the client
#: still sends, for this long (and this many bytes) at most, before it closes: a socket closed
#: with bytes unread sends a reset, which can destroy the answer before the client reads it.
DRAIN_AFTER_REFUSAL = 1.0
DRAIN_AFTER_REFUSAL_BYTES = 1024 * 1024

_ASGI = {"version": "3.0", "spec_version": "2.3"}
_METHODS = {m.encode(): m for m in ("GET", "POST", "DELETE", "HEAD", "PUT", "OPTIONS", "PATCH")}
_WARN_EVERY = 60.0
_last_warning = 0.0

Phase = Literal["headers", "body", "idle"]


def _warn(message: str, *args: object) -> None:
    """A warning at most once a minute: under attack every refusal would log otherwise."""
    global _last_warning
    now = time.monotonic()
    if now - _last_warning >= _WARN_EVERY:
        _last_warning = now
        logger.warning(message, *args)


class _Refused(Exception):
    """Raised from a parser callback: the request is answered ``status`` (``args[1]`` says why)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(status, message)
        self.status = status
        self.message = message


class Shared:
    """What the connections of one server share: the app, their settings, who is open.
    ``HttpServer`` makes it, with the settings' defaults (``serving.py``)."""

    def __init__(
        self,
        app: Any,
        *,
        header_timeout: float | None,
        body_timeout: float | None,
        max_connections: int | None,
        retry_after: int,
        keep_alive: float,
    ) -> None:
        self.app = app
        self.header_timeout = header_timeout
        self.body_timeout = body_timeout
        self.max_connections = max_connections
        self.retry_after = retry_after
        self.keep_alive = keep_alive
        #: The lifespan's ``state``: each request's scope gets a shallow copy.
        self.state: dict[str, Any] = {}
        self.connections: set[Connection] = set()
        self.serials = itertools.count()
        #: The apps running now (one per request being answered).
        self.tasks: set[asyncio.Task[None]] = set()
        #: Set when the last connection closes, once a stop has begun (the graceful stop waits for it).
        self.emptied: asyncio.Event | None = None
        self.stopping = False

    def factory(self) -> Connection:
        return Connection(self)


class Connection(asyncio.Protocol):
    """One client connection: parses its requests and runs the app for each, in order."""

    def __init__(self, shared: Shared) -> None:
        self.shared = shared
        self.loop = asyncio.get_running_loop()
        self.transport: asyncio.Transport = None  # type: ignore[assignment]  # (set by connection_made)
        self.parser = httptools.HttpRequestParser(self)
        self.client: tuple[str, int] | None = None
        self.server: tuple[str, int] | None = None
        self.url = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.mid_head = False
        self.expect_continue = False
        #: The limit of what the raw bytes are being counted for: a head (``MAX_HEAD_BYTES``, no
        #: request being read), a chunk-size line (``MAX_CHUNK_LINE``) or a trailer (``MAX_HEAD_BYTES``);
        #: 0 while a body's data arrives, uncounted. ``counted``: its bytes so far.
        self.limit = MAX_HEAD_BYTES
        self.counted = 0
        #: The content-length of the body being read (-1 until looked up, 0 if none) and its
        #: bytes parsed so far: a body's bytes are fed to the parser to its end at once.
        self.body_length = -1
        self.body_received = 0
        #: The request whose body is being parsed, and the one being answered (often the same).
        self.reading: Request | None = None
        self.current: Request | None = None
        self.queue: deque[tuple[Request, Any]] = deque()
        self.reading_paused = False
        #: What was received but not parsed yet (reading is paused), or b"" once nothing more will be.
        self.held: bytes | None = None
        self.parsing_ended = False
        #: A request that asked to upgrade, whose body the parser skipped, then reads (``_upgraded``).
        self.upgrading: Request | None = None
        self.resumed: Request | None = None
        #: The refusal that follows the answers owed before it (``_refuse``), and once it is sent,
        #: how many more bytes the client may send before the connection closes.
        self.refusal: bytes | None = None
        self.draining: int | None = None
        self.write_paused: asyncio.Future[None] | None = None
        #: What the connection waits for from its client now, since ``since``; its clock runs
        #: until ``deadline`` (infinite when that wait has no limit).
        self.waiting_for: Phase | None = None
        self.since = 0.0
        self.deadline = math.inf
        self.timer: asyncio.TimerHandle | None = None
        self.serial = 0  # (the order connections were made in)

    # ------------------------------------------------------------- asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # (a stream transport: uvloop's is no asyncio.Transport)
        self.server = _address(transport.get_extra_info("sockname"))
        self.client = _address(transport.get_extra_info("peername"))
        shared = self.shared
        shared.connections.add(self)
        self.serial = next(shared.serials)
        self._expect("headers", shared.header_timeout)
        cap = shared.max_connections
        if cap is not None and len(shared.connections) > cap and self._open_connections() > cap:
            self._make_room()

    def connection_lost(self, exc: Exception | None) -> None:
        shared = self.shared
        shared.connections.discard(self)
        self.waiting_for = None
        self.held = None
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        for request in (self.current, self.reading, *(queued for queued, _ in self.queue)):
            if request is not None:
                request.leave()
        self.queue.clear()
        paused, self.write_paused = self.write_paused, None
        if paused is not None and not paused.done():
            paused.set_result(None)
        if not shared.connections and shared.emptied is not None:
            shared.emptied.set()

    def data_received(self, data: bytes) -> None:
        """Parse ``data`` in pieces, counting the raw bytes of what the parser has not finished;
        hold the rest once a piece paused reading (a request waiting its turn, a body unread)."""
        if self.held is not None:
            if self.draining is not None:  # (after a refusal)
                self.draining -= len(data)
                if self.draining < 0:
                    self.close()
            elif not self.parsing_ended:  # (a read under way when reading paused)
                self.held += data
            return
        parser = self.parser
        start = 0
        end = len(data)
        try:
            while True:
                piece = PIECE
                limit = self.limit
                if limit:
                    room = limit - self.counted
                    if room <= 0:
                        self._over_limit()
                        return
                    if room < piece:
                        piece = room
                    self.counted += end - start if end - start < piece else piece
                elif end - start > piece:  # a body's data: up to its end at once, if its length is known
                    left = self._body_left()
                    if left > piece:
                        piece = left
                if end - start <= piece:
                    parser.feed_data(memoryview(data)[start:] if start else data)
                    return
                parser.feed_data(memoryview(data)[start : start + piece])
                start += piece
                if self.reading_paused:
                    self.held = data[start:]
                    return
        except httptools.HttpParserUpgrade as exc:
            self._upgraded(data[start + exc.args[0] :])
        except httptools.HttpParserError as exc:
            refused = exc.__context__
            if isinstance(refused, _Refused):
                self._refuse(refused.status, refused.message)
            else:
                self._refuse(400, f"Bad Request: not a valid HTTP/1.1 request ({exc})")

    def eof_received(self) -> bool:
        """The client sent its last byte: what it sent whole is answered, then the connection
        closes; a request it left unfinished is refused with a 400.

        A half-close cannot be told from a close: with a response under way (a stream, most
        often), the client is taken to have left, as before; a client that closed while its
        request was worked on is noticed when the answer goes out."""
        current = self.current
        if self.draining is not None or (current is not None and current.response_started):
            return False  # (the transport closes: the app hears the client leave)
        if self.reading is not None or self.mid_head:
            self._refuse(400, "Bad Request: the client ended its side of the connection in the middle of a request")
            return True
        last = self.queue[-1][0] if self.queue else self.current
        if last is None:
            self.close()
        else:
            last.keep_alive = False  # (the transport stays open for the answers, then closes)
        return True

    def pause_writing(self) -> None:
        if self.write_paused is None:
            self.write_paused = self.loop.create_future()

    def resume_writing(self) -> None:
        paused, self.write_paused = self.write_paused, None
        if paused is not None and not paused.done():
            paused.set_result(None)

    async def drain(self) -> None:
        paused = self.write_paused
        if paused is not None:
            await asyncio.shield(paused)  # (shared by whoever waits; a cancelled send must not resolve it)

    def pause_reading(self) -> None:
        if not self.reading_paused:
            self.reading_paused = True
            self.transport.pause_reading()

    def resume_reading(self) -> None:
        """Parse what was held and read on, unless a request still waits its turn or the body
        being read is still over ``HIGH_WATER`` unread."""
        if not self.reading_paused or self.queue or self.parsing_ended:
            return
        reading = self.reading
        if reading is not None and reading.unread > HIGH_WATER:
            return
        self.reading_paused = False
        if self.held is not None:
            # Parsed in a turn of its own: not inside the app's ``receive`` or ``send`` that resumed it.
            self.loop.call_soon(self._release)
        elif not self.transport.is_closing():
            self.transport.resume_reading()

    def _release(self) -> None:
        held = self.held
        if held is None or self.parsing_ended or self.reading_paused or self.transport.is_closing():
            return
        self.held = None
        self.data_received(held)
        if not self.reading_paused and not self.transport.is_closing():
            self.transport.resume_reading()

    def close(self) -> None:
        """Close once what is left to send is sent, or after ``LINGER`` seconds whatever is left."""
        transport = self.transport
        if not transport.is_closing():
            transport.close()
            if transport.get_write_buffer_size():
                self.loop.call_later(LINGER, self._cut)

    def _cut(self) -> None:
        if self in self.shared.connections:  # (its client has not read the rest: its close never ended)
            self.transport.abort()

    def _body_left(self) -> int:
        """Bytes still to come of the body being read, if it has a content-length (else 0)."""
        length = self.body_length
        if length < 0:
            length = 0
            request = self.reading
            if request is not None:
                for name, value in request.scope["headers"]:
                    if name == b"content-length":
                        length = int(value)
            self.body_length = length
        return length - self.body_received

    def _close_after_refusal(self) -> None:
        """Close without losing the refusal just written: end our side once it is out, drop what
        the client still sends, and close when it ends its side (or after ``DRAIN_AFTER_REFUSAL``)."""
        transport = self.transport
        if transport.is_closing():
            return
        if not transport.can_write_eof():
            self.close()
            return
        transport.write_eof()
        self.draining = DRAIN_AFTER_REFUSAL_BYTES
        self.reading_paused = False
        transport.resume_reading()
        self.loop.call_later(DRAIN_AFTER_REFUSAL, self.close)

    def _end_parsing(self) -> None:
        """Parse and read nothing more from this client."""
        self.parsing_ended = True
        self.held = b""
        self.pause_reading()

    def _over_limit(self) -> None:
        if self.reading is None:  # a head
            self._refuse(
                431, f"Request Header Fields Too Large: the request line and headers pass {MAX_HEAD_BYTES} bytes"
            )
        elif self.limit == MAX_CHUNK_LINE:
            self._refuse(400, f"Bad Request: a chunk-size line (with its extensions) passes {MAX_CHUNK_LINE} bytes")
        else:
            self._refuse(400, f"Bad Request: the chunked body's trailer passes {MAX_HEAD_BYTES} bytes")

    def _upgraded(self, rest: bytes) -> None:
        """The parser stopped after a request asking to upgrade, before its body (``rest`` is what
        follows its head). We do not upgrade (RFC 9110 §7.8): a body is read as any other, by a
        parser of its own given a head with just the request's framing; the connection closes
        with the answer, and nothing after the request is read."""
        request, self.upgrading = self.upgrading, None
        if request is None:  # no body
            self._end_parsing()
            return
        framing = b"".join(
            b"%s: %s\r\n" % (name, value)
            for name, value in request.scope["headers"]
            if name == b"content-length" or name == b"transfer-encoding"
        )
        self.resumed = request
        self.parser = httptools.HttpRequestParser(self)
        try:
            self.parser.feed_data(b"POST / HTTP/1.1\r\n" + framing + b"\r\n")
        except httptools.HttpParserError as exc:  # (the framing the first parser did not check)
            self._refuse(400, f"Bad Request: not a valid HTTP/1.1 request ({exc})")
            return
        if rest:
            self.data_received(rest)

    # ------------------------------------------------------------- httptools callbacks

    def on_message_begin(self) -> None:
        self.url = b""
        self.headers = []
        self.mid_head = True
        self.expect_continue = False
        if self.waiting_for is None or self.waiting_for == "idle":  # (the first request's clock runs already)
            self._expect("headers", self.shared.header_timeout)

    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        if self.reading is not None:
            # A chunked body's trailer: not one of the headers the app was given (a proxy in front
            # checked those, not this), and the app may look at them only after the body.
            return
        name = name.lower()
        if name == b"expect" and value.lower() == b"100-continue":
            self.expect_continue = True
        self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        self.mid_head = False
        # What follows is counted as a chunk-size line until a body's data comes (``on_body``).
        self.limit = MAX_CHUNK_LINE
        self.counted = 0
        self.body_length = -1
        self.body_received = 0
        resumed = self.resumed
        if resumed is not None:  # the head ``_upgraded`` gave a parser for a skipped body
            self.resumed = None
            self.reading = resumed
            return
        self.waiting_for = None
        shared = self.shared
        parser = self.parser
        method = parser.get_method()
        url = self.url
        if url[:1] == b"/":
            raw_path, _, query = url.partition(b"?")
        else:  # the absolute form (``GET http://host/path``), or ``*``
            parsed = httptools.parse_url(url)
            raw_path, query = parsed.path or b"/", parsed.query or b""
            self._take_authority(parsed)
        path = raw_path.decode("ascii")
        if "%" in path:
            from urllib.parse import unquote

            path = unquote(path)
        scope = {
            "type": "http",
            "asgi": _ASGI,
            "http_version": parser.get_http_version(),
            "server": self.server,
            "client": self.client,
            "scheme": "http",
            "method": _METHODS.get(method) or method.decode("ascii"),
            "root_path": "",
            "path": path,
            "raw_path": raw_path,
            "query_string": query,
            "headers": self.headers,
            "state": shared.state.copy(),
        }
        # A request asking for an upgrade (which we do not make) is served as a plain one, its body
        # read by ``_upgraded``; the parser stops after it, so the connection ends with its answer.
        upgrade = parser.should_upgrade()
        keep_alive = parser.should_keep_alive() and not upgrade and not shared.stopping
        # (HTTP/1.0 has no 1xx: its client would take a 100 for the answer)
        expect_continue = self.expect_continue and scope["http_version"] == "1.1"
        request = Request(self, scope, keep_alive, expect_continue)
        if upgrade and any(
            (name == b"content-length" and value.strip(b"0")) or name == b"transfer-encoding"
            for name, value in self.headers
        ):
            self.upgrading = request  # (its body is skipped: ``_upgraded`` reads it)
        app = shared.app
        cap = shared.max_connections
        if cap is not None and len(shared.connections) > cap and self._open_connections() > cap:
            _warn("refusing requests: %d connections are open (max_connections=%d)", len(shared.connections), cap)
            app = self._refuse_busy
        self.reading = request
        if self.current is None:
            self._run(request, app)
        else:
            self.queue.append((request, app))
        self._expect("body", shared.body_timeout)

    def _take_authority(self, target: Any) -> None:
        """RFC 9112 §3.2.2: with an absolute-form target the server MUST ignore the Host header
        and use the target's authority; the app gets it as ``host``."""
        host = target.host
        if not host:
            raise _Refused(400, "Bad Request: the request target names no host")
        if target.userinfo:
            raise _Refused(400, "Bad Request: the request target carries user information")
        if b":" in host:
            host = b"[%s]" % host
        if target.port is not None:
            host += b":%d" % target.port
        self.headers = [header for header in self.headers if header[0] != b"host"]
        self.headers.append((b"host", host))

    def on_body(self, body: bytes) -> None:
        self.limit = 0  # (the data of a body, or of a chunk: the line before it is done)
        self.body_received += len(body)
        request = self.reading
        if request is None or request.response_complete or request.disconnected:
            return  # an answer that did not wait for the body: the rest is read past
        request.chunks.append(body)
        request.unread += len(body)
        if request.unread > HIGH_WATER:
            self.pause_reading()
        request.wake()

    def on_chunk_header(self) -> None:
        # Data follows (``on_body`` stops the count), or this was the last chunk and its trailer does.
        self.limit = MAX_HEAD_BYTES
        self.counted = 0

    def on_chunk_complete(self) -> None:
        self.limit = MAX_CHUNK_LINE
        self.counted = 0

    def on_message_complete(self) -> None:
        if self.upgrading is not None:
            return  # (its body was skipped: ``_upgraded`` reads it)
        self.limit = MAX_HEAD_BYTES
        self.counted = 0
        if self.waiting_for == "body":
            self.waiting_for = None
        request, self.reading = self.reading, None
        if request is not None:
            request.more_body = False
            request.wake()
        if self.queue:
            # A whole request waits its turn: read no more until it has it. Each one queued holds
            # a scope (tens of times its bytes), and a client need not read its answers.
            self.pause_reading()
        elif self.current is None:
            self._idle()

    # ------------------------------------------------------------- answering

    def _run(self, request: Request, app: Any) -> None:
        self.current = request
        task = self.loop.create_task(self._serve(request, app))
        tasks = self.shared.tasks
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    async def _serve(self, request: Request, app: Any) -> None:
        try:
            await app(request.scope, request.receive, request.send)
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError) and self.shared.stopping:
                self.close()
                raise
            logger.error("the app failed on %s %s", request.scope["method"], request.scope["path"], exc_info=exc)
            self._failed(request)
            if not isinstance(exc, Exception):
                raise
        else:
            if not request.response_complete and not request.disconnected:
                logger.error("the app returned without completing its response to %s", request.scope["path"])
                self._failed(request)

    def _failed(self, request: Request) -> None:
        """The app failed: a 500 if it had not started its response, else the connection closes."""
        if request.response_complete:
            return  # (after its answer, as a background task may: the connection has gone on to the next)
        if not request.response_started and not request.disconnected:
            request.response_started = request.response_complete = True
            self.transport.write(raw_response(H.Rejection(500, InternalError("Internal Server Error"))))
        elif request.left_to_send < 0:
            request.send_head()  # (a stream's head waiting for the end of the turn: the client sees it cut, not absent)
        self.close()

    def answered(self, request: Request) -> None:
        """``request``'s response is complete: the next one's turn, or the end of the connection."""
        if request is not self.current:
            return
        self.current = None
        if not request.keep_alive:
            self.close()
            return
        if self.queue:
            self._run(*self.queue.popleft())
        elif self.refusal is not None:  # what the client sent after its last whole request
            self.transport.write(self.refusal)
            self._close_after_refusal()
            return
        elif self.reading is None:
            self._idle()
        if self.reading_paused:  # (a body left unread is read past; the next reads its own)
            self.resume_reading()

    async def _refuse_busy(self, scope: Scope, receive: Any, send: Send) -> None:
        rejection = busy(
            f"the server is at its limit of {self.shared.max_connections} open connections; try again shortly",
            self.shared.retry_after,
        )
        headers = {"content-type": "application/json", **rejection.headers, "connection": "close"}
        await send_bytes(send, rejection.status, rejection.body(), headers)

    def _refuse(self, status: int, message: str) -> None:
        """What the client sent is not a request we serve: parse nothing more, answer ``status``
        once the answers owed before it are sent, and close. A request whose body was being read
        never gets it whole: its app hears the client leave."""
        self._end_parsing()
        self.waiting_for = None
        refusal = raw_response(H.Rejection(status, InvalidRequest(message)))
        bad, self.reading = self.reading, None
        if bad is not None:
            bad.leave()
            if self.queue and self.queue[-1][0] is bad:
                self.queue.pop()
        current = self.current
        if bad is not None and bad.response_started:
            self.close()  # it was answered before its body broke (or its answer under way is cut)
        elif current is None or current is bad:
            self.transport.write(refusal)
            self._close_after_refusal()
        else:
            self.refusal = refusal

    def shutdown(self) -> None:
        """The server is stopping: close now if idle, else after the response under way."""
        current = self.current
        if current is None and self.reading is None:
            self.close()
            return
        if current is not None:
            current.keep_alive = False
        for queued, _ in self.queue:
            queued.leave()
        self.queue.clear()

    # ------------------------------------------------------------- the cap

    def _open_connections(self) -> int:
        """Connections not already closing (one that made room is gone once its close is done)."""
        return sum(1 for other in self.shared.connections if not other.transport.is_closing())

    def _make_room(self) -> None:
        """Close the connection that has waited longest for its client, else an idle one."""
        slowest: Connection | None = None
        idle: Connection | None = None
        for other in self.shared.connections:
            if other is self or other.transport.is_closing():
                continue
            waiting = other.waiting_for
            if waiting == "headers" or waiting == "body":
                # (uvloop's clock moves once per loop turn: equal readings go to the older connection)
                if slowest is None or (other.since, other.serial) < (slowest.since, slowest.serial):
                    slowest = other
            elif idle is None and other.current is None and not other.queue:
                idle = other
        if slowest is not None:
            assert slowest.waiting_for is not None
            waited = self.loop.time() - slowest.since
            _warn(
                "at max_connections=%s: closing the connection slowest to send its request", self.shared.max_connections
            )
            error = InvalidRequest(
                f"Request Timeout: the server needed this connection for another client; "
                f"the request {slowest.waiting_for} had taken {waited:.1f} s"
            )
            slowest._time_out(slowest.waiting_for, H.Rejection(408, error))
        elif idle is not None:
            idle.close()

    # ------------------------------------------------------------- deadlines

    def _idle(self) -> None:
        if not self.transport.is_closing():
            self._expect("idle", self.shared.keep_alive)

    def _expect(self, what: Phase, timeout: float | None) -> None:
        self.waiting_for = what
        self.since = now = self.loop.time()
        if timeout is None:
            self.deadline = math.inf
            return
        self.deadline = deadline = now + timeout
        timer = self.timer
        if timer is None or deadline < timer.when():  # (a body may be given less time than its headers)
            if timer is not None:
                timer.cancel()
            self.timer = self.loop.call_at(deadline, self._check)

    def _check(self) -> None:
        self.timer = None
        what = self.waiting_for
        if what is None or self.deadline == math.inf or self.transport.is_closing():
            return
        if self.loop.time() < self.deadline:  # the phase moved on (a later request): wait for its deadline
            self.timer = self.loop.call_at(self.deadline, self._check)
            return
        if what == "idle":
            self.close()
            return
        seconds = self.shared.header_timeout if what == "headers" else self.shared.body_timeout
        assert seconds is not None
        logger.debug("closing a connection whose request %s took over %g s", what, seconds)
        self._time_out(what, too_slow(f"request {what}", seconds))

    def _time_out(self, what: Phase, rejection: H.Rejection) -> None:
        """Stop waiting for the client: answer ``rejection`` if nothing else is being answered, and close."""
        self.waiting_for = None
        current = self.current
        # The 408 goes out only where it cannot be mistaken for the answer to another request.
        if what == "headers":
            answer = current is None
        else:
            answer = current is not None and current is self.reading and not current.response_started
        if current is not None and not current.response_complete:
            # The app reading this body sees the client leave, and what it sends from now on goes nowhere.
            current.leave()
        if answer:
            self.transport.write(raw_response(rejection))
        self.close()


def _address(address: Any) -> tuple[str, int] | None:
    """A socket address as ASGI gives it: (host, port), also for IPv6's 4-tuples."""
    if isinstance(address, (tuple, list)) and len(address) >= 2:
        return str(address[0]), int(address[1])
    return None


# ------------------------------------------------------------- one request

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
