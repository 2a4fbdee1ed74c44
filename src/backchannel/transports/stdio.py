"""stdio: newline-delimited JSON over a child process's pipes, or our own.

``StdioServerTransport`` reads our stdin and writes our stdout; stderr stays
free for logs. ``StdioClientTransport`` spawns the server, lets the child's
stderr through to ours, and shuts it down the way the spec asks: close its
stdin, wait, SIGTERM, wait, SIGKILL.
"""

from __future__ import annotations

__all__ = ["StdioClientTransport", "StdioServerTransport"]

import asyncio
import contextlib
import os
import signal
import stat
import sys
from collections.abc import Mapping, Sequence
from typing import IO, Any, cast

from ..framing.ndjson import DEFAULT_MAX_LINE_BYTES, LineDecoder, encode_lines
from ..protocol.events import Outgoing
from .base import Transport, TransportBroken, TransportClosed, wire_messages

_CHUNK = 1 << 16
# Messages, or bytes of them, read and not yet taken by the server before it stops reading its stdin
# for a while: a count alone would let 1,024 large messages (each up to the line limit) pile up.
_INBOX_ITEMS = 1024
_INBOX_BYTES = 1 << 20
# Await a drain only when this much is buffered, so a burst of answers is one write, not one wait each.
_HIGH_WATER = 1 << 18
# A big answer crosses a pipe in hand-offs of the pipe's capacity (64 KiB on Linux), each a wake-up
# of both processes and a loop turn of ours; 1 MiB (what an unprivileged process may ask by default)
# makes them 16 times fewer. The kernel fills a pipe's pages as data comes: small messages cost nothing.
_PIPE_BYTES = 1 << 20
# After the child's stdout ends: how long to wait for it to exit, to say how it ended. A child
# that closed stdout but lives on is only "the peer closed the connection", as before.
_EXIT_WAIT = 2.0


class _StreamTransport(Transport):
    """NDJSON over an asyncio reader/writer pair."""

    def __init__(self, max_line_bytes: int) -> None:
        self._decoder = LineDecoder(max_line_bytes)
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
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
        data = encode_lines(wire_messages(items))
        if self._sync_out is not None:
            self._sync_out.write(data)
            self._sync_out.flush()
            return
        writer = self._writer
        assert writer is not None, "transport not started"
        if writer.is_closing():
            raise TransportBroken("the peer closed the pipe")
        writer.write(data)

    async def drain(self) -> None:
        writer = self._writer
        if writer is not None and writer.transport.get_write_buffer_size() > _HIGH_WATER:
            try:
                await writer.drain()
            except (ConnectionError, OSError) as exc:
                raise TransportBroken(f"the peer closed the pipe: {exc}") from exc


class StdioServerTransport(_StreamTransport):
    """Our own stdin and stdout, without a thread between them and the event loop."""

    def __init__(
        self,
        stdin: IO[bytes] | None = None,
        stdout: IO[bytes] | None = None,
        *,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    ) -> None:
        super().__init__(max_line_bytes)
        self._stdin = stdin or sys.stdin.buffer
        self._stdout = stdout or sys.stdout.buffer
        self._inbox: _Inbox | None = None

    async def receive(self) -> list[Any] | None:
        inbox = self._inbox
        assert inbox is not None, "transport not started"
        return await inbox.take()

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        inbox = self._inbox = _Inbox(self._decoder)
        if _is_pipe_like(self._stdin):
            await loop.connect_read_pipe(lambda: inbox, self._stdin)
        else:
            # A regular file cannot be watched by the event loop: read it in one go.
            inbox.data_received(await asyncio.to_thread(self._stdin.read))
            inbox.eof_received()
        if not _is_pipe_like(self._stdout):
            self._sync_out = self._stdout
            return
        _widen_pipe(self._stdout)
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, self._stdout)
        self._writer = asyncio.StreamWriter(transport, protocol, None, loop)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._writer is not None:
            with contextlib.suppress(ConnectionError, OSError):
                await self._writer.drain()
            self._writer.close()


class _Inbox(asyncio.Protocol):
    """Our stdin, decoded as it arrives: the read loop takes whole messages. (A StreamReader
    would copy the bytes into its buffer and back out, in several Python calls per read.)"""

    def __init__(self, decoder: LineDecoder) -> None:
        self._decoder = decoder
        self._items: list[Any] = []
        self._waiter: asyncio.Future[None] | None = None
        self._transport: asyncio.ReadTransport | None = None
        self._paused = False
        self._eof = False
        self._bytes = 0  # read since the last take

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A read pipe's transport (uvloop's does not subclass asyncio.ReadTransport: no isinstance).
        self._transport = cast(asyncio.ReadTransport, transport)

    def data_received(self, data: bytes) -> None:
        self._bytes += len(data)
        items = self._decoder.feed(data)
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


def _widen_pipe(stream: IO[bytes]) -> None:
    """Give the pipe ``stream`` writes to ``_PIPE_BYTES`` of room, where the system lets us (Linux)."""
    try:
        import fcntl
    except ImportError:  # not on Windows
        return
    setter, getter = getattr(fcntl, "F_SETPIPE_SZ", None), getattr(fcntl, "F_GETPIPE_SZ", None)
    if setter is None or getter is None:  # Linux only
        return
    with contextlib.suppress(OSError, ValueError):
        fd = stream.fileno()
        if stat.S_ISFIFO(os.fstat(fd).st_mode) and fcntl.fcntl(fd, getter) < _PIPE_BYTES:
            fcntl.fcntl(fd, setter, _PIPE_BYTES)


def _is_pipe_like(stream: IO[bytes]) -> bool:
    """Whether the event loop can watch ``stream``: a pipe, a socket or a terminal. Other
    character devices (``/dev/null``) cannot be polled and are read like files."""
    try:
        fd = stream.fileno()
        mode = os.fstat(fd).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or (stat.S_ISCHR(mode) and os.isatty(fd))


class StdioClientTransport(_StreamTransport):
    """Spawn ``command`` and speak to it over its stdin and stdout."""

    def __init__(
        self,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        shutdown_grace: float = 2.0,
    ) -> None:
        super().__init__(max_line_bytes)
        self.command = command
        self.args = tuple(args)
        # The child inherits our environment; ``env`` adds to it or overrides it.
        self.env = {**os.environ, **env} if env is not None else None
        self.cwd = cwd
        self.shutdown_grace = shutdown_grace
        self.process: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        self.process = await asyncio.create_subprocess_exec(
            self.command,
            *self.args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=None,  # the child's stderr is ours: its logs reach the person running us
            env=self.env,
            cwd=self.cwd,
            limit=_CHUNK,
        )
        self._reader = self.process.stdout
        self._writer = self.process.stdin

    async def receive(self) -> list[Any] | None:
        """The next batch; at the end of the child's output, ``TransportBroken`` saying how the
        server process ended (its exit status), unless we closed it ourselves."""
        batch = await super().receive()
        if batch is None and not self._closed and self.process is not None:
            ended = await _how_it_ended(self.process)
            if ended is not None and not self._closed:
                raise TransportBroken(ended)
        return batch

    async def close(self) -> None:
        """Close the child's stdin, wait; then SIGTERM, wait; then SIGKILL."""
        if self._closed:
            return
        self._closed = True
        process = self.process
        if process is None:
            return
        if self._writer is not None:
            with contextlib.suppress(ConnectionError, OSError):
                self._writer.close()
        for step in ("wait", "terminate", "kill"):
            if step == "terminate":
                with contextlib.suppress(ProcessLookupError):
                    process.terminate()
            elif step == "kill":
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
            try:
                await asyncio.wait_for(process.wait(), self.shutdown_grace)
                break
            except TimeoutError:
                continue


async def _how_it_ended(process: asyncio.subprocess.Process) -> str | None:
    """Why the server is gone, in words for the person running us; None while it still runs."""
    try:
        status = await asyncio.wait_for(process.wait(), _EXIT_WAIT)
    except TimeoutError:
        return None
    # The child's stderr is ours, so whatever it said on the way out is on the screen already.
    where = "its error output, if any, is above"
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        return f"the server process was killed by {name}; {where}"
    return f"the server process exited with status {status}; {where}"
