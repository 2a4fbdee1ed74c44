"""The deprecated HTTP+SSE transport of protocol 2024-11-05, client side.

Two ways in:

- ``HttpClientTransport`` (``Client.http``) falls back to it by itself, as the
  backwards-compatibility guide says (2025-11-25 ``basic/transports.mdx``): when the POST of
  ``initialize`` to the URL is refused with 400, 404 or 405, it GETs the URL, and if that opens
  an event stream whose first event is ``endpoint``, the server speaks the old transport and
  every message goes that way from then on. Otherwise the POST's own error stands.
- ``LegacySseClientTransport(url)`` speaks it from the start, for a server known to be old:
  ``Client(LegacySseClientTransport("http://127.0.0.1:8000/sse"))``.

The exchange: ``GET url`` opens the stream. Its ``endpoint`` event names the URL to POST to,
relative to ``url``; one on another origin is refused, since nothing of ours goes elsewhere.
After it, ``message`` events carry the server's messages. Ours are POSTed to the endpoint one
at a time, in order; the server answers 202 and replies on the stream. A POST that is refused
or fails answers its request with an error. There is no resumption: when the stream ends, the
transport ends, and every pending call fails with ``ConnectionClosed``.
"""

from __future__ import annotations

__all__ = ["ENDPOINT_TIMEOUT", "FALLBACK_STATUSES", "LegacySseClientTransport", "LegacySseStream"]

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx2
import msgspec
from httpx2._client import UseClientDefault

from ...framing.codec import decode_json
from ...framing.sse import SSEDecoder, SSEEvent, SSEEventTooLarge
from ...types.errors import INTERNAL_ERROR, ParseError
from ...types.outgoing import Outgoing
from ..base import Transport, TransportBroken, TransportClosed, wire_messages
from .client_link import NETWORK_ERRORS, SSE, UNREACHABLE, describe, snippet
from .client_streams import _jsonrpc_error, _read_limited  # how a refused POST is read, for both transports

logger = logging.getLogger("backchannel.http")

#: The statuses of a refused ``initialize`` POST after which the guide has a client try the old transport.
FALLBACK_STATUSES = frozenset({400, 404, 405})
#: Seconds the stream may take to name its endpoint.
ENDPOINT_TIMEOUT = 10.0
_encode = msgspec.json.encode


class LegacySseStream:
    """One HTTP+SSE session: the event stream and the POSTs that go with it.

    ``deliver`` gets each batch of the server's messages; ``lost`` is told, once, why the stream
    ended when it ends by itself (not after ``close``). ``open`` first; then ``write``.
    """

    def __init__(
        self,
        url: str,
        http: httpx2.AsyncClient,
        headers: httpx2.Headers,
        deliver: Callable[[list[Any]], None],
        lost: Callable[[str], None],
        *,
        endpoint_timeout: float = ENDPOINT_TIMEOUT,
        auth: httpx2.Auth | UseClientDefault = httpx2.USE_CLIENT_DEFAULT,
    ) -> None:
        self.url = url
        self.http = http
        self.headers = headers
        #: Adds credentials to the GET and every POST (``HttpClientTransport`` passes its own).
        self.auth = auth
        self.deliver = deliver
        self.lost = lost
        self.endpoint_timeout = endpoint_timeout
        #: Where our messages go, from the ``endpoint`` event.
        self.endpoint: str | None = None
        self.closed = False
        self._outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._reader: asyncio.Task[None] | None = None
        self._sender: asyncio.Task[None] | None = None

    async def open(self) -> str | None:
        """Open the stream and wait for its endpoint: None once it came, else why the server does
        not speak this transport (nothing is left open then)."""
        named: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self._reader = asyncio.get_running_loop().create_task(self._read(named))
        try:
            async with asyncio.timeout(self.endpoint_timeout):
                problem = await asyncio.shield(named)
        except TimeoutError:
            problem = f"GET {self.url} named no endpoint within {self.endpoint_timeout:g} s"
        if problem is not None:
            await self.close()
            return problem
        self._sender = asyncio.get_running_loop().create_task(self._send_in_order())
        return None

    def write(self, items: list[Outgoing]) -> None:
        """Queue messages for the endpoint, in order (a cancellation as ``notifications/cancelled``)."""
        for message in wire_messages(items):
            self._outbox.put_nowait(message)

    async def close(self) -> None:
        """Stop reading and sending; closing the stream ends the session on the server."""
        self.closed = True
        tasks = [task for task in (self._reader, self._sender) if task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # ------------------------------------------------------------ the stream

    async def _read(self, named: asyncio.Future[str | None]) -> None:
        headers = httpx2.Headers(self.headers)
        headers["accept"] = SSE
        reason = "the server closed the HTTP+SSE stream"
        try:
            async with self.http.stream("GET", self.url, headers=headers, auth=self.auth) as response:
                media = response.headers.get("content-type", "").partition(";")[0].strip().lower()
                if response.status_code != 200 or media != SSE:
                    named.set_result(f"GET {self.url}: HTTP {response.status_code} ({media or 'no content type'})")
                    return
                decoder = SSEDecoder()
                async for chunk in response.aiter_bytes():
                    for event in decoder.feed(chunk):
                        if self.endpoint is None:
                            problem = self._take_endpoint(event)
                            named.set_result(problem)
                            if problem is not None:
                                return
                        elif event.event == "message" and event.data:
                            self._deliver(event.data)
        except SSEEventTooLarge as exc:
            reason = f"closing the HTTP+SSE stream: {exc}"
        except NETWORK_ERRORS as exc:
            reason = f"the HTTP+SSE stream from {self.url} broke: {describe(exc)}"
        if not named.done():
            named.set_result(reason)
        elif not self.closed:
            self.lost(reason)

    def _take_endpoint(self, event: SSEEvent) -> str | None:
        if event.event != "endpoint":
            return f"GET {self.url}: the first event is {event.event!r}, not 'endpoint'"
        endpoint = urljoin(self.url, event.data.strip())
        ours, theirs = urlsplit(self.url), urlsplit(endpoint)
        if (ours.scheme, ours.netloc) != (theirs.scheme, theirs.netloc):
            return f"GET {self.url}: the endpoint {endpoint} is on another origin; nothing is sent there"
        self.endpoint = endpoint
        return None

    def _deliver(self, data: str) -> None:
        try:
            decoded = decode_json(data)
        except ParseError as exc:
            logger.warning("skipping an SSE event from %s (%s): %s", self.url, exc, data[:200])
            return
        self.deliver(decoded if isinstance(decoded, list) else [decoded])

    # ------------------------------------------------------------ the POSTs

    async def _send_in_order(self) -> None:
        while True:
            await self._post(await self._outbox.get())

    async def _post(self, message: dict[str, Any]) -> None:
        assert self.endpoint is not None
        headers = httpx2.Headers(self.headers)
        headers["content-type"] = "application/json"
        try:
            post = self.http.stream("POST", self.endpoint, content=_encode(message), headers=headers, auth=self.auth)
            async with post as response:
                status = response.status_code
                body = b"" if 200 <= status < 300 else await _read_limited(response)
        except UNREACHABLE as exc:
            self.lost(f"the server at {self.url} cannot be reached: {describe(exc)}")
            return
        except NETWORK_ERRORS as exc:
            self._fail(message, {"code": INTERNAL_ERROR, "message": f"POST {self.endpoint} failed: {describe(exc)}"})
            return
        if 200 <= status < 300:
            return
        error = _jsonrpc_error(body) or {
            "code": INTERNAL_ERROR,
            "message": f"HTTP {status} from server: {snippet(body)}",
        }
        self._fail(message, error)
        if status == 404:  # the session is gone, and with it every answer we wait for
            self.lost(f"the server ended the HTTP+SSE session (POST {self.endpoint}: HTTP 404)")

    def _fail(self, message: dict[str, Any], error: dict[str, Any]) -> None:
        if "method" in message and "id" in message:
            self.deliver([{"jsonrpc": "2.0", "id": message["id"], "error": error}])
        else:
            logger.warning("the server refused %s: %s", message.get("method", "an answer"), error["message"])


class LegacySseClientTransport(Transport):
    """The client end of the HTTP+SSE transport at ``url`` (the server's ``/sse``), from the start.

    ``Client.http`` finds an old server by itself; use this one when the server is known to
    be old. ``headers`` go on every request; ``httpx_client`` chooses TLS and proxies and is
    closed by its owner. ``start`` raises ``TransportBroken`` when the URL does not open an
    HTTP+SSE stream.
    """

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        httpx_client: httpx2.AsyncClient | None = None,
        endpoint_timeout: float = ENDPOINT_TIMEOUT,
    ) -> None:
        if httpx_client is not None and not isinstance(httpx_client, httpx2.AsyncClient):
            raise TypeError("httpx_client must be an httpx2.AsyncClient: backchannel uses httpx2")
        self.owns_client = httpx_client is None
        self.http = httpx_client or httpx2.AsyncClient(timeout=httpx2.Timeout(30, read=None))
        self._inbox: asyncio.Queue[list[Any] | None] = asyncio.Queue()
        self._ended: str | None = None
        self._closed = False
        self.stream = LegacySseStream(
            url,
            self.http,
            httpx2.Headers(dict(headers or {})),
            self._inbox.put_nowait,
            self._lost,
            endpoint_timeout=endpoint_timeout,
        )

    async def start(self) -> None:
        problem = await self.stream.open()
        if problem is not None:
            self._lost(problem)
            raise TransportBroken(problem)

    async def receive(self) -> list[Any] | None:
        batch = await self._inbox.get()
        if batch is None:
            self._inbox.put_nowait(None)  # every later call sees the end too
            if self._ended is not None:
                raise TransportBroken(self._ended)
        return batch

    def write(self, items: list[Outgoing]) -> None:
        if self._closed:
            raise TransportClosed("the HTTP+SSE transport is closed")
        if self._ended is not None:
            raise TransportBroken(self._ended)
        self.stream.write(items)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self.stream.close()
        if self.owns_client:
            await self.http.aclose()
        self._inbox.put_nowait(None)

    def _lost(self, reason: str) -> None:
        if self._ended is None and not self._closed:
            self._ended = reason
            logger.info("%s; closing the HTTP+SSE transport", reason)
            self._inbox.put_nowait(None)
