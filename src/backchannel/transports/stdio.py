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
from collections.abc import Callable, Mapping, Sequence
from typing import IO, Any, cast

from ..framing.codec import encode_messages
from ..framing.ndjson import DEFAULT_MAX_LINE_BYTES, LineDecoder
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
        # Files given here are the transport's, closed with it (the peer then sees the end);
        # the process's own stdin and stdout are borrowed (``_borrow``) and left as they were.
        self._stdin = stdin or sys.stdin.buffer
        self._stdout = stdout or sys.stdout.buffer
        self._borrowing = (stdin is None, stdout is None)
        self._inbox: _Inbox | None = None
        self._draining: asyncio.Task[None] | None = None  # while stdin waits for stdout to drain
        self._stdin_pipe: asyncio.BaseTransport | None = None
        self._give_back_stdin: Callable[[], None] = _nothing  # (``_borrow``)

    async def receive(self) -> list[Any] | None:
        inbox = self._inbox
        assert inbox is not None, "transport not started"
        return await inbox.take()

    def push_to(self, sink: Callable[[list[Any]], None]) -> bool:
        """From now on, hand each batch to ``sink`` from the read callback, as it is read.

        That spares a wake-up of the reading task and a loop turn per message (an answer given
        at once leaves in the same callback). ``receive`` then returns only what ends the input:
        the last line if it had no newline, then None; or it raises what ``sink`` raised, after
        which nothing more is read. What was read before this call goes to ``sink`` now.
        Backpressure is kept: while our stdout holds more than ``_HIGH_WATER`` unwritten,
        stdin is not read.
        """
        inbox = self._inbox
        assert inbox is not None, "transport not started"
        inbox.push_to(sink, self._out, self._backed_up)
        return True

    def _backed_up(self) -> None:
        """Our stdout holds more than ``_HIGH_WATER`` unwritten: read no more until it drains."""
        inbox = self._inbox
        if inbox is not None and self._draining is None:
            inbox.hold()
            self._draining = asyncio.ensure_future(self._drain_then_read(inbox))

    async def _drain_then_read(self, inbox: _Inbox) -> None:
        try:
            await self.drain()
        except TransportBroken as exc:
            inbox.fail(exc)  # as the read loop's ``drain`` would: the connection ends with it
            return
        finally:
            self._draining = None
        inbox.release()

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        inbox = self._inbox = _Inbox(self._decoder)
        if _is_pipe_like(self._stdin):
            stdin, self._give_back_stdin = _borrow(self._stdin, "rb") if self._borrowing[0] else (self._stdin, _nothing)
            self._stdin_pipe, _ = await loop.connect_read_pipe(lambda: inbox, stdin)
        else:
            # A regular file cannot be watched by the event loop: read it in one go.
            inbox.data_received(await asyncio.to_thread(self._stdin.read))
            inbox.eof_received()
        if not _is_pipe_like(self._stdout):
            self._sync_out = self._stdout
            return
        _widen_pipe(self._stdout)
        stdout, give_back = _borrow(self._stdout, "wb") if self._borrowing[1] else (self._stdout, _nothing)
        transport, protocol = await loop.connect_write_pipe(lambda: _Stdout(give_back), stdout)
        self._writer = asyncio.StreamWriter(transport, protocol, None, loop)
        self._out = transport

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._draining is not None:
            self._draining.cancel()
        if self._stdin_pipe is not None:
            self._stdin_pipe.close()
        self._give_back_stdin()
        if self._writer is not None:
            with contextlib.suppress(ConnectionError, OSError):
                await self._writer.drain()
            self._writer.close()  # our copy; the original is given back once what is left is written


def _borrow(stream: IO[bytes], mode: str) -> tuple[IO[bytes], Callable[[], None]]:
    """A copy of ``stream``'s descriptor for the event loop, and how to give ``stream`` back as it was.

    The loop makes a pipe non-blocking and closes the file it was given when its transport
    closes. Given the process's own stdin or stdout, that left ``sys.stdout`` closed (and
    non-blocking) after ``Server.run()`` returned: a program that goes on could not print.
    The loop gets a duplicate to close; giving back restores the original's blocking mode.
    """
    fd = stream.fileno()
    blocking = os.get_blocking(fd)

    def give_back() -> None:
        with contextlib.suppress(OSError, ValueError):
            os.set_blocking(fd, blocking)

    return os.fdopen(os.dup(fd), mode, buffering=0), give_back


def _nothing() -> None:
    pass


class _Stdout(asyncio.streams.FlowControlMixin):
    """Our copy of stdout's pipe: the original is given back (blocking again) when the copy is
    closed, after the last of the output is written, not before (the loop's writes must not block)."""

    def __init__(self, give_back: Callable[[], None]) -> None:
        super().__init__()
        self._give_back = give_back

    def connection_lost(self, exc: Exception | None) -> None:
        self._give_back()
        super().connection_lost(exc)


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
        self._out = self._writer.transport if self._writer is not None else None

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
