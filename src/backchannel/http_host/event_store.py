"""Where handshake-era SSE events wait for a client that reconnects with ``Last-Event-ID``.

An event id names its stream and its place in it (``"<stream>_<n>"``), so a
reconnecting client gets exactly the rest of the stream it lost, and nothing of
any other. The in-memory store is bounded per stream; plug in another store
(Redis, say) for several workers.
"""

from __future__ import annotations

__all__ = ["EventStore", "InMemoryEventStore", "parse_event_id"]

import abc
from collections import deque

from ..protocol.events import RequestId


def parse_event_id(event_id: str) -> tuple[str, int] | None:
    """``(stream, position)`` of an id we issued, or None for anything else."""
    stream, _, position = event_id.rpartition("_")
    if not stream or not position.isdigit():
        return None
    return stream, int(position)


class EventStore(abc.ABC):
    def begin(self, stream: str, request_id: RequestId | None) -> None:  # noqa: B027 - a store may keep nothing
        """A stream answering ``request_id`` starts (a shared store keeps it, to answer for a
        writer that dies). Must not block, like ``store``."""

    def finish(self, stream: str, position: int) -> None:  # noqa: B027 - a store may keep nothing
        """``stream`` ended after event ``position`` (its answer went out). Must not block."""

    @abc.abstractmethod
    def store(self, stream: str, position: int, event: bytes) -> None:
        """Keep ``event`` (encoded SSE bytes) as number ``position`` of ``stream``.

        Called on the delivery path of every event, so it must not block: a remote
        store queues the write and sends it in the background.
        """

    @abc.abstractmethod
    async def replay_after(self, stream: str, position: int) -> list[tuple[int, bytes]]:
        """The stored events of ``stream`` after ``position``, in order."""

    @abc.abstractmethod
    async def forget(self, stream: str) -> None:
        """Drop a stream that can no longer be resumed (its session ended)."""


class InMemoryEventStore(EventStore):
    def __init__(self, max_events_per_stream: int = 1000) -> None:
        self.max_events_per_stream = max_events_per_stream
        self._streams: dict[str, deque[tuple[int, bytes]]] = {}

    def store(self, stream: str, position: int, event: bytes) -> None:
        events = self._streams.get(stream)
        if events is None:
            events = self._streams[stream] = deque(maxlen=self.max_events_per_stream)
        events.append((position, event))

    async def replay_after(self, stream: str, position: int) -> list[tuple[int, bytes]]:
        return [item for item in self._streams.get(stream, ()) if item[0] > position]

    async def forget(self, stream: str) -> None:
        self._streams.pop(stream, None)

    def __len__(self) -> int:
        return len(self._streams)
