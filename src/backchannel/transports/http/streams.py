"""One HTTP response that carries JSON-RPC messages to the client.

A POST is answered as plain JSON when its answer is the first thing ready, and
as a server-sent-event stream when something comes first (progress, a log line,
a question for the user). Handshake-era streams are resumable: each event has an
id ``"<stream>_<n>"`` and is kept in the event store, so a client whose stream
broke gets the rest with ``GET`` and ``Last-Event-ID``.
"""

from __future__ import annotations

__all__ = [
    "CLOSE_STREAM",
    "END_STREAM",
    "SSE_HEADERS",
    "MessageFeed",
    "ResumableStream",
    "encode_message",
    "is_answer_to",
]

import asyncio
import contextlib
from typing import Any

import msgspec

from ...framing.sse import encode_event
from ...protocol.events import RequestId
from .event_store import EventStore

SSE_HEADERS = {"content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no"}
_encode = msgspec.json.encode


def encode_message(message: Any) -> bytes:
    return _encode(message)


def is_answer_to(message: Any, request_id: RequestId | None) -> bool:
    return (
        request_id is not None
        and isinstance(message, dict)
        and "id" in message
        and "method" not in message
        and message["id"] == request_id
        and type(message["id"]) is type(request_id)
    )


#: Put in a feed by ``Context.close_sse_stream``: end the HTTP response now, keep the stream.
CLOSE_STREAM: dict[str, Any] = {}
#: Put in a feed when the client cancels its request: no answer will come, so end the stream.
END_STREAM: dict[str, Any] = {}


class MessageFeed:
    """The messages the runtime routes to one request's response, in order."""

    def __init__(self, request_id: RequestId | None) -> None:
        self.request_id = request_id
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    def put(self, message: dict[str, Any]) -> None:
        self.queue.put_nowait(message)

    async def first(self, wait: float) -> dict[str, Any] | None:
        """The first message, or None if none came within ``wait`` seconds."""
        # A timeout scope rather than wait_for: on 3.11 wait_for costs a task per request.
        try:
            async with asyncio.timeout(wait):
                return await self.queue.get()
        except TimeoutError:
            return None


class ResumableStream:
    """A handshake-era SSE stream that outlives the HTTP response carrying it.

    ``pump()`` numbers each message, stores it, and forwards it to the attached
    response if there is one; a client that lost the response ``attach``es again
    after replaying what it missed. The stream ends after the answer to its request.
    """

    def __init__(self, stream_id: str, store: EventStore, feed: MessageFeed) -> None:
        self.stream_id = stream_id
        self.store = store
        self.feed = feed
        self.position = 0
        self.finished = asyncio.Event()
        self._sink: asyncio.Queue[tuple[int, bytes] | None] | None = None

    async def pump(self, first: dict[str, Any] | None) -> None:
        pending = [first] if first is not None else []
        while True:
            message = pending.pop() if pending else await self.feed.queue.get()
            if message is CLOSE_STREAM:
                self.detach()
                continue
            if message is END_STREAM:
                break
            self.position += 1
            event = encode_event(encode_message(message).decode(), event_id=f"{self.stream_id}_{self.position}")
            await self.store.store(self.stream_id, self.position, event)
            if self._sink is not None:
                self._sink.put_nowait((self.position, event))
            if is_answer_to(message, self.feed.request_id):
                break
        self.finished.set()
        self.detach()

    def attach(self) -> asyncio.Queue[tuple[int, bytes] | None]:
        """A new queue receiving every event from now on; ends with None. Replaces any earlier one."""
        self.detach()
        sink: asyncio.Queue[tuple[int, bytes] | None] = asyncio.Queue()
        self._sink = sink
        if self.finished.is_set():
            sink.put_nowait(None)
        return sink

    def detach(self) -> None:
        """Close the attached response (the stream goes on, into the store)."""
        if self._sink is not None:
            self._sink.put_nowait(None)
            self._sink = None


async def cancel_quietly(task: asyncio.Task[Any] | None) -> None:
    if task is not None and not task.done():
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
