"""Reading what answers a POST: JSON or an SSE stream, resumed after a break; and the GET stream.

Whatever goes wrong with the response to a request (an error status, a body
that is not JSON, a stream that ends early) becomes a JSON-RPC error answer to
that request, so no caller waits forever. A handshake-era stream that breaks
with an event id is resumed with ``GET`` + ``Last-Event-ID`` (SEP-1699
polling); a stateless-era one is not (2026-07-28 has no resumption).
"""

from __future__ import annotations

__all__ = ["listen", "read_answer"]

import asyncio
import contextlib
import logging
from typing import Any

import httpx2

from ...framing.codec import decode_json
from ...framing.sse import SSEDecoder, SSEEvent, SSEEventTooLarge
from ...telemetry.conventions import MCP_SESSION_ID, NETWORK_PROTOCOL_VERSION
from ...types.errors import INTERNAL_ERROR, ParseError
from .client_link import (
    CUT,
    NETWORK_ERRORS,
    SNIPPET_CHARS,
    SSE,
    UNREACHABLE,
    Exchange,
    HttpLink,
    Post,
    describe,
    label,
    snippet,
)

logger = logging.getLogger("backchannel.http")

_DEFAULT_RETRY_MS = 1000
_ERROR_BODY_LIMIT = 64 * 1024


async def read_answer(link: HttpLink, response: httpx2.Response, post: Post, carried_session: bool) -> None:
    """Deliver what answers ``post``, or an error answer for its request when nothing does."""
    status, exchange = response.status_code, post.exchange
    if not 200 <= status < 300:
        await _refused(link, response, post, carried_session)
        return
    described = link.telemetry_attributes
    if described is not None and NETWORK_PROTOCOL_VERSION not in described:  # "HTTP/1.1" -> "1.1"
        described[NETWORK_PROTOCOL_VERSION] = response.http_version.removeprefix("HTTP/")
    if exchange is not None and exchange.method == "initialize":
        link.session_id = response.headers.get("mcp-session-id") or None
        if described is not None and link.session_id is not None:
            described[MCP_SESSION_ID] = link.session_id  # the spans from now on name it
    if exchange is None:
        await response.aread()
        if post.message.get("method") == "notifications/initialized" and link.open_get_stream:
            link.listener = link.listener or link.spawn(listen(link))
        return
    if _media_type(response) == SSE:
        await _read_request_stream(link, response, exchange)
    elif status != 202:
        body = await response.aread()
        try:
            decoded = decode_json(body)
        except ParseError as exc:  # not JSON, or nested past codec.MAX_NESTING_DEPTH
            link.fail(
                exchange,
                f"HTTP {status} from server with a body that is not JSON ({exc.message}): {snippet(body)}",
            )
            return
        link.deliver(decoded if isinstance(decoded, list) else [decoded])
    link.fail(exchange, f"HTTP {status} from server ended without an answer to {exchange.method}")


async def _read_request_stream(link: HttpLink, response: httpx2.Response, exchange: Exchange) -> None:
    decoder = SSEDecoder()
    problem = "the server closed the stream before answering"
    cut = False
    try:
        await _read_events(link, response, decoder)
    except SSEEventTooLarge as exc:
        link.fail(exchange, f"the server sent an SSE event larger than {exc.limit} bytes")
        return
    except NETWORK_ERRORS as exc:
        problem = f"the stream broke: {describe(exc)}"
        cut = isinstance(exc, CUT)
    if exchange.answered or exchange.abandoned:
        return
    # Waiting ``retry`` before learning that the server died would keep every caller waiting
    # for nothing; a server that is still there is resumed (or blamed) as usual.
    if cut and not await link.reachable():
        return
    if exchange.stateless or decoder.last_event_id is None:
        link.fail(exchange, f"{problem} (POST {link.url}, {exchange.method})")
        return
    await _resume(link, exchange, decoder, problem)


async def _resume(link: HttpLink, exchange: Exchange, decoder: SSEDecoder, problem: str) -> None:
    """SEP-1699 polling: wait ``retry`` ms, then ``GET`` with ``Last-Event-ID``, until the answer comes."""
    attempts = 0
    while not exchange.answered and not exchange.abandoned:
        if attempts >= link.max_reconnects:
            link.fail(exchange, f"{problem}; gave up after {attempts} reconnections to {link.url}")
            return
        attempts += 1
        await asyncio.sleep(_retry_seconds(decoder))
        before = decoder.last_event_id
        headers = link.stream_headers(before)
        try:
            async with link.http.stream("GET", link.url, headers=headers, auth=link.auth) as response:
                if response.status_code != 200 or _media_type(response) != SSE:
                    body = await _read_limited(response)
                    expired = _session_expired(response.status_code, link.session_id)
                    link.fail(
                        exchange,
                        f"could not resume the stream of {exchange.method} (GET {link.url}, "
                        f"Last-Event-ID {before}): {expired}HTTP {response.status_code}: {snippet(body)}",
                    )
                    return
                if await _read_events(link, response, decoder):
                    attempts = 0  # the server is polling us along, not failing
        except SSEEventTooLarge as exc:
            link.fail(exchange, f"the server sent an SSE event larger than {exc.limit} bytes")
            return
        except UNREACHABLE as exc:
            link.give_up(exc)  # nothing to resume from: no backoff against a refused connection
            return
        except NETWORK_ERRORS as exc:
            problem = f"GET {link.url} failed: {describe(exc)}"
        if decoder.last_event_id != before:
            attempts = 0


async def listen(link: HttpLink) -> None:
    """The handshake-era GET stream: server messages that belong to no request."""
    decoder = SSEDecoder()
    idle = 0
    while not link.closed:
        before = decoder.last_event_id
        delivered = 0
        try:
            get = link.http.stream("GET", link.url, headers=link.stream_headers(before), auth=link.auth)
            async with get as response:
                if response.status_code != 200 or _media_type(response) != SSE:
                    if response.status_code != 405:  # 405: the server offers no GET stream
                        body = await _read_limited(response)
                        logger.info("no GET stream from %s: HTTP %d %s", link.url, response.status_code, body[:80])
                    return
                delivered = await _read_events(link, response, decoder)
        except SSEEventTooLarge as exc:
            logger.warning("closing the GET stream from %s: %s", link.url, exc)
        except UNREACHABLE as exc:
            link.give_up(exc)
            return
        except NETWORK_ERRORS as exc:
            logger.debug("the GET stream from %s broke: %s", link.url, describe(exc))
        idle = 0 if delivered or decoder.last_event_id != before else idle + 1
        if idle > link.max_reconnects:
            logger.info("giving up the GET stream from %s after %d empty reconnections", link.url, idle - 1)
            return
        await asyncio.sleep(_retry_seconds(decoder))


async def _read_events(link: HttpLink, response: httpx2.Response, decoder: SSEDecoder) -> int:
    """Deliver every message of an SSE response as it arrives; how many there were."""
    count = 0
    try:
        async for chunk in response.aiter_bytes():
            try:
                events = decoder.feed(chunk)
            except SSEEventTooLarge as exc:
                _deliver_events(link, exc.events)
                raise
            count += _deliver_events(link, events)
    finally:
        decoder.end()
    return count


def _deliver_events(link: HttpLink, events: list[SSEEvent]) -> int:
    messages: list[Any] = []
    for event in events:
        if not event.data or event.event != "message":
            continue  # a priming event (id, empty data), or a type MCP does not use
        try:
            messages.append(decode_json(event.data))
        except ParseError as exc:
            logger.warning("skipping an SSE event from %s (%s): %s", link.url, exc, event.data[:SNIPPET_CHARS])
    link.deliver(messages)
    return len(messages)


async def _refused(link: HttpLink, response: httpx2.Response, post: Post, carried_session: bool) -> None:
    body = await _read_limited(response)
    status, exchange = response.status_code, post.exchange
    if exchange is None:
        logger.warning("the server refused %s: HTTP %d: %s", label(post.message), status, snippet(body))
        return
    if await link.fall_back(post.message, status):
        return  # the server speaks the deprecated HTTP+SSE transport: the message went that way
    error = _jsonrpc_error(body)
    if error is None:
        error = {"code": INTERNAL_ERROR, "message": f"HTTP {status} from server: {snippet(body)}"}
    if carried_session and (expired := _session_expired(status, link.session_id)):
        error = {**error, "message": f"{expired}{error['message']}"}
    # The id of an error body may be null (the server could not tell which request): it is ours.
    link.deliver([{"jsonrpc": "2.0", "id": exchange.request_id, "error": error}])


def _media_type(response: httpx2.Response) -> str:
    content_type: str = response.headers.get("content-type", "")
    return content_type.partition(";")[0].strip().lower()


def _retry_seconds(decoder: SSEDecoder) -> float:
    return (decoder.retry_ms if decoder.retry_ms is not None else _DEFAULT_RETRY_MS) / 1000


def _session_expired(status: int, session_id: str | None) -> str:
    if status == 404 and session_id is not None:
        return "the server ended the session (HTTP 404); start a new one with initialize: "
    return ""


async def _read_limited(response: httpx2.Response) -> bytes:
    body = bytearray()
    with contextlib.suppress(*NETWORK_ERRORS):
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
