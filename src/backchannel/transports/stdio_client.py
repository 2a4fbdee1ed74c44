"""The client's end of stdio: spawn the server and speak to it over its stdin and stdout.

The child's stderr goes through to ours, unless ``stderr`` sends it elsewhere (a pipe the
caller reads, as ``backchannel check`` does to keep its last lines). Shutdown is the way the
spec asks: close its stdin, wait, SIGTERM, wait, SIGKILL. When its output ends unasked, we say
how it ended.
``start`` after ``close`` spawns a new process (``respawns``): a ``Client`` does that when its
era probe went unanswered, so that a late answer to it cannot meet the ``initialize`` that follows.
"""

from __future__ import annotations

__all__ = ["StdioClientTransport"]

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping, Sequence
from typing import Any

from ..framing.ndjson import DEFAULT_MAX_LINE_BYTES
from .base import TransportBroken
from .stdio_stream import _CHUNK, _StreamTransport

# After the child's stdout ends: how long to wait for it to exit, to say how it ended. A child
# that closed stdout but lives on is only "the peer closed the connection", as before.
_EXIT_WAIT = 2.0


class StdioClientTransport(_StreamTransport):
    """Spawn ``command`` and speak to it over its stdin and stdout."""

    respawns = True

    def __init__(
        self,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        shutdown_grace: float = 2.0,
        stderr: int | None = None,
    ) -> None:
        super().__init__(max_line_bytes)
        self.command = command
        self.args = tuple(args)
        # The child inherits our environment; ``env`` adds to it or overrides it.
        self.env = {**os.environ, **env} if env is not None else None
        self.cwd = cwd
        self.shutdown_grace = shutdown_grace
        # Where the child's stderr goes: None, ours (its logs reach the person running us);
        # ``asyncio.subprocess.PIPE``, to ``process.stderr`` for the caller to read; ``DEVNULL``, nowhere.
        self.stderr = stderr
        self.process: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        """Spawn the server (again, after ``close``: a new process, and nothing of the old one's is kept)."""
        if self.process is not None:
            self._restart_state()
        self.process = await asyncio.create_subprocess_exec(
            self.command,
            *self.args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=self.stderr,
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
            ended = await _how_it_ended(self.process, shown=self.stderr is None)
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


async def _how_it_ended(process: asyncio.subprocess.Process, *, shown: bool) -> str | None:
    """Why the server is gone, in words for the person running us; None while it still runs.
    ``shown``: the child's stderr is ours, so whatever it said on the way out is on the screen already."""
    try:
        status = await asyncio.wait_for(process.wait(), _EXIT_WAIT)
    except TimeoutError:
        return None
    where = "; its error output, if any, is above" if shown else ""
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        return f"the server process was killed by {name}{where}"
    return f"the server process exited with status {status}{where}"
