"""The responses of a handshake-era HTTP session: a request POST's answer, the GET stream, a resumption.

``HttpApp`` (``app.py``) checks each HTTP request and finds its session; these write
what the session sends back. A request POST is answered with plain JSON when the
answer is all there is, else with a resumable SSE stream (``answer_request_post``);
the GET stream carries what belongs to no request (``serve_get_stream``); a GET with
``Last-Event-ID`` replays a stream and follows it (``resume_stream``).
"""

from __future__ import annotations

__all__ = ["RAW_JSON_HEADERS", "RAW_SSE_HEADERS", "answer_request_post", "resume_stream", "serve_get_stream"]

import asyncio
from typing import Any

from ...framing import http as H
from ...framing.sse import encode_comment, encode_event
from ...protocol.events import RequestId
from ...types.errors import InvalidRequest
from .asgi import Receive, Send, encode_headers, send_bytes, send_start
from .event_store import EventStore, parse_event_id
from .responses import StreamingResponse, finish_from_post_task, forward_stream, pump_get_stream, send_rejection
from .sessions import HttpSession
from .streams import (
    CLOSE_RESPONSE,
    END_STREAM,
    JSON_HEADERS,
    SSE_HEADERS,
    MessageFeed,
    StreamSignal,
    encode_message,
    is_answer_to,
)

RAW_JSON_HEADERS = encode_headers(dict(JSON_HEADERS))
RAW_SSE_HEADERS = encode_headers(SSE_HEADERS)


async def answer_request_post(
    session: HttpSession, message: dict[str, Any], receive: Receive, send: Send, *, sse_after: float, retry_ms: int
) -> None:
    """Answer a request POST: plain JSON when the answer is all there is, else a stream.

    The POST's own task runs the request's handler (no task of its own, no hand-over
    turn), and handlers run in the context of the HTTP request that carries them.
    The first message the handler sends before its answer, or ``sse_after`` seconds
    of silence, starts a writer task that streams the response while it goes on.
    """
    request_id: RequestId = message["id"]
    feed = session.open_feed(request_id)
    # The client is here until this response ends (``_respond`` says when): till then the
    # idle reaper spares the session, whatever its requests wait for.
    session.attach()
    loop = asyncio.get_running_loop()
    writer: asyncio.Task[None] | None = None
    responding = False  # whether ``_respond`` runs, which detaches when the response ends
    streaming = StreamingResponse()

    def start_writer(message: dict[str, Any] | StreamSignal | None = None) -> None:
        nonlocal writer, responding
        if writer is None and (message is None or not is_answer_to(message, request_id)):
            feed.on_put = None
            timer.cancel()
            responding = True
            writer = loop.create_task(_respond(session, feed, request_id, receive, send, 0.0, retry_ms, streaming))

    try:
        handler = session.feed_messages([message], serve_in_caller_task=request_id)
        if handler is None:  # answered at once (a plain synchronous tool), or refused
            responding = True
            await _respond(session, feed, request_id, receive, send, sse_after, retry_ms)
            return
        timer = loop.call_later(sse_after, start_writer)
        feed.on_put = start_writer
        try:
            await handler
        finally:
            feed.on_put = None
            timer.cancel()
        if writer is not None:
            if not await finish_from_post_task(streaming, send):
                await writer
            return
        if feed.queue.empty():  # the handler was stopped (cancelled): no answer will come
            feed.put(END_STREAM)
        responding = True
        await _respond(session, feed, request_id, receive, send, 0.0, retry_ms)
    finally:
        if not responding:
            session.detach()


async def _respond(
    session: HttpSession,
    feed: MessageFeed,
    request_id: RequestId,
    receive: Receive,
    send: Send,
    wait: float,
    retry_ms: int,
    streaming: StreamingResponse | None = None,
) -> None:
    """Send the response of a request POST; the session is detached from it when it ends."""
    try:
        first = await feed.first(wait)
        if first is not None and is_answer_to(first, request_id):
            session.close_feed(request_id)
            await send_bytes(send, 200, encode_message(first), [*RAW_JSON_HEADERS, session.header_bytes])
            return
        # Something other than the answer came first (or nothing yet): stream, resumably.
        closing = first is CLOSE_RESPONSE
        stream, sink = session.start_stream(feed, None if closing else first, attached=not closing)
        priming = encode_event("", event_id=f"{stream.stream_id}_0", retry_ms=retry_ms)
        await send_start(send, 200, [*RAW_SSE_HEADERS, session.header_bytes])
        if closing:  # the handler asked to end this response at once (SEP-1699): the client polls
            await send({"type": "http.response.body", "body": priming, "more_body": False})
        else:
            assert sink is not None
            if streaming is not None:
                streaming.sink = sink
            await forward_stream(send, receive, priming, sink, 0, streaming)
    finally:
        session.detach()


async def serve_get_stream(session: HttpSession, receive: Receive, send: Send) -> None:
    """Serve the session's GET stream (what belongs to no request) until the client leaves;
    the caller has checked that the session has none open."""
    feed = MessageFeed(None)
    session.transport.standalone = feed
    session.attach()
    try:
        await send_start(send, 200, [*RAW_SSE_HEADERS, session.header_bytes])
        await send({"type": "http.response.body", "body": encode_comment("stream open"), "more_body": True})
        await pump_get_stream(send, receive, feed)
    finally:
        session.detach()
        if session.transport.standalone is feed:
            session.transport.standalone = None


async def resume_stream(
    session: HttpSession, last_event_id: str, store: EventStore, receive: Receive, send: Send
) -> None:
    """Replay the session's stream after ``last_event_id``, then follow it while it goes on."""
    place = parse_event_id(last_event_id)
    stream = session.streams.get(place[0]) if place is not None else None
    if place is None or stream is None:  # not ours, or another session's stream: replay nothing
        await send_rejection(send, H.Rejection(400, InvalidRequest(f"unknown Last-Event-ID {last_event_id!r}")))
        return
    stream_id, position = place
    sink = stream.attach() if stream is not None else None
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
