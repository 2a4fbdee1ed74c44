"""What both ends of stdio share: newline-delimited JSON over a pair of pipes.

``_StreamTransport`` writes whole batches straight to the pipe's transport and awaits a
drain only past ``_HIGH_WATER``; it reads through a StreamReader, which the client uses
(the server reads its stdin through ``stdio_inbox._Inbox`` instead).

``until_read`` waits until the peer has read what we wrote, by asking the kernel how much of it
is still unread: ``FIONREAD`` on a pipe (exact: the bytes in it, so we know when the peer has
read past a given write), ``TIOCOUTQ`` on a socket (what node's and libuv's children get for
stdio; it counts whole unread buffers, so we wait until the peer has read everything). Each check
is one ``ioctl``: a loop turn apart at first, then a millisecond, then ``_READ_SLOW`` (see the
constants). Two callers:

- ``progress_read``: an answer that follows its request's progress waits (at most ``_READ_WAIT``
  seconds) for the peer to read that progress: a TypeScript SDK peer drops progress it reads in
  one chunk with the answer (``Transport.progress_read``), and a second write alone does not
  prevent that (a busy peer finds both writes in the pipe and reads them at once). A peer that
  reads nothing for that long would not have read the answer sooner.
- a ``Client``'s era probe starts its clock once the server process has read the probe: the
  time a server takes to start (a loaded machine, a big import) is not the time it takes to answer.

Elsewhere (a regular file, Windows) we cannot tell: ``until_read`` says None, and
``progress_read`` waits one loop turn.
"""

from __future__ import annotations

import array
import asyncio
import os
import stat
from typing import IO, Any

from ..framing.codec import encode_messages
from ..framing.ndjson import LineDecoder
from ..types.outgoing import Outgoing
from .base import Transport, TransportBroken, TransportClosed, wire_messages

_CHUNK = 1 << 16
# Await a drain only when this much is buffered, so a burst of answers is one write, not one wait each.
_HIGH_WATER = 1 << 18
#: ``progress_read``: the longest an answer waits for the peer to read its progress. ``until_read``
#: checks every loop turn for ``_READ_SPIN`` seconds (a peer that keeps up reads within that), then
#: every millisecond (a timer's resolution) up to ``_READ_FAST`` (a peer working through a backlog
#: of progress), then every ``_READ_SLOW`` (a server process still starting).
_READ_WAIT = 1.0
_READ_SPIN = 0.0005
_READ_FAST = 0.1
_READ_SLOW = 0.02

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
        self._max_line_bytes = max_line_bytes
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

    def _restart_state(self) -> None:
        """Forget the last peer's stream (its half line, its end): a new one is starting."""
        self._decoder = LineDecoder(self._max_line_bytes)
        self._closed = self._eof = self._probed = False
        self._written = 0
        self._unread_probe = None

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
        """Return once the peer has read the progress written so far (bounded; see the module docstring)."""
        if await self.until_read(_READ_WAIT) is None:
            await asyncio.sleep(0)

    async def until_read(self, timeout: float | None) -> bool | None:
        """Wait until the peer has read what we wrote so far: True once it has; False when
        ``timeout`` seconds passed first or the pipe closed; None at once where we cannot tell."""
        out = self._out
        probe = self._probe() if out is not None and self._sync_out is None else None
        if probe is None or out is None:
            return None
        fd, request = probe
        mark = self._written
        loop = asyncio.get_running_loop()
        started = loop.time()
        deadline = started + timeout if timeout is not None else None
        counter = array.array("i", [0])
        while not self._closed and not out.is_closing():
            try:
                fcntl.ioctl(fd, request, counter)
            except OSError:
                return False
            unread = out.get_write_buffer_size() + counter[0]
            if unread == 0 or (request == _FIONREAD and self._written - unread >= mark):
                return True
            now = loop.time()
            if deadline is not None and now >= deadline:
                return False
            waited = now - started
            await asyncio.sleep(0.0 if waited < _READ_SPIN else 0.001 if waited < _READ_FAST else _READ_SLOW)
        return False

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
