"""One HTTP response that carries JSON-RPC messages to the client.

A POST is answered as plain JSON when its answer is the first thing ready, and
as a server-sent-event stream when something comes first (progress, a log line,
a question for the user). Handshake-era streams are resumable: each event has an
id ``"<stream>_<n>"`` and is kept in the event store, so a client whose stream
broke gets the rest with ``GET`` and ``Last-Event-ID``.
"""

from __future__ import annotations

__all__ = [
    "CLOSE_RESPONSE",
    "END_STREAM",
    "JSON_HEADERS",
    "SSE_HEADERS",
    "UNNUMBERED",
    "MessageFeed",
    "ResumableStream",
    "StreamSignal",
    "encode_message",
    "is_answer_to",
]

import enum
import sys
from collections.abc import Callable
from typing import Any, Final

from ..framing.codec import encode_message
from ..framing.rejection import JSON_HEADERS
from ..framing.sse import encode_json_event
from ..protocol.events import RequestId
from .asgi import Mailbox, NoItem
from .event_store import EventStore

SSE_HEADERS = {"content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no"}
#: The number of bytes put in a stream's mailbox that are no event of it (an SSE ``retry``
#: field): past any position a reader has seen, so every reader sends them.
UNNUMBERED: Final = sys.maxsize


def is_answer_to(message: Any, request_id: RequestId | None) -> bool:
    return (
        request_id is not None
        and isinstance(message, dict)
        and "id" in message
        and "method" not in message
        and message["id"] == request_id
        and type(message["id"]) is type(request_id)
    )


class StreamSignal(enum.Enum):
    """Put in a feed among the messages, to end what carries them."""

    #: ``Context.close_sse_stream``: end the HTTP response now; the stream goes on, to be resumed.
    CLOSE_RESPONSE = "close the response"
    #: The client cancelled the request (or its handler stopped): no answer will come, so end the stream.
    END_STREAM = "end the stream"


CLOSE_RESPONSE: Final = StreamSignal.CLOSE_RESPONSE
END_STREAM: Final = StreamSignal.END_STREAM


class MessageFeed:
    """The messages the runtime routes to one request's response, in order.

    Until the response is chosen they wait in ``queue``; once it is a stream, each
    message goes straight to it as it is routed.
    """

    def __init__(self, request_id: RequestId | None) -> None:
        self.request_id = request_id
        self.queue: Mailbox[dict[str, Any] | StreamSignal] = Mailbox()
        self.stream: ResumableStream | None = None

    def put(self, message: dict[str, Any] | StreamSignal) -> None:
        if self.stream is not None:
            self.stream.deliver(message)
            return
        self.queue.put(message)

    async def first(self, wait: float | None) -> dict[str, Any] | StreamSignal | None:
        """The first message, or None if none came within ``wait`` seconds (None: no limit; or the
        client left)."""
        message = await self.queue.get(wait)
        return None if type(message) is NoItem else message  # type: ignore[return-value]


class ResumableStream:
    """A handshake-era SSE stream that outlives the HTTP response carrying it.

    ``deliver`` numbers each message, stores it, and forwards it to the attached
    response if there is one, in the routing call itself (no task or loop turn per
    event); a client that lost the response ``attach``es again after replaying what
    it missed. The stream ends after the answer to its request, and calls
    ``on_finished`` then.
    """

    def __init__(
        self, stream_id: str, store: EventStore, feed: MessageFeed, on_finished: Callable[[ResumableStream], None]
    ) -> None:
        self.stream_id = stream_id
        self.store = store
        self.feed = feed
        self.position = 0
        self.finished = False
        self._on_finished = on_finished
        self._sink: Mailbox[tuple[int, bytes] | None] | None = None

    def begin(self, first: dict[str, Any] | StreamSignal | None) -> None:
        """Take over ``feed``: ``first`` and whatever is queued go out now, the rest as routed."""
        self.store.begin(self.stream_id, self.feed.request_id)
        waiting = [first] if first is not None else []
        while not self.feed.queue.empty():
            item = self.feed.queue.get_nowait()
            if type(item) is not NoItem:
                waiting.append(item)  # type: ignore[arg-type]
        self.feed.stream = self
        for message in waiting:
            self.deliver(message)

    def deliver(self, message: dict[str, Any] | StreamSignal) -> None:
        if self.finished:
            return
        if message is CLOSE_RESPONSE:
            self.detach()
            return
        if message is not END_STREAM:
            assert type(message) is dict
            data = encode_message(message)  # an answer that can't be encoded comes back as -32603
            if not data:
                return  # a notification that can't be encoded: dropped (and logged), the stream goes on
            self.position += 1
            event = encode_json_event(data, f"{self.stream_id}_{self.position}")
            self.store.store(self.stream_id, self.position, event)
            if self._sink is not None:
                self._sink.put((self.position, event))
            if not is_answer_to(message, self.feed.request_id):
                return
        self.finished = True
        self.store.finish(self.stream_id, self.position)
        self.detach()
        self._on_finished(self)

    def attach(self) -> Mailbox[tuple[int, bytes] | None]:
        """A new mailbox receiving every event from now on; ends with None. Replaces any earlier one."""
        self.detach()
        sink: Mailbox[tuple[int, bytes] | None] = Mailbox()
        self._sink = sink
        if self.finished:
            sink.put(None)
        return sink

    def end_response(self, sink: Mailbox[tuple[int, bytes] | None], farewell: bytes) -> None:
        """Close the response ``sink`` feeds, if it is still the attached one, after ``farewell``
        (an SSE ``retry`` field: when to reconnect); the stream goes on, into the store, to be
        resumed with ``Last-Event-ID``."""
        if self._sink is sink:
            sink.put((UNNUMBERED, farewell))
            self.detach()

    def detach(self) -> None:
        """Close the attached response (the stream goes on, into the store)."""
        if self._sink is not None:
            self._sink.put(None)
            self._sink = None
