"""How ``run_http`` runs uvicorn: its options, and an HTTP protocol that bounds each connection.

uvicorn waits for a request's headers and body for as long as the client likes, and
its own concurrency limit answers in plain text. The protocol here is uvicorn's
httptools protocol with two additions:

- the request line and headers must arrive within ``header_timeout`` seconds of the
  connection opening (or of the first byte of a later request on it), and the body
  within ``body_timeout`` seconds of the headers; else ``408`` with a JSON-RPC error
  body, and the connection closes. (An app that answers before reading the whole body
  does not stop the body's clock: a body still trickling in after the answer closes
  the connection all the same.)
- past ``max_connections`` open connections, a new connection makes room: the one that
  has waited longest for its client's bytes (a request's headers or body) is closed
  with a 408, or else an idle kept-alive one is closed. A slow client cannot keep
  others out that way. When every connection is being served, requests on the new
  one are answered ``503`` with ``Retry-After`` and a JSON-RPC error body, and it closes.

Each connection has at most one timer pending: a phase (headers, body) only moves
its deadline, and the timer, when it fires, re-arms itself for the current deadline
or finds nothing due. A request costs a clock reading and a few attribute writes per
phase; the open connections are looked through only past the cap.
"""

from __future__ import annotations

__all__ = ["GuardedHttpToolsProtocol", "guarded_protocol", "uvicorn_options"]

import asyncio
import http
import logging
import math
import time
from typing import Any, Literal, cast

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from ...framing import http as H
from ...types.errors import InvalidRequest
from .asgi import Receive, Scope, Send, send_bytes
from .limits import BODY_TIMEOUT, HEADER_TIMEOUT, MAX_CONNECTIONS, RETRY_AFTER, busy, connection_cap, too_slow

logger = logging.getLogger("backchannel.http")
_WARN_EVERY = 60.0
_last_warning = 0.0


def _warn(message: str, *args: object) -> None:
    """A warning at most once a minute: under attack every refusal would log otherwise."""
    global _last_warning
    now = time.monotonic()
    if now - _last_warning >= _WARN_EVERY:
        _last_warning = now
        logger.warning(message, *args)


def _raw_response(rejection: H.Rejection) -> bytes:
    """``rejection`` as the bytes of an HTTP/1.1 response that closes its connection."""
    body = rejection.body()
    headers = {
        "content-type": "application/json",
        **rejection.headers,
        "content-length": str(len(body)),
        "connection": "close",
    }
    phrase = http.HTTPStatus(rejection.status).phrase
    lines = [f"HTTP/1.1 {rejection.status} {phrase}", *(f"{name}: {value}" for name, value in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with header and body deadlines and a connection cap.

    Configure a subclass with ``guarded_protocol``; the class attributes are its settings.
    """

    header_timeout: float | None = HEADER_TIMEOUT
    body_timeout: float | None = BODY_TIMEOUT
    max_connections: int | None = MAX_CONNECTIONS
    retry_after: int = RETRY_AFTER

    #: What the connection waits for from the client now, since ``_since``; its clock runs
    #: until ``_deadline`` (infinite when that wait has no limit).
    _waiting_for: Literal["headers", "body"] | None = None
    _since = 0.0
    _deadline = math.inf
    _timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._expect("headers", self.header_timeout)
        cap = self.max_connections
        if cap is not None and len(self.connections) > cap and self._open_connections() > cap:
            self._make_room()

    def connection_lost(self, exc: Exception | None) -> None:
        self._waiting_for = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._waiting_for is None:  # a later request on a kept-alive connection (the first's clock runs already)
            self._expect("headers", self.header_timeout)

    def on_headers_complete(self) -> None:
        self._waiting_for = None
        cap = self.max_connections
        if cap is not None and len(self.connections) > cap and self._open_connections() > cap:
            _warn("refusing requests: %d connections are open (max_connections=%d)", len(self.connections), cap)
            # uvicorn's own way of refusing (its limit_concurrency swaps the app the same way), so the
            # request is parsed to its end and the connection closes cleanly after the answer.
            app, self.app = self.app, self._refuse_busy
            try:
                super().on_headers_complete()
            finally:
                self.app = app
        else:
            super().on_headers_complete()
        if not (self.parser.should_upgrade() and self._should_upgrade()):  # (a WebSocket is no body to wait for)
            self._expect("body", self.body_timeout)

    def on_message_complete(self) -> None:
        if self._waiting_for == "body":
            self._waiting_for = None
        super().on_message_complete()

    async def _refuse_busy(self, scope: Scope, receive: Receive, send: Send) -> None:
        rejection = busy(
            f"the server is at its limit of {self.max_connections} open connections; try again shortly",
            self.retry_after,
        )
        headers = {"content-type": "application/json", **rejection.headers, "connection": "close"}
        await send_bytes(send, rejection.status, rejection.body(), headers)

    # ------------------------------------------------------------- the cap

    def _open_connections(self) -> int:
        """Connections not already closing (one that made room is gone once its close is done)."""
        return sum(1 for other in self.connections if not other.transport.is_closing())

    def _make_room(self) -> None:
        """Close the connection that has waited longest for its client, else an idle one."""
        slowest: GuardedHttpToolsProtocol | None = None
        idle: GuardedHttpToolsProtocol | None = None
        for other in self.connections:
            if other is self or not isinstance(other, GuardedHttpToolsProtocol) or other.transport.is_closing():
                continue
            if other._waiting_for is not None:
                if slowest is None or other._since < slowest._since:
                    slowest = other
            elif idle is None and (other.cycle is None or other.cycle.response_complete) and not other.pipeline:
                idle = other
        if slowest is not None:
            assert slowest._waiting_for is not None
            waited = self.loop.time() - slowest._since
            _warn("at max_connections=%s: closing the connection slowest to send its request", self.max_connections)
            error = InvalidRequest(
                f"Request Timeout: the server needed this connection for another client; "
                f"the request {slowest._waiting_for} had taken {waited:.1f} s"
            )
            slowest._time_out(slowest._waiting_for, H.Rejection(408, error))
        elif idle is not None:
            idle.transport.close()

    # ------------------------------------------------------------- deadlines

    def _expect(self, what: Literal["headers", "body"], timeout: float | None) -> None:
        self._waiting_for = what
        self._since = now = self.loop.time()
        if timeout is None:
            self._deadline = math.inf
            return
        self._deadline = deadline = now + timeout
        timer = self._timer
        if timer is None or deadline < timer.when():  # (a body may be given less time than its headers)
            if timer is not None:
                timer.cancel()
            self._timer = self.loop.call_at(deadline, self._check)

    def _check(self) -> None:
        self._timer = None
        if self._waiting_for is None or self._deadline == math.inf or self.transport.is_closing():
            return
        if self.loop.time() < self._deadline:  # the phase moved on (a later request): wait for its deadline
            self._timer = self.loop.call_at(self._deadline, self._check)
            return
        what = self._waiting_for
        seconds = self.header_timeout if what == "headers" else self.body_timeout
        assert seconds is not None
        logger.debug("closing a connection whose request %s took over %g s", what, seconds)
        self._time_out(what, too_slow(f"request {what}", seconds))

    def _time_out(self, what: Literal["headers", "body"], rejection: H.Rejection) -> None:
        """Stop waiting for the client: answer ``rejection`` if nothing else is being answered, and close."""
        self._waiting_for = None
        cycle = self.cycle
        # The 408 goes out only where it cannot be mistaken for the answer to another request.
        if what == "headers":
            answer = cycle is None or cycle.response_complete
        else:
            answer = cycle is not None and not cycle.response_started
        if cycle is not None and not cycle.response_complete:
            # The app reading this body sees the client leave (as uvicorn tells it when the
            # connection drops), and what it sends from now on goes nowhere.
            cycle.disconnected = True
            cycle.message_event.set()
        if answer:
            self.transport.write(_raw_response(rejection))
        self.transport.close()


def guarded_protocol(
    *,
    header_timeout: float | None = HEADER_TIMEOUT,
    body_timeout: float | None = BODY_TIMEOUT,
    max_connections: int | None = MAX_CONNECTIONS,
    retry_after: int = RETRY_AFTER,
) -> type[asyncio.Protocol]:
    """A ``GuardedHttpToolsProtocol`` with these settings, for uvicorn's ``http=``.

    ``max_connections`` is lowered to fit the process's file-descriptor limit (see
    ``limits.connection_cap``); None turns a limit off.
    """
    settings = {
        "header_timeout": header_timeout,
        "body_timeout": body_timeout,
        "max_connections": connection_cap(max_connections),
        "retry_after": retry_after,
    }
    return cast(type[asyncio.Protocol], type("GuardedHttpToolsProtocol", (GuardedHttpToolsProtocol,), settings))


def uvicorn_options(
    *,
    header_timeout: float | None = HEADER_TIMEOUT,
    body_timeout: float | None = BODY_TIMEOUT,
    max_connections: int | None = MAX_CONNECTIONS,
    retry_after: int = RETRY_AFTER,
) -> dict[str, Any]:
    """The keyword arguments ``run_http`` gives ``uvicorn.run`` (and tests ``uvicorn.Config``).

    No access log (errors still log), no proxy-header rewriting (a server that sits behind a
    proxy mounts ``http_app()`` itself and says which proxies to trust), no per-response
    Server/Date headers: work every request would pay for and MCP does not use.
    """
    protocol = guarded_protocol(
        header_timeout=header_timeout,
        body_timeout=body_timeout,
        max_connections=max_connections,
        retry_after=retry_after,
    )
    return {
        "http": protocol,
        "log_level": "warning",
        "access_log": False,
        "proxy_headers": False,
        "server_header": False,
        "date_header": False,
        # MCP has no WebSocket transport: uvicorn's default loads the websockets library (and
        # scans package metadata for its version), about 10 ms of every HTTP server's start.
        "ws": "none",
    }
