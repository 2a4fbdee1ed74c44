"""The resumable streams of one handshake-era HTTP session (``HttpSession.streams``).

A session's first stream makes its ``SessionStreams``: most sessions are idle most of the
time, and many never stream (every answer came first, as plain JSON), so what streams need
(the id prefix, the finished-streams queue, the tasks forgetting old ones) is not paid for
by a session until then.
"""

from __future__ import annotations

__all__ = ["SessionStreams"]

import asyncio
import secrets
from collections import deque
from collections.abc import Callable
from typing import Any

from ..protocol.events import RequestId
from .asgi import Mailbox
from .event_store import EventStore
from .fleet import Fleet
from .streams import MessageFeed, ResumableStream, StreamSignal

#: Finished streams kept resumable per session; the oldest half is let go at twice this.
FINISHED_STREAMS_KEPT = 64


class SessionStreams:
    """The streams of a session's requests by id (``by_id``), the finished ones kept
    resumable for a while; ``close_feed`` is called with a stream's request id when it ends."""

    def __init__(self, store: EventStore, fleet: Fleet, close_feed: Callable[[RequestId], None]) -> None:
        self.store = store
        self.fleet = fleet
        self._close_feed = close_feed
        self.by_id: dict[str, ResumableStream] = {}
        self._finished: deque[str] = deque()
        self._forgetting: set[asyncio.Task[None]] = set()
        # Unique across sessions (the event store is shared): a random prefix per session, then
        # a count. Resuming needs the session too, so they need not be unguessable within it.
        # In a fleet the worker's name leads: a worker asked to resume a stream knows whose it is.
        prefix = secrets.token_hex(6)
        self._prefix = f"{fleet.worker_id}.{prefix}" if fleet.shared else prefix
        self._made = 0

    def new_id(self) -> str:
        self._made += 1
        return f"{self._prefix}{self._made}"

    def start(
        self, stream_id: str, feed: MessageFeed, first: dict[str, Any] | StreamSignal | None, *, attached: bool
    ) -> tuple[ResumableStream, Mailbox[tuple[int, bytes] | None] | None]:
        """``HttpSession.start_stream``, with the stream's id chosen."""
        stream = ResumableStream(stream_id, self.store, feed, self._stream_finished)
        self.by_id[stream_id] = stream
        sink = stream.attach() if attached else None
        stream.begin(first)
        return stream, sink

    def _stream_finished(self, stream: ResumableStream) -> None:
        if stream.feed.request_id is not None:
            self._close_feed(stream.feed.request_id)
        # A finished stream stays resumable for a while (its answer may not have reached the
        # client); only the newest ones are kept, so a long session does not grow without bound.
        # The oldest are let go in batches: one task per batch rather than one per request.
        self._finished.append(stream.stream_id)
        if len(self._finished) >= 2 * FINISHED_STREAMS_KEPT:
            old = [self._finished.popleft() for _ in range(FINISHED_STREAMS_KEPT)]
            for stream_id in old:
                self.by_id.pop(stream_id, None)
            self._forgetting = {t for t in self._forgetting if not t.done()}
            self._forgetting.add(asyncio.get_running_loop().create_task(self._forget(old)))

    async def _forget(self, stream_ids: list[str]) -> None:
        if self.fleet.shared:  # all at once: the shared state deletes them in one round trip
            await asyncio.gather(*(self.store.forget(stream_id) for stream_id in stream_ids))
            return
        for stream_id in stream_ids:
            await self.store.forget(stream_id)

    async def end(self) -> None:
        """The session ended: end any response still carrying a stream, and forget them all."""
        for stream_id, stream in self.by_id.items():
            stream.detach()
            await self.store.forget(stream_id)
        self.by_id.clear()
