"""Two transports joined back to back, for tests and in-process use.

Messages are encoded to JSON and decoded again on the way across, so the
in-memory twin hides no serialization bug that a real wire would show.
"""

from __future__ import annotations

__all__ = ["MemoryTransport", "memory_pair"]

import asyncio
from typing import Any

import msgspec

from ..framing.codec import encode_message
from ..types.outgoing import Outgoing
from .base import Transport, TransportBroken, wire_messages

_decode = msgspec.json.decode


class MemoryTransport(Transport):
    def __init__(self, inbox: asyncio.Queue[list[Any] | None], outbox: asyncio.Queue[list[Any] | None]) -> None:
        self._inbox = inbox
        self._outbox = outbox
        self._closed = False

    async def receive(self) -> list[Any] | None:
        if self._closed:
            return None
        batch = await self._inbox.get()
        if batch is None:
            self._closed = True
        return batch

    def write(self, items: list[Outgoing]) -> None:
        if self._closed:
            raise TransportBroken("the memory transport is closed")
        # encode_message stands in for a message that can't be encoded (b"" when it is dropped).
        encoded = [encode_message(m) for m in wire_messages(items)]
        self._outbox.put_nowait([_decode(data) for data in encoded if data])

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._outbox.put_nowait(None)
            self._inbox.put_nowait(None)


def memory_pair() -> tuple[MemoryTransport, MemoryTransport]:
    """(client side, server side)."""
    a: asyncio.Queue[list[Any] | None] = asyncio.Queue()
    b: asyncio.Queue[list[Any] | None] = asyncio.Queue()
    return MemoryTransport(a, b), MemoryTransport(b, a)
