"""stdio: newline-delimited JSON over our own stdin and stdout, or a child process's pipes.

``StdioServerTransport`` reads our stdin and writes our stdout; stderr stays free for
logs. This module is its handling of the process's own descriptors (borrowed, widened,
or read as a file); the pieces live beside it: ``stdio_stream`` (what both ends share),
``stdio_inbox`` (our stdin, decoded as it arrives) and ``stdio_client``
(``StdioClientTransport``, which spawns the server; still importable from here).
"""

from __future__ import annotations

__all__ = ["StdioClientTransport", "StdioServerTransport"]

import asyncio
import contextlib
import os
import stat
import sys
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any

from ..framing.ndjson import DEFAULT_MAX_LINE_BYTES
from .base import TransportBroken
from .stdio_inbox import _Inbox
from .stdio_stream import _StreamTransport

if TYPE_CHECKING:
    from .stdio_client import StdioClientTransport

# A big answer crosses a pipe in hand-offs of the pipe's capacity (64 KiB on Linux), each a wake-up
# of both processes and a loop turn of ours; 1 MiB (what an unprivileged process may ask by default)
# makes them 16 times fewer. The kernel fills a pipe's pages as data comes: small messages cost nothing.
_PIPE_BYTES = 1 << 20


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


def __getattr__(name: str) -> Any:
    # PEP 562: a server never loads the client's end; ``from .stdio import StdioClientTransport`` still works.
    if name == "StdioClientTransport":
        from .stdio_client import StdioClientTransport

        return StdioClientTransport
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
