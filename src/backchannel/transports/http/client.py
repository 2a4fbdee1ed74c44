"""Streamable HTTP, client side: one POST per message, answers as JSON or SSE.

``HttpClientTransport`` speaks both eras to one URL and tells them apart per
message. A message whose ``params._meta`` carries
``io.modelcontextprotocol/protocolVersion`` is stateless-era (2026-07-28): it
goes with the SEP-2243 headers (``MCP-Protocol-Version``, ``Mcp-Method``,
``Mcp-Name``, ``Mcp-Param-*``) and no session id, and closing its response is
its cancellation. Any other message is handshake-era (2025-03-26 .. 2025-11-25):
it carries ``Mcp-Session-Id`` and the version chosen at ``initialize``, a
broken SSE stream is resumed with ``GET`` + ``Last-Event-ID`` (SEP-1699
polling), cancellation is ``notifications/cancelled``, and a ``GET`` stream
listens for messages that belong to no request.

Whatever goes wrong with the HTTP exchange of a request (an error status, a
body that is not JSON, a stream that ends early) becomes a JSON-RPC error answer
to that request, so no caller waits forever. A server that cannot be reached at
all is another matter: a refused connection (or a connect timeout) ends the
transport, so every pending call fails at once with ``ConnectionClosed`` and so
does every later one. A connection cut under a request is not taken as proof
either way: one GET asks whether anything still serves the URL, and only a
stream whose server still answers is resumed.
"""

from __future__ import annotations

__all__ = ["HttpClientTransport"]

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx
import msgspec

from ...framing import http as H
from ...framing.codec import decode_json
from ...framing.sse import SSEDecoder, SSEEvent, SSEEventTooLarge
from ...protocol.events import CancelIntent, Outgoing, RequestId
from ...types import meta as M
from ...types.errors import INTERNAL_ERROR, INVALID_PARAMS, ParseError
from ..base import Transport, TransportBroken, TransportClosed

logger = logging.getLogger("backchannel.http")
_T = TypeVar("_T")

_ACCEPT_BOTH = "application/json, text/event-stream"
_SSE = "text/event-stream"
_DEFAULT_RETRY_MS = 1000
_ERROR_BODY_LIMIT = 64 * 1024
_SNIPPET = 200
_DELETE_TIMEOUT = 5.0
_NETWORK_ERRORS = (httpx.HTTPError, OSError)
#: Nothing accepted our connection: the server is gone (or was never there), so no request can succeed.
_UNREACHABLE = (httpx.ConnectError, httpx.ConnectTimeout)
#: The connection broke under a request: the server may have died, or only this connection did.
_CUT = (
    httpx.ReadError,
    httpx.WriteError,
    httpx.CloseError,
    httpx.RemoteProtocolError,
    httpx.ReadTimeout,
    httpx.WriteTimeout,
    OSError,
)
#: How long the reachability check may take, per attempt; a dead pooled connection costs one more attempt.
_PROBE_TIMEOUT = httpx.Timeout(10.0)
_PROBE_ATTEMPTS = 2
_encode = msgspec.json.encode


@dataclass(eq=False)
class _Exchange:
    """A request we POSTed, and the task reading the HTTP response that should answer it."""

    request_id: RequestId
    method: str
    stateless: bool
    task: asyncio.Task[None] | None = None
    answered: bool = False
    abandoned: bool = False  # we cancelled it: no answer is expected and none is made up


@dataclass(eq=False)
class _Post:
    message: dict[str, Any]
    exchange: _Exchange | None = None
    #: For ``notifications/cancelled``: the request whose stream to close once this is sent.
    then_close: _Exchange | None = None


class _Body:
    """A request body that says when the HTTP stack has taken all of it: the POST is sent.

    Iterable more than once, so httpx may replay it.
    """

    def __init__(self, data: bytes, sent: asyncio.Event) -> None:
        self.data = data
        self.sent = sent

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.data
        self.sent.set()


class HttpClientTransport(Transport):
    """The client end of Streamable HTTP at ``url``; hand it to ``Client`` (or use ``Client.http``).

    ``headers`` go on every request (say, ``Authorization``). Pass ``httpx_client``
    to choose TLS, proxies or an in-process ``httpx.ASGITransport``; the transport
    closes only a client it created. ``open_get_stream`` opens the handshake-era
    ``GET`` stream once the session is ready. ``max_reconnects`` bounds the
    consecutive reconnections of one SSE stream that bring nothing new.

    When the server cannot be reached (a refused connection, a connect timeout),
    ``receive`` raises ``TransportBroken`` and ``write`` refuses: the connection
    then fails every pending call with ``ConnectionClosed``.
    """

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        httpx_client: httpx.AsyncClient | None = None,
        open_get_stream: bool = True,
        max_reconnects: int = 5,
    ) -> None:
        self.url = url
        self.headers = httpx.Headers(dict(headers or {}))
        self.open_get_stream = open_get_stream
        self.max_reconnects = max_reconnects
        self._owns_client = httpx_client is None
        self._http = httpx_client or httpx.AsyncClient(timeout=httpx.Timeout(30, read=None))
        #: ``Mcp-Session-Id`` from the ``initialize`` response, sent on every later handshake-era request.
        self.session_id: str | None = None
        #: The handshake-era version the server chose at ``initialize``.
        self.protocol_version: str | None = None
        self._inbox: asyncio.Queue[list[Any] | None] = asyncio.Queue()
        self._outbox: asyncio.Queue[_Post] = asyncio.Queue()
        self._exchanges: dict[RequestId, _Exchange] = {}
        self._tool_headers: dict[str, dict[str, tuple[str, ...]]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._sender: asyncio.Task[None] | None = None
        self._listener: asyncio.Task[None] | None = None
        self._probe: asyncio.Task[bool] | None = None
        self._closed = False
        #: Why the server is taken for gone, once it is: the transport is over.
        self._unreachable: str | None = None

    # ------------------------------------------------------------ interface

    async def start(self) -> None:
        self._start_sender()

    async def receive(self) -> list[Any] | None:
        batch = await self._inbox.get()
        if batch is None:
            self._inbox.put_nowait(None)  # every later call sees the end too
            if self._unreachable is not None:
                raise TransportBroken(self._unreachable)
        return batch

    def write(self, items: list[Outgoing]) -> None:
        if self._closed:
            raise TransportClosed("the HTTP transport is closed")
        if self._unreachable is not None:
            raise TransportBroken(self._unreachable)
        for item in items:
            if isinstance(item, CancelIntent):
                self._cancel(item)
                continue
            exchange = None
            if "method" in item and "id" in item:
                exchange = _Exchange(item["id"], item["method"], _stateless_version(item) is not None)
                self._exchanges[item["id"]] = exchange
            self._outbox.put_nowait(_Post(item, exchange))
        self._start_sender()

    async def close(self) -> None:
        """Stop every exchange, end the session with ``DELETE``, and release the HTTP client."""
        if self._closed:
            return
        self._closed = True
        tasks = [task for task in (self._sender, self._listener, *self._tasks) if task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self.session_id is not None and self._unreachable is None:  # no DELETE to a server that is gone
            await self._delete_session()
        if self._owns_client:
            await self._http.aclose()
        self._inbox.put_nowait(None)

    # -------------------------------------------------------------- sending

    def _start_sender(self) -> None:
        if self._sender is None and not self._closed:
            self._sender = asyncio.get_running_loop().create_task(self._send_in_order())

    async def _send_in_order(self) -> None:
        """POST each message once the one before it is sent; never wait for an answer."""
        while True:
            post = await self._outbox.get()
            if post.exchange is not None and post.exchange.abandoned:
                continue  # cancelled before it left: nothing to send, nothing to cancel
            sent = asyncio.Event()
            task = self._spawn(self._post(post, sent))
            if post.exchange is not None:
                post.exchange.task = task
            waiter = asyncio.ensure_future(sent.wait())
            try:
                await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()

    def _cancel(self, intent: CancelIntent) -> None:
        exchange = self._exchanges.pop(intent.request_id, None)
        if exchange is None:
            return
        exchange.abandoned = True
        if exchange.task is None:
            return  # still queued: the sender skips it
        if exchange.stateless:
            exchange.task.cancel()  # closing the response is the cancellation (2026-07-28)
        else:
            # Say so, then stop reading: the server will not answer, and may keep the stream open.
            self._outbox.put_nowait(_Post(intent.as_notification(), then_close=exchange))

    def _post_headers(self, message: dict[str, Any]) -> httpx.Headers:
        headers = httpx.Headers(self.headers)
        headers["content-type"] = "application/json"
        headers["accept"] = _ACCEPT_BOTH
        if _stateless_version(message) is not None:
            tool = (message.get("params") or {}).get("name") if message.get("method") == "tools/call" else None
            param_headers = self._tool_headers.get(tool) if isinstance(tool, str) else None
            headers.update(H.request_headers(message, param_headers=param_headers))
            return headers
        if self.session_id is not None:
            headers["mcp-session-id"] = self.session_id
        if self.protocol_version is not None and message.get("method") != "initialize":
            headers["mcp-protocol-version"] = self.protocol_version
        return headers

    def _stream_headers(self, last_event_id: str | None) -> httpx.Headers:
        headers = httpx.Headers(self.headers)
        headers["accept"] = _SSE
        if self.session_id is not None:
            headers["mcp-session-id"] = self.session_id
        if self.protocol_version is not None:
            headers["mcp-protocol-version"] = self.protocol_version
        if last_event_id is not None:
            headers["last-event-id"] = last_event_id
        return headers

    async def _post(self, post: _Post, sent: asyncio.Event) -> None:
        message, exchange = post.message, post.exchange
        try:
            try:
                headers = self._post_headers(message)
            except ValueError as exc:
                sent.set()
                self._fail(exchange, f"cannot send {message.get('method')}: {exc}", INVALID_PARAMS)
                return
            body = _encode(message)
            headers["content-length"] = str(len(body))
            async with self._http.stream("POST", self.url, content=_Body(body, sent), headers=headers) as response:
                sent.set()
                await self._read_answer(response, post, "mcp-session-id" in headers)
        except _NETWORK_ERRORS as exc:
            if isinstance(exc, _UNREACHABLE):
                self._give_up(exc)
                return
            if isinstance(exc, _CUT) and not await self._reachable():
                return  # the transport is over: the connection fails every pending call
            if exchange is None:
                logger.warning("POST of %s to %s failed: %s", _label(message), self.url, _describe(exc))
            self._fail(exchange, f"POST {self.url} failed: {_describe(exc)}")
        except Exception as exc:
            logger.exception("the HTTP transport failed on %s", _label(message))
            self._fail(exchange, f"the HTTP transport failed: {_describe(exc)}")
        finally:
            sent.set()
            closing = post.then_close
            if closing is not None and closing.task is not None:
                closing.task.cancel()

    # -------------------------------------------------------------- reading

    async def _read_answer(self, response: httpx.Response, post: _Post, carried_session: bool) -> None:
        status, exchange = response.status_code, post.exchange
        if not 200 <= status < 300:
            await self._refused(response, post, carried_session)
            return
        if exchange is not None and exchange.method == "initialize":
            self.session_id = response.headers.get("mcp-session-id") or None
        if exchange is None:
            await response.aread()
            if post.message.get("method") == "notifications/initialized" and self.open_get_stream:
                self._listener = self._listener or self._spawn(self._listen())
            return
        if _media_type(response) == _SSE:
            await self._read_request_stream(response, exchange)
        elif status != 202:
            body = await response.aread()
            try:
                decoded = decode_json(body)
            except ParseError as exc:  # not JSON, or nested past codec.MAX_NESTING_DEPTH
                self._fail(
                    exchange,
                    f"HTTP {status} from server with a body that is not JSON ({exc.message}): {_snippet(body)}",
                )
                return
            self._deliver(decoded if isinstance(decoded, list) else [decoded])
        self._fail(exchange, f"HTTP {status} from server ended without an answer to {exchange.method}")

    async def _read_request_stream(self, response: httpx.Response, exchange: _Exchange) -> None:
        decoder = SSEDecoder()
        problem = "the server closed the stream before answering"
        cut = False
        try:
            await self._read_events(response, decoder)
        except SSEEventTooLarge as exc:
            self._fail(exchange, f"the server sent an SSE event larger than {exc.limit} bytes")
            return
        except _NETWORK_ERRORS as exc:
            problem = f"the stream broke: {_describe(exc)}"
            cut = isinstance(exc, _CUT)
        if exchange.answered or exchange.abandoned:
            return
        # Waiting ``retry`` before learning that the server died would keep every caller waiting
        # for nothing; a server that is still there is resumed (or blamed) as usual.
        if cut and not await self._reachable():
            return
        if exchange.stateless or decoder.last_event_id is None:
            self._fail(exchange, f"{problem} (POST {self.url}, {exchange.method})")
            return
        await self._resume(exchange, decoder, problem)

    async def _resume(self, exchange: _Exchange, decoder: SSEDecoder, problem: str) -> None:
        """SEP-1699 polling: wait ``retry`` ms, then ``GET`` with ``Last-Event-ID``, until the answer comes."""
        attempts = 0
        while not exchange.answered and not exchange.abandoned:
            if attempts >= self.max_reconnects:
                self._fail(exchange, f"{problem}; gave up after {attempts} reconnections to {self.url}")
                return
            attempts += 1
            await asyncio.sleep(_retry_seconds(decoder))
            before = decoder.last_event_id
            headers = self._stream_headers(before)
            try:
                async with self._http.stream("GET", self.url, headers=headers) as response:
                    if response.status_code != 200 or _media_type(response) != _SSE:
                        body = await _read_limited(response)
                        expired = _expired(response.status_code, self.session_id)
                        self._fail(
                            exchange,
                            f"could not resume the stream of {exchange.method} (GET {self.url}, "
                            f"Last-Event-ID {before}): {expired}HTTP {response.status_code}: {_snippet(body)}",
                        )
                        return
                    if await self._read_events(response, decoder):
                        attempts = 0  # the server is polling us along, not failing
            except SSEEventTooLarge as exc:
                self._fail(exchange, f"the server sent an SSE event larger than {exc.limit} bytes")
                return
            except _UNREACHABLE as exc:
                self._give_up(exc)  # nothing to resume from: no backoff against a refused connection
                return
            except _NETWORK_ERRORS as exc:
                problem = f"GET {self.url} failed: {_describe(exc)}"
            if decoder.last_event_id != before:
                attempts = 0

    async def _listen(self) -> None:
        """The handshake-era GET stream: server messages that belong to no request."""
        decoder = SSEDecoder()
        idle = 0
        while not self._closed:
            before = decoder.last_event_id
            delivered = 0
            try:
                async with self._http.stream("GET", self.url, headers=self._stream_headers(before)) as response:
                    if response.status_code != 200 or _media_type(response) != _SSE:
                        if response.status_code != 405:  # 405: the server offers no GET stream
                            body = await _read_limited(response)
                            logger.info("no GET stream from %s: HTTP %d %s", self.url, response.status_code, body[:80])
                        return
                    delivered = await self._read_events(response, decoder)
            except SSEEventTooLarge as exc:
                logger.warning("closing the GET stream from %s: %s", self.url, exc)
            except _UNREACHABLE as exc:
                self._give_up(exc)
                return
            except _NETWORK_ERRORS as exc:
                logger.debug("the GET stream from %s broke: %s", self.url, _describe(exc))
            idle = 0 if delivered or decoder.last_event_id != before else idle + 1
            if idle > self.max_reconnects:
                logger.info("giving up the GET stream from %s after %d empty reconnections", self.url, idle - 1)
                return
            await asyncio.sleep(_retry_seconds(decoder))

    async def _read_events(self, response: httpx.Response, decoder: SSEDecoder) -> int:
        """Queue every message of an SSE response as it arrives; how many there were."""
        count = 0
        try:
            async for chunk in response.aiter_bytes():
                try:
                    events = decoder.feed(chunk)
                except SSEEventTooLarge as exc:
                    self._deliver_events(exc.events)
                    raise
                count += self._deliver_events(events)
        finally:
            decoder.end()
        return count

    def _deliver_events(self, events: list[SSEEvent]) -> int:
        messages: list[Any] = []
        for event in events:
            if not event.data or event.event != "message":
                continue  # a priming event (id, empty data), or a type MCP does not use
            try:
                messages.append(decode_json(event.data))
            except ParseError as exc:
                logger.warning("skipping an SSE event from %s (%s): %s", self.url, exc, event.data[:_SNIPPET])
        self._deliver(messages)
        return len(messages)

    async def _refused(self, response: httpx.Response, post: _Post, carried_session: bool) -> None:
        body = await _read_limited(response)
        status, exchange = response.status_code, post.exchange
        if exchange is None:
            logger.warning("the server refused %s: HTTP %d: %s", _label(post.message), status, _snippet(body))
            return
        error = _jsonrpc_error(body)
        if error is None:
            error = {"code": INTERNAL_ERROR, "message": f"HTTP {status} from server: {_snippet(body)}"}
        if carried_session and (expired := _expired(status, self.session_id)):
            error = {**error, "message": f"{expired}{error['message']}"}
        # The id of an error body may be null (the server could not tell which request): it is ours.
        self._deliver([{"jsonrpc": "2.0", "id": exchange.request_id, "error": error}])

    # ------------------------------------------------------------ delivery

    def _deliver(self, messages: list[Any]) -> None:
        batch = [self._inspect(message) for message in messages if isinstance(message, dict)]
        if batch and not self._closed and self._unreachable is None:
            self._inbox.put_nowait(batch)

    def _inspect(self, message: dict[str, Any]) -> dict[str, Any]:
        """Note what the transport must learn from an answer on its way to the caller."""
        if "method" in message or "id" not in message:
            return message
        exchange = self._exchanges.pop(message["id"], None)
        if exchange is None:
            return message
        exchange.answered = True
        result = message.get("result")
        if isinstance(result, dict):
            if exchange.method == "initialize" and isinstance(result.get("protocolVersion"), str):
                self.protocol_version = result["protocolVersion"]
            elif exchange.method == "tools/list" and exchange.stateless:
                self._learn_tools(result)
        return message

    def _learn_tools(self, result: dict[str, Any]) -> None:
        """Remember each tool's ``x-mcp-header`` annotations; drop tools whose annotations break
        the rules (SEP-2243: a client MUST leave them out of ``tools/list``)."""
        tools = result.get("tools")
        if not isinstance(tools, list):
            return
        kept: list[Any] = []
        for tool in tools:
            name = tool.get("name") if isinstance(tool, dict) else None
            if not isinstance(name, str):
                kept.append(tool)
                continue
            try:
                self._tool_headers[name] = H.parse_x_mcp_headers(tool.get("inputSchema"))
            except H.XMcpHeaderError as exc:
                logger.warning("leaving tool %r out of tools/list: %s", name, exc)
                self._tool_headers.pop(name, None)
                continue
            kept.append(tool)
        result["tools"] = kept

    def _fail(self, exchange: _Exchange | None, message: str, code: int = INTERNAL_ERROR) -> None:
        """Answer ``exchange``'s request with an error, unless it is answered or abandoned."""
        if exchange is None or exchange.answered or exchange.abandoned:
            return
        self._deliver([{"jsonrpc": "2.0", "id": exchange.request_id, "error": {"code": code, "message": message}}])

    # ------------------------------------------------------- a server gone

    async def _reachable(self) -> bool:
        """Whether anything still serves our URL, after a connection broke under a request.

        Every request cut at the same moment (the server died) shares one check. When the
        answer is no, the transport is over before this returns.
        """
        if self._probe is None or self._probe.done():
            self._probe = self._spawn(self._check_reachable())
        return await asyncio.shield(self._probe)

    async def _check_reachable(self) -> bool:
        # A GET without the session: it opens no stream and touches no state, and any HTTP
        # answer, even an error status, proves that something serves the URL.
        headers = httpx.Headers(self.headers)
        headers["accept"] = _SSE
        failure: BaseException | None = None
        for _ in range(_PROBE_ATTEMPTS):  # a pooled connection the server had dropped fails once, harmlessly
            try:
                async with self._http.stream("GET", self.url, headers=headers, timeout=_PROBE_TIMEOUT):
                    return True
            except _UNREACHABLE as exc:
                failure = exc
                break
            except httpx.TimeoutException:
                return True  # it took the connection and is slow to answer: not gone
            except _NETWORK_ERRORS as exc:
                failure = exc  # it took the connection and dropped it without an HTTP answer
        assert failure is not None
        self._give_up(failure)
        return False

    def _give_up(self, exc: BaseException) -> None:
        """The server cannot be reached: end the transport, so that every pending call fails
        now with ``ConnectionClosed`` (instead of each retrying a server that is not there)."""
        if self._closed or self._unreachable is not None:
            return
        self._unreachable = f"the server at {self.url} cannot be reached: {_describe(exc)}"
        logger.info("%s; closing the HTTP transport", self._unreachable)
        current = asyncio.current_task()
        for task in (self._sender, self._listener, *self._tasks):
            if task is not None and task is not current:
                task.cancel()
        self._inbox.put_nowait(None)

    # ------------------------------------------------------------ lifecycle

    def _spawn(self, coroutine: Coroutine[Any, Any, _T]) -> asyncio.Task[_T]:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _delete_session(self) -> None:
        headers = self._stream_headers(None)
        del headers["accept"]
        try:
            async with asyncio.timeout(_DELETE_TIMEOUT):
                response = await self._http.delete(self.url, headers=headers)
        except Exception as exc:  # best effort: closing must not fail because the server misbehaves
            logger.debug("DELETE of the session at %s failed: %s", self.url, _describe(exc))
            return
        if response.status_code >= 300 and response.status_code not in (404, 405):
            logger.debug("DELETE of the session at %s: HTTP %d", self.url, response.status_code)


def _stateless_version(message: dict[str, Any]) -> str | None:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(M.PROTOCOL_VERSION) if isinstance(meta, dict) else None
    return version if isinstance(version, str) else None


def _media_type(response: httpx.Response) -> str:
    content_type: str = response.headers.get("content-type", "")
    return content_type.partition(";")[0].strip().lower()


def _retry_seconds(decoder: SSEDecoder) -> float:
    return (decoder.retry_ms if decoder.retry_ms is not None else _DEFAULT_RETRY_MS) / 1000


def _expired(status: int, session_id: str | None) -> str:
    if status == 404 and session_id is not None:
        return "the server ended the session (HTTP 404); start a new one with initialize: "
    return ""


async def _read_limited(response: httpx.Response) -> bytes:
    body = bytearray()
    with contextlib.suppress(*_NETWORK_ERRORS):
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) >= _ERROR_BODY_LIMIT:
                break
    return bytes(body)


def _jsonrpc_error(body: bytes) -> dict[str, Any] | None:
    try:
        decoded = decode_json(body)
    except ParseError:
        return None
    error = decoded.get("error") if isinstance(decoded, dict) else None
    if isinstance(error, dict) and isinstance(error.get("code"), int) and isinstance(error.get("message"), str):
        return error
    return None


def _snippet(body: bytes) -> str:
    text = body.decode("utf-8", "replace").strip()
    return text[:_SNIPPET] if text else "(empty body)"


def _label(message: dict[str, Any]) -> str:
    method = message.get("method")
    return str(method) if method is not None else f"the answer to request {message.get('id')!r}"


def _describe(exc: BaseException) -> str:
    text = str(exc)
    described = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    # httpx says "All connection attempts failed"; the system's reason ("Connection refused") is further down.
    reason = _system_reason(exc)
    return f"{described} ({reason})" if reason and reason not in described else described


def _system_reason(exc: BaseException) -> str | None:
    seen: set[int] = set()
    cause: BaseException | None = exc
    reason = None
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, OSError) and isinstance(cause.errno, int) and cause.errno > 0:
            reason = os.strerror(cause.errno)
        cause = cause.__cause__ or cause.__context__
    return reason
