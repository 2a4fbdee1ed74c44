"""The stdio server's stdin, decoded as it arrives: pulled by the read loop, or pushed to a sink.

Pulled (``take``), what waits untaken is bounded, ``_INBOX_ITEMS`` messages or
``_INBOX_BYTES`` of them, beyond which the pipe is not read. Pushed (``push_to``), each
batch goes to the sink from the read callback; ``hold``/``release`` stop and restart
reading while the server's stdout is backed up, and ``fail`` ends the input with an error.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, cast

from ..framing.ndjson import LineDecoder
from .stdio_stream import _HIGH_WATER

# Messages, or bytes of them, read and not yet taken by the server before it stops reading its stdin
# for a while: a count alone would let 1,024 large messages (each up to the line limit) pile up.
_INBOX_ITEMS = 1024
_INBOX_BYTES = 1 << 20


class _Inbox(asyncio.Protocol):
    """Our stdin, decoded as it arrives: the read loop takes whole messages, or (``push_to``)
    each batch goes to a sink as it is read. (A StreamReader would copy the bytes into its
    buffer and back out, in several Python calls per read.)"""

    def __init__(self, decoder: LineDecoder) -> None:
        self._decoder = decoder
        self._items: list[Any] = []
        self._waiter: asyncio.Future[None] | None = None
        self._transport: asyncio.ReadTransport | None = None
        self._paused = False
        self._held = False  # by the sink's side: its output is backed up
        self._eof = False
        self._bytes = 0  # read since the last take
        self._sink: Callable[[list[Any]], None] | None = None
        self._out: asyncio.WriteTransport | None = None  # whose backlog holds reading (push_to)
        self._backed_up: Callable[[], None] | None = None
        self._failure: BaseException | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A read pipe's transport (uvloop's does not subclass asyncio.ReadTransport: no isinstance).
        self._transport = cast(asyncio.ReadTransport, transport)

    def push_to(
        self, sink: Callable[[list[Any]], None], out: asyncio.WriteTransport | None, backed_up: Callable[[], None]
    ) -> None:
        """Hand every batch to ``sink`` as it is read, starting with what waits untaken; after
        each, call ``backed_up`` if ``out`` holds more than ``_HIGH_WATER`` unwritten."""
        self._sink, self._out, self._backed_up = sink, out, backed_up
        items, self._items = self._items, []
        self._bytes = 0
        if self._paused and self._transport is not None:
            self._paused = False
            self._transport.resume_reading()
        if items:
            self._push(items, sink)

    def _push(self, items: list[Any], sink: Callable[[list[Any]], None]) -> None:
        try:
            sink(items)
        except BaseException as exc:  # not lost: the reader of ``take`` raises it
            # As if it had come from the read loop's own feed: a tool's ``sys.exit(3)`` still
            # ends the process with 3 (raised here, uvloop would take it for a fault of the pipe).
            self.fail(exc)
            return
        out = self._out
        if out is not None and out.get_write_buffer_size() > _HIGH_WATER:
            assert self._backed_up is not None
            self._backed_up()

    def hold(self) -> None:
        """Stop reading until ``release`` (the sink's output is backed up)."""
        if not self._held:
            self._held = True
            if self._transport is not None:
                self._transport.pause_reading()

    def release(self) -> None:
        if self._held:
            self._held = False
            if self._transport is not None and self._failure is None:
                self._transport.resume_reading()

    def fail(self, exc: BaseException) -> None:
        """Read nothing more; ``take`` raises ``exc`` (the first failure only)."""
        if self._failure is None:
            self._failure = exc
            self._sink = None
            if self._transport is not None and not (self._held or self._paused):
                self._transport.pause_reading()
            self._wake()

    def data_received(self, data: bytes) -> None:
        if self._failure is not None:
            return
        items = self._decoder.feed(data)
        sink = self._sink
        if sink is not None:
            if items:
                self._push(items, sink)
            return
        self._bytes += len(data)
        if items:
            self._items += items
        # Backpressure: while this much waits unread, stop reading the pipe (the peer's writes block).
        # Only with whole messages waiting: their take resumes reading; a line still arriving must.
        if (
            self._items
            and (len(self._items) >= _INBOX_ITEMS or self._bytes >= _INBOX_BYTES)
            and self._transport is not None
            and not self._paused
        ):
            self._paused = True
            self._transport.pause_reading()
        if items:
            self._wake()

    def eof_received(self) -> bool:
        self._eof = True
        self._wake()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._eof = True  # a read error ends the input as its end does
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def take(self) -> list[Any] | None:
        """Everything read and not yet taken; at the end of input, the last line (if it had no
        newline) and then None."""
        while not self._items:
            if self._failure is not None:
                raise self._failure
            if self._eof:
                tail = self._decoder.end()
                return tail or None
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        items, self._items = self._items, []
        self._bytes = 0
        if self._paused and self._transport is not None:
            self._paused = False
            self._transport.resume_reading()
        return items
