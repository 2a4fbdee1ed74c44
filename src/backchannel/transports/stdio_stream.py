"""What both ends of stdio share: newline-delimited JSON over a pair of pipes.

``_StreamTransport`` writes whole batches straight to the pipe's transport and awaits a
drain only past ``_HIGH_WATER``; it reads through a StreamReader, which the client uses
(the server reads its stdin through ``stdio_inbox._Inbox`` instead).
"""

from __future__ import annotations

import asyncio
from typing import IO, Any

from ..framing.codec import encode_messages
from ..framing.ndjson import LineDecoder
from ..protocol.events import Outgoing
from .base import Transport, TransportBroken, TransportClosed, wire_messages

_CHUNK = 1 << 16
# Await a drain only when this much is buffered, so a burst of answers is one write, not one wait each.
_HIGH_WATER = 1 << 18


class _StreamTransport(Transport):
    """NDJSON over an asyncio reader/writer pair."""

    def __init__(self, max_line_bytes: int) -> None:
        self._decoder = LineDecoder(max_line_bytes)
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._out: asyncio.WriteTransport | None = None  # the writer's transport: written to directly
        self._closed = False
        self._eof = False
        self._sync_out: IO[bytes] | None = None  # a regular file as stdout: written directly

    async def receive(self) -> list[Any] | None:
        while not self._eof:
            assert self._reader is not None, "transport not started"
            try:
                data = await self._reader.read(_CHUNK)
            except (ConnectionError, OSError):
                data = b""
            if not data:
                self._eof = True
                tail = self._decoder.end()
                return tail or None
            items = self._decoder.feed(data)
            if items:
                return items
        return None

    def write(self, items: list[Outgoing]) -> None:
        if self._closed:
            raise TransportClosed("the stdio transport is closed")
        messages: list[Any] = items
        for item in items:
            if type(item) is not dict:  # a cancellation of ours, rarely: written as its notification
                messages = wire_messages(items)
                break
        data = encode_messages(messages)
        if self._sync_out is not None:
            self._sync_out.write(data)
            self._sync_out.flush()
            return
        out = self._out
        assert out is not None, "transport not started"
        if out.is_closing():
            raise TransportBroken("the peer closed the pipe")
        out.write(data)

    async def drain(self) -> None:
        writer = self._writer
        if writer is not None and writer.transport.get_write_buffer_size() > _HIGH_WATER:
            try:
                await writer.drain()
            except (ConnectionError, OSError) as exc:
                raise TransportBroken(f"the peer closed the pipe: {exc}") from exc
