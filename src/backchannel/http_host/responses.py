"""Writing a response from a stream: the SSE writer of a request POST, and the GET stream.

The HTTP host (``http_host/``) decides which response a request gets; these loops copy
events to it until the stream ends or the client leaves.
"""

from __future__ import annotations

__all__ = ["forward_stream", "pump_get_stream", "send_rejection"]

from ..framing import http as H
from ..framing.sse import encode_json_event
from .asgi import Mailbox, NoItem, Receive, Send, next_item, send_bytes, watching
from .streams import CLOSE_RESPONSE, JSON_HEADERS, MessageFeed, encode_message


def _collect_waiting(sink: Mailbox[tuple[int, bytes] | None], after: int, buffer: bytearray) -> bool | None:
    """Move the waiting events past ``after`` into ``buffer``: True if the stream ended,
    None if the reader must stop (the client left, or it was dismissed), False if more may come."""
    while not sink.empty():
        item: object = sink.get_nowait()  # the watcher may have put CLIENT_LEFT in it
        if type(item) is NoItem:
            return None
        if item is None:
            return True
        assert isinstance(item, tuple)
        if item[0] > after:
            buffer += item[1]
    return False


async def forward_stream(
    send: Send,
    receive: Receive,
    opening: bytes,
    sink: Mailbox[tuple[int, bytes] | None],
    after: int,
) -> None:
    """Copy events from ``sink`` to the response until the stream ends or the client leaves.

    Events already waiting go out in one write (the priming event with the first event,
    the answer with the end of the stream): on a busy server that halves the writes.
    """
    # The request goes on when its stream's client leaves (it resumes with GET), so noticing
    # the departure only frees this response early: a second's delay is fine.
    async with watching(receive, sink, after=1.0) as gone:
        buffer = bytearray(opening)
        try:
            while True:
                ended = _collect_waiting(sink, after, buffer)
                if ended is None:
                    return
                if ended or buffer:
                    await send({"type": "http.response.body", "body": bytes(buffer), "more_body": not ended})
                    if ended:
                        return
                    buffer.clear()
                waited = await next_item(sink, gone)
                if type(waited) is NoItem:
                    return
                if waited is None:
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
                    return
                assert type(waited) is tuple
                number, event = waited
                if number > after:
                    buffer += event
        except OSError:
            return


async def pump_get_stream(send: Send, receive: Receive, feed: MessageFeed, farewell: bytes = b"") -> None:
    """The GET stream: messages that belong to no request, until the client leaves, or until
    ``CLOSE_RESPONSE`` (the session ended, or the stream's lifetime is over), after which
    ``farewell`` (an SSE ``retry`` field: when to reconnect) is the last thing sent."""
    async with watching(receive, feed.queue) as gone:
        while True:
            message = await next_item(feed.queue, gone)
            if type(message) is NoItem:
                return
            if message is CLOSE_RESPONSE:
                await send({"type": "http.response.body", "body": farewell, "more_body": False})
                return
            assert type(message) is dict
            event = encode_json_event(encode_message(message))
            await send({"type": "http.response.body", "body": event, "more_body": True})


async def send_rejection(send: Send, rejection: H.Rejection) -> None:
    """Refuse an HTTP request: ``rejection``'s status, headers and JSON-RPC error body."""
    headers = {**JSON_HEADERS, **rejection.headers} if rejection.error is not None else dict(rejection.headers)
    await send_bytes(send, rejection.status, rejection.body(), headers)
