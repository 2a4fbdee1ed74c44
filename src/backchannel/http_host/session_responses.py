"""The responses of a handshake-era HTTP session: a request POST's answer, the GET stream, a resumption.

``HttpApp`` (``app.py``) checks each HTTP request and finds its session; these write
what the session sends back. A request POST is answered with plain JSON when the
answer is all there is, else with a resumable SSE stream (``answer_request_post``);
the GET stream carries what belongs to no request (``serve_get_stream``); a GET with
``Last-Event-ID`` replays a stream and follows it (``resume_stream``).
"""

from __future__ import annotations

__all__ = [
    "RAW_JSON_HEADERS",
    "RAW_SSE_HEADERS",
    "answer_request_post",
    "names_get_stream",
    "resume_stream",
    "serve_get_stream",
]

import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from ..framing import http as H
from ..framing.sse import encode_event
from ..protocol.events import RequestId
from ..types.errors import InvalidRequest
from .asgi import Receive, Send, encode_headers, send_bytes, send_start
from .client_limits import OpenStream, StreamRules
from .event_store import parse_event_id
from .responses import forward_stream, pump_get_stream, send_rejection
from .sessions import HttpSession
from .shared_events import StateEventStore, follow_remote_stream
from .streams import (
    CLOSE_RESPONSE,
    JSON_HEADERS,
    SSE_HEADERS,
    MessageFeed,
    encode_message,
    is_answer_to,
)

RAW_JSON_HEADERS = encode_headers(dict(JSON_HEADERS))
RAW_SSE_HEADERS = encode_headers(SSE_HEADERS)
#: What a GET stream's id starts with: no request stream's id does (theirs are made of hex digits,
#: and in a fleet of a worker's URL-safe name, a dot and hex digits).
_GET_STREAM = "get~"


def names_get_stream(last_event_id: str) -> bool:
    """Whether a ``Last-Event-ID`` is that of a GET stream: the client is opening the session's
    GET stream again (after its lifetime, say), which is not resumable (nothing is replayed)."""
    return last_event_id.startswith(_GET_STREAM)


async def answer_request_post(
    session: HttpSession,
    message: dict[str, Any],
    receive: Receive,
    send: Send,
    *,
    sse_after: float | None,
    retry_ms: int,
    before_answer: Callable[[dict[str, Any]], Awaitable[None]] | None = None,
    rules: StreamRules | None = None,
) -> None:
    """Answer a request POST: plain JSON when the answer is all there is, else a stream.

    The runtime serves the request the way it serves every request (answered at once, or
    in a task of its own, which inherits this HTTP request's context); this task writes the
    response: the answer as JSON if it comes first within ``sse_after`` seconds (None: however
    long it takes), else a resumable stream that starts with whatever came first.
    ``before_answer`` is awaited with an answer that goes out as plain JSON, before it does
    (``initialize`` saves the session's record there). ``rules``: a stream's response ends at its
    lifetime (the client resumes it with ``Last-Event-ID``).
    """
    request_id: RequestId = message["id"]
    feed = session.open_feed(request_id)
    # The client is here until this response ends (``_respond`` detaches): till then the
    # idle reaper spares the session, whatever its requests wait for.
    session.attach()
    try:
        session.feed_messages([message])
    except BaseException:
        session.detach()
        raise
    await _respond(session, feed, request_id, receive, send, sse_after, retry_ms, before_answer, rules)


async def _respond(
    session: HttpSession,
    feed: MessageFeed,
    request_id: RequestId,
    receive: Receive,
    send: Send,
    wait: float | None,
    retry_ms: int,
    before_answer: Callable[[dict[str, Any]], Awaitable[None]] | None = None,
    rules: StreamRules | None = None,
) -> None:
    """Send the response of a request POST; the session is detached from it when it ends."""
    try:
        first = await feed.first(wait)
        if first is not None and is_answer_to(first, request_id):
            session.close_feed(request_id)
            if before_answer is not None:
                assert type(first) is dict
                await before_answer(first)
            await send_bytes(send, 200, encode_message(first), [*RAW_JSON_HEADERS, session.header_bytes])
            return
        # Something other than the answer came first (or nothing yet): stream, resumably.
        closing = first is CLOSE_RESPONSE
        stream_id = session.new_stream_id()
        if isinstance(session.store, StateEventStore):  # what the handler sent meanwhile waits in the feed
            await session.store.open(stream_id, request_id)
        stream, sink = session.start_stream(feed, None if closing else first, attached=not closing, stream_id=stream_id)
        priming = encode_event("", event_id=f"{stream.stream_id}_0", retry_ms=retry_ms)
        await send_start(send, 200, [*RAW_SSE_HEADERS, session.header_bytes])
        if closing:  # the handler asked to end this response at once (SEP-1699): the client polls
            await send({"type": "http.response.body", "body": priming, "more_body": False})
        else:
            assert sink is not None
            if rules is None:
                await forward_stream(send, receive, priming, sink, 0)
                return
            farewell = rules.farewell
            lifetime = rules.open(None, lambda: stream.end_response(sink, farewell))
            try:
                await forward_stream(send, receive, priming, sink, 0)
            finally:
                rules.close(lifetime)
    finally:
        session.detach()


async def serve_get_stream(
    session: HttpSession,
    receive: Receive,
    send: Send,
    *,
    retry_ms: int,
    lifetime: OpenStream | None = None,
) -> None:
    """Serve the session's GET stream (what belongs to no request) until the client leaves, or
    until ``lifetime`` is over (then its ``farewell``, an SSE ``retry`` field, ends it); the caller has
    checked that the session has none open.

    It opens with a priming event (an id and ``retry_ms``): a client reconnects with that id
    as ``Last-Event-ID`` (``names_get_stream``), and its next stream has another, so a client
    that counts reconnections without news as failures sees each one make progress."""
    feed = MessageFeed(None)
    session.transport.standalone = feed
    session.attach()
    if lifetime is not None:
        lifetime.ends_with(lambda: feed.put(CLOSE_RESPONSE))
    try:
        await send_start(send, 200, [*RAW_SSE_HEADERS, session.header_bytes])
        priming = encode_event("", event_id=f"{_GET_STREAM}{secrets.token_hex(8)}_0", retry_ms=retry_ms)
        await send({"type": "http.response.body", "body": priming, "more_body": True})
        await pump_get_stream(send, receive, feed, lifetime.farewell if lifetime is not None else b"")
    finally:
        session.detach()
        if session.transport.standalone is feed:
            session.transport.standalone = None


async def resume_stream(
    session: HttpSession,
    last_event_id: str,
    receive: Receive,
    send: Send,
    *,
    alive: Callable[[str], Awaitable[bool]],
    lifetime: OpenStream | None = None,
) -> None:
    """Replay the session's stream after ``last_event_id``, then follow it while it goes on,
    or until ``lifetime`` is over (then its ``farewell``, an SSE ``retry`` field, ends the response).

    A stream another worker of the fleet writes is read from the shared state (``alive``
    says whether that worker still serves)."""
    store = session.store
    unknown = H.Rejection(400, InvalidRequest(f"unknown Last-Event-ID {last_event_id!r}"))
    place = parse_event_id(last_event_id)
    stream = session.streams.get(place[0]) if place is not None else None
    if place is not None and stream is None and isinstance(store, StateEventStore):
        exists, _ = await store.request_of(place[0])
        if exists:  # written by another worker (or by this one before a restart)
            session.attach()
            try:
                await send_start(send, 200, [*RAW_SSE_HEADERS, session.header_bytes])
                await follow_remote_stream(store, place[0], place[1], send, receive, alive=alive, lifetime=lifetime)
            finally:
                session.detach()
            return
    if place is None or stream is None:  # not ours, or another session's stream: replay nothing
        await send_rejection(send, unknown)
        return
    stream_id, position = place
    sink = stream.attach() if stream is not None else None
    if lifetime is not None and sink is not None:
        attached, farewell = sink, lifetime.farewell
        lifetime.ends_with(lambda: stream.end_response(attached, farewell))
    session.attach()
    try:
        replay = await store.replay_after(stream_id, position)
        await send_start(send, 200, [*RAW_SSE_HEADERS, session.header_bytes])
        last = position
        for number, event in replay:
            await send({"type": "http.response.body", "body": event, "more_body": True})
            last = number
        if sink is None:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        await forward_stream(send, receive, b"", sink, last)
    finally:
        session.detach()
