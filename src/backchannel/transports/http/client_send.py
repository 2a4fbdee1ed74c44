"""Sending: one POST per message, in order, each with the headers of its era; and cancelling.

A message whose ``params._meta`` carries ``io.modelcontextprotocol/protocolVersion``
is stateless-era (2026-07-28): it goes with the SEP-2243 headers and no session id,
and closing its response is its cancellation. Any other message is handshake-era:
it carries ``Mcp-Session-Id`` and ``MCP-Protocol-Version``, and is cancelled with
``notifications/cancelled``.
"""

from __future__ import annotations

__all__ = ["cancel", "queue", "send_in_order"]

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import msgspec

from ...framing import http as H
from ...telemetry.propagation import headers_from_meta
from ...types.errors import INVALID_PARAMS
from ...types.ids import RequestId
from ...types.outgoing import CancelIntent
from .client_link import (
    ACCEPT_BOTH,
    CUT,
    NETWORK_ERRORS,
    UNREACHABLE,
    Exchange,
    HttpLink,
    Post,
    describe,
    label,
    stateless_version,
)
from .client_streams import read_answer

logger = logging.getLogger("backchannel.http")
_encode = msgspec.json.encode


class _Body:
    """A request body that says when the HTTP stack has taken all of it: the POST is sent.

    Iterable more than once, so httpx2 may replay it.
    """

    def __init__(self, data: bytes, sent: asyncio.Event) -> None:
        self.data = data
        self.sent = sent

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.data
        self.sent.set()


def queue(link: HttpLink, message: dict[str, Any]) -> None:
    """Queue ``message`` for ``send_in_order``; a request gets the exchange its answer settles."""
    exchange = None
    if "method" in message and "id" in message:
        request_id: RequestId = message["id"]
        exchange = Exchange(request_id, message["method"], stateless_version(message) is not None)
        link.exchanges[request_id] = exchange
    link.outbox.put_nowait(Post(message, exchange))


async def send_in_order(link: HttpLink) -> None:
    """POST each queued message once the one before it is sent; never wait for an answer."""
    while True:
        post = await link.outbox.get()
        if post.exchange is not None and post.exchange.abandoned:
            continue  # cancelled before it left: nothing to send, nothing to cancel
        sent = asyncio.Event()
        task = link.spawn(_post(link, post, sent))
        if post.exchange is not None:
            post.exchange.task = task
        waiter = asyncio.ensure_future(sent.wait())
        try:
            await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()


def cancel(link: HttpLink, intent: CancelIntent) -> None:
    """Cancel a request the way its era does; nothing at all for one already answered."""
    exchange = link.exchanges.pop(intent.request_id, None)
    if exchange is None:
        return
    exchange.abandoned = True
    if exchange.task is None:
        return  # still queued: the sender skips it
    if exchange.stateless:
        exchange.task.cancel()  # closing the response is the cancellation (2026-07-28)
    else:
        # Say so, then stop reading: the server will not answer, and may keep the stream open.
        link.outbox.put_nowait(Post(intent.as_notification(), then_close=exchange))


def _post_headers(link: HttpLink, message: dict[str, Any]) -> httpx2.Headers:
    headers = httpx2.Headers(link.headers)
    headers["content-type"] = "application/json"
    headers["accept"] = ACCEPT_BOTH
    params = message.get("params")
    meta = params.get("_meta") if type(params) is dict else None
    if type(meta) is dict and "traceparent" in meta:
        # The trace context the message carries goes along as W3C headers too, for what sits
        # between us and the server (a proxy, an HTTP-level instrumentation) and reads only those.
        headers.update(headers_from_meta(meta))
    if stateless_version(message) is not None:
        tool = (message.get("params") or {}).get("name") if message.get("method") == "tools/call" else None
        param_headers = link.tool_headers.get(tool) if isinstance(tool, str) else None
        headers.update(H.request_headers(message, param_headers=param_headers))
        return headers
    if link.session_id is not None:
        headers["mcp-session-id"] = link.session_id
    if link.protocol_version is not None and message.get("method") != "initialize":
        headers["mcp-protocol-version"] = link.protocol_version
    return headers


async def _post(link: HttpLink, post: Post, sent: asyncio.Event) -> None:
    message, exchange = post.message, post.exchange
    try:
        try:
            headers = _post_headers(link, message)
        except ValueError as exc:
            sent.set()
            link.fail(exchange, f"cannot send {message.get('method')}: {exc}", INVALID_PARAMS)
            return
        body = _encode(message)
        headers["content-length"] = str(len(body))
        post_it = link.http.stream("POST", link.url, content=_Body(body, sent), headers=headers, auth=link.auth)
        async with post_it as response:
            sent.set()
            await read_answer(link, response, post, "mcp-session-id" in headers)
    except NETWORK_ERRORS as exc:
        if isinstance(exc, UNREACHABLE):
            link.give_up(exc)
            return
        if isinstance(exc, CUT) and not await link.reachable():
            return  # the transport is over: the connection fails every pending call
        if exchange is None:
            logger.warning("POST of %s to %s failed: %s", label(message), link.url, describe(exc))
        link.fail(exchange, f"POST {link.url} failed: {describe(exc)}")
    except Exception as exc:
        logger.exception("the HTTP transport failed on %s", label(message))
        link.fail(exchange, f"the HTTP transport failed: {describe(exc)}")
    finally:
        sent.set()
        closing = post.then_close
        if closing is not None and closing.task is not None:
            closing.task.cancel()
