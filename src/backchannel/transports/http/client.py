"""Streamable HTTP, client side: one POST per message, answers as JSON or SSE.

``HttpClientTransport`` speaks both eras to one URL and tells them apart per
message. A message whose ``params._meta`` carries
``io.modelcontextprotocol/protocolVersion`` is stateless-era (2026-07-28): it
goes with the SEP-2243 headers (``MCP-Protocol-Version``, ``Mcp-Method``,
``Mcp-Name``, ``Mcp-Param-*``) and no session id, and closing its response is
its cancellation. Any other message is handshake-era (2025-03-26 .. 2025-11-25):
it carries ``Mcp-Session-Id`` and the version ``initialize`` chose, a broken SSE
stream is resumed with ``GET`` + ``Last-Event-ID`` (SEP-1699 polling),
cancellation is ``notifications/cancelled``, and a ``GET`` stream listens for
messages that belong to no request.

The transport moves messages and headers and reads no result: what the headers
need from the session (the negotiated version, the tools' ``x-mcp-header``
annotations) the client hands over through ``NegotiatedHeaders``.

Whatever goes wrong with the HTTP exchange of a request (an error status, a
body that is not JSON, a stream that ends early) becomes a JSON-RPC error answer
to that request, so no caller waits forever. A server that cannot be reached at
all is another matter: a refused connection (or a connect timeout) ends the
transport, so every pending call fails at once with ``ConnectionClosed`` and so
does every later one. A connection cut under a request is not taken as proof
either way: one GET asks whether anything still serves the URL, and only a
stream whose server still answers is resumed.

A server that speaks only the deprecated HTTP+SSE transport (2024-11-05) is found as the
backwards-compatibility guide says: the POST of ``initialize`` is refused with 400, 404 or
405, and a GET of the URL opens an event stream that names its endpoint. From then on every
message goes that way (``legacy_sse_client.py``); ``legacy_fallback=False`` turns this off.

The rooms: ``client_link`` (the state both halves share), ``client_send``
(POSTs in order, cancelling), ``client_streams`` (reading and resuming).
"""

from __future__ import annotations

__all__ = ["HttpClientTransport"]

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

import httpx2

from ...telemetry import conventions as C
from ...telemetry.activation import meter, tracer
from ...types.outgoing import CancelIntent, Outgoing
from ..base import Transport, TransportBroken, TransportClosed
from . import client_send
from .client_link import HttpLink, describe
from .legacy_sse_client import FALLBACK_STATUSES, LegacySseStream
from .negotiated import NegotiatedHeaders, ParamHeaders

logger = logging.getLogger("backchannel.http")
_DELETE_TIMEOUT = 5.0


class HttpClientTransport(HttpLink, Transport, NegotiatedHeaders):
    """The client end of Streamable HTTP at ``url``; hand it to ``Client`` (or use ``Client.http``).

    ``headers`` go on every request (say, ``Authorization``); ``auth`` (an ``httpx2.Auth``, such as
    ``backchannel.client.oauth.OAuth``) signs each one and answers 401 and 403. Pass ``httpx_client``
    to choose TLS, proxies or an in-process ``httpx2.ASGITransport``; the transport
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
        httpx_client: httpx2.AsyncClient | None = None,
        open_get_stream: bool = True,
        max_reconnects: int = 5,
        legacy_fallback: bool = True,
        auth: httpx2.Auth | None = None,
    ) -> None:
        super().__init__(
            url,
            headers=headers,
            httpx_client=httpx_client,
            open_get_stream=open_get_stream,
            max_reconnects=max_reconnects,
            auth=auth,
        )
        self.legacy_fallback = legacy_fallback
        #: Set when the server turned out to speak only the HTTP+SSE transport: every message goes there.
        self.legacy: LegacySseStream | None = None

    # ------------------------------------------------------------ interface

    async def start(self) -> None:
        self.describe()  # with telemetry on: the spans of the connection over this transport read it
        self._start_sender()

    async def receive(self) -> list[Any] | None:
        batch = await self.inbox.get()
        if batch is None:
            self.inbox.put_nowait(None)  # every later call sees the end too
            if self.unreachable is not None:
                raise TransportBroken(self.unreachable)
        return batch

    def write(self, items: list[Outgoing]) -> None:
        if self.closed:
            raise TransportClosed("the HTTP transport is closed")
        if self.unreachable is not None:
            raise TransportBroken(self.unreachable)
        if self.legacy is not None:
            self.legacy.write(items)
            return
        for item in items:
            if isinstance(item, CancelIntent):
                client_send.cancel(self, item)
            else:
                client_send.queue(self, item)
        self._start_sender()

    async def close(self) -> None:
        """Stop every exchange, end the session with ``DELETE``, and release the HTTP client."""
        if self.closed:
            return
        self.closed = True
        if self.legacy is not None:
            await self.legacy.close()
        tasks = [task for task in (self.sender, self.listener, *self.tasks) if task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self.session_id is not None and self.unreachable is None:  # no DELETE to a server that is gone
            await self._delete_session()
        if self.owns_client:
            await self.http.aclose()
        self.inbox.put_nowait(None)

    def describe(self) -> dict[str, Any] | None:
        """With telemetry on, set and return ``telemetry_attributes``: what the spans of the
        connection over this transport say of it (the server's address and port, TCP, HTTP; the
        session id joins them once ``initialize`` brings it); None when telemetry is off."""
        if tracer() is None and meter() is None:
            return None
        url = httpx2.URL(self.url)
        described: dict[str, Any] = {
            C.SERVER_ADDRESS: url.host,
            C.SERVER_PORT: url.port or (443 if url.scheme == "https" else 80),
            C.NETWORK_TRANSPORT: "tcp",
            C.NETWORK_PROTOCOL_NAME: "http",
        }
        if self.session_id is not None:
            described[C.MCP_SESSION_ID] = self.session_id
        self.telemetry_attributes = described
        return described

    # ------------------------------------------------- told by the client

    def use_protocol_version(self, version: str) -> None:
        self.protocol_version = version

    def use_tool_headers(self, tool: str, headers: ParamHeaders | None) -> None:
        if headers is None:
            self.tool_headers.pop(tool, None)
        else:
            self.tool_headers[tool] = headers

    async def fall_back(self, message: dict[str, Any], status: int) -> bool:
        """The guide's test for an old server: ``initialize`` refused with 400/404/405, and a GET of
        the URL naming an HTTP+SSE endpoint. If so, ``message`` is sent there and True returned."""
        if (
            not self.legacy_fallback
            or status not in FALLBACK_STATUSES
            or message.get("method") != "initialize"
            or self.session_id is not None
            or self.legacy is not None
        ):
            return False
        stream = LegacySseStream(self.url, self.http, self.headers, self.deliver, self.lose, auth=self.auth)
        problem = await stream.open()
        if problem is not None:
            logger.debug("POST %s: HTTP %d, and no HTTP+SSE transport there either: %s", self.url, status, problem)
            return False
        if self.closed:
            await stream.close()
            return True  # nothing waits for the answer any more
        logger.info("%s speaks the deprecated HTTP+SSE transport (2024-11-05): using it", self.url)
        self.legacy = stream
        stream.write([message])
        return True

    # ------------------------------------------------------------ lifecycle

    def _start_sender(self) -> None:
        if self.sender is None and not self.closed:
            self.sender = asyncio.get_running_loop().create_task(client_send.send_in_order(self))

    async def _delete_session(self) -> None:
        headers = self.stream_headers(None)
        del headers["accept"]
        try:
            async with asyncio.timeout(_DELETE_TIMEOUT):
                response = await self.http.delete(self.url, headers=headers, auth=self.auth)
        except Exception as exc:  # best effort: closing must not fail because the server misbehaves
            logger.debug("DELETE of the session at %s failed: %s", self.url, describe(exc))
            return
        if response.status_code >= 300 and response.status_code not in (404, 405):
            logger.debug("DELETE of the session at %s: HTTP %d", self.url, response.status_code)
