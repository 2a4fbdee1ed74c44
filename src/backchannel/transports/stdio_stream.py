"""What both ends of stdio share: newline-delimited JSON over a pair of pipes.

``_StreamTransport`` writes whole batches straight to the pipe's transport and awaits a
drain only past ``_HIGH_WATER``; it reads through a StreamReader, which the client uses
(the server reads its stdin through ``stdio_inbox._Inbox`` instead).

``progress_read`` is how an answer that follows its request's progress waits for the peer to
read that progress first (a TypeScript SDK peer drops progress read in one chunk with the
answer, ``Transport.progress_read``). A second write alone does not do it: a busy peer finds
both writes in the pipe and reads them in one chunk. So we ask the kernel how much of what we
wrote the peer has not read yet: ``FIONREAD`` on a pipe (exact: the bytes in it, so we wait
until the peer has read past the progress), ``TIOCOUTQ`` on a socket (what node's and
libuv's children get for stdio; it counts whole unread buffers, so we wait until it has read
everything). Each check is one ``ioctl``; the first few are a loop turn apart (a peer that
keeps up reads within microseconds), then at most ``_READ_POLL_MAX`` apart, and after
``_READ_WAIT`` seconds the answer goes anyway (a peer that reads nothing for that long would
not have read the answer sooner). Elsewhere (a regular file, Windows) one loop turn.
"""

from __future__ import annotations

import array
import asyncio
import os
import stat
from typing import IO, Any

from ..framing.codec import encode_messages
from ..framing.ndjson import LineDecoder
from ..protocol.events import Outgoing
from .base import Transport, TransportBroken, TransportClosed, wire_messages

_CHUNK = 1 << 16
# Await a drain only when this much is buffered, so a burst of answers is one write, not one wait each.
_HIGH_WATER = 1 << 18
#: ``progress_read``: the longest an answer waits for the peer to read its progress, the loop
#: turns it spins first (each a check), and the longest pause between later checks (seconds).
_READ_WAIT = 1.0
_READ_SPINS = 16
_READ_POLL_MAX = 0.005

try:
    import fcntl
    import termios

    _FIONREAD: int | None = termios.FIONREAD
    _TIOCOUTQ: int | None = termios.TIOCOUTQ
except (ImportError, AttributeError):  # Windows
    _FIONREAD = _TIOCOUTQ = None


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
        self._written = 0  # bytes handed to ``write`` so far (``progress_read`` measures with it)
        self._unread_probe: tuple[int, int] | None = None  # (our fd, the ioctl), once ``_probed``
        self._probed = False

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
        self._written += len(data)
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

    async def progress_read(self) -> None:
        """Return once the peer has read what we wrote so far (bounded; see the module docstring)."""
        out = self._out
        probe = self._probe() if out is not None and self._sync_out is None else None
        if probe is None or out is None:
            await asyncio.sleep(0)
            return
        fd, request = probe
        mark = self._written
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _READ_WAIT
        spins, pause = 0, 0.0
        counter = array.array("i", [0])
        while not self._closed and not out.is_closing():
            try:
                fcntl.ioctl(fd, request, counter)
            except OSError:
                return
            unread = out.get_write_buffer_size() + counter[0]
            if unread == 0 or (request == _FIONREAD and self._written - unread >= mark):
                return
            if loop.time() >= deadline:
                return
            spins += 1
            if spins > _READ_SPINS:
                pause = min(pause * 2 or 0.0005, _READ_POLL_MAX)
            await asyncio.sleep(pause)

    def _probe(self) -> tuple[int, int] | None:
        """How to ask the kernel what the peer has not read yet (our end's fd and the ioctl); None: no way."""
        if not self._probed:
            self._probed = True
            pipe = self._out.get_extra_info("pipe") if self._out is not None else None
            try:
                fd = pipe.fileno() if pipe is not None else -1
                mode = os.fstat(fd).st_mode if fd >= 0 else 0
            except (OSError, ValueError, AttributeError):
                mode = 0
            if stat.S_ISFIFO(mode) and _FIONREAD is not None:
                self._unread_probe = (fd, _FIONREAD)
            elif stat.S_ISSOCK(mode) and _TIOCOUTQ is not None:
                self._unread_probe = (fd, _TIOCOUTQ)
        return self._unread_probe
