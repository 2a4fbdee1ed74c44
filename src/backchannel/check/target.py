"""The server under check: a command spawned over stdio, or a Streamable HTTP URL.

``Target`` makes a fresh transport for each connection a check opens (a new process, a new
HTTP session), from the client's own transports: ``StdioClientTransport`` with the child's
stderr kept (the last lines go into the evidence when it dies) rather than mixed into the
report, and ``HttpClientTransport`` with the ``--header`` pairs and the login ``connect``
uses. ``raw_http`` is a plain HTTP client for what no MCP client sends (a foreign Origin, a
body that is not JSON).
"""

from __future__ import annotations

__all__ = ["CheckedHttp", "CheckedStdio", "Target"]

import asyncio
import collections
import contextlib
import ipaddress
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..framing.ndjson import LineDecoder
from ..transports.base import Transport
from ..transports.http.client import HttpClientTransport
from ..transports.http.client_link import Exchange
from ..transports.stdio_client import StdioClientTransport
from ..types.errors import MCPError

if TYPE_CHECKING:
    import httpx2

#: An error our HTTP transport made up (an HTTP failure, no answer) carries this in its data,
#: so that no check takes it for the server's own answer.
TRANSPORT_MADE = "dev.backchannel.check/transport"
_STDERR_LINES = 40
_LOOPBACK_NAMES = ("localhost", "localhost.")


class _KeepingDecoder(LineDecoder):
    """A line decoder that hands back, with each line it could not decode, the line itself
    (``raw_line`` on the error): the evidence of what the server wrote."""

    def _emit(self, line: bytes, items: list[Any]) -> None:
        before = len(items)
        super()._emit(line, items)
        for item in items[before:]:
            if isinstance(item, MCPError):
                item.raw_line = line[:400].decode("utf-8", "replace")  # type: ignore[attr-defined]


class CheckedStdio(StdioClientTransport):
    """``StdioClientTransport`` whose child's stderr is kept (its last lines) instead of shown,
    and which can write bytes that are no message (``write_raw``)."""

    def __init__(self, command: str, args: Sequence[str], *, show_stderr: bool = False, **options: Any) -> None:
        super().__init__(command, args, stderr=None if show_stderr else asyncio.subprocess.PIPE, **options)
        self._decoder = _KeepingDecoder(self._max_line_bytes)
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=_STDERR_LINES)
        self._stderr_task: asyncio.Task[None] | None = None

    def _restart_state(self) -> None:
        super()._restart_state()
        self._decoder = _KeepingDecoder(self._max_line_bytes)

    async def start(self) -> None:
        await super().start()
        assert self.process is not None
        if self.process.stderr is not None:
            self._stderr_task = asyncio.get_running_loop().create_task(self._keep_stderr(self.process.stderr))

    async def _keep_stderr(self, stream: asyncio.StreamReader) -> None:
        with contextlib.suppress(ConnectionError, OSError, ValueError):
            while line := await stream.readline():
                self.stderr_tail.append(line.decode("utf-8", "replace").rstrip())

    def write_raw(self, data: bytes) -> None:
        """Write ``data`` to the server's stdin as it is (a line that is no message, or half of one)."""
        if self._out is None or self._out.is_closing():
            raise ConnectionError("the server's stdin is closed")
        self._out.write(data)

    def close_stdin(self) -> None:
        """Close the server's stdin only, as a client that went away does."""
        if self._writer is not None:
            with contextlib.suppress(ConnectionError, OSError):
                self._writer.close()

    async def close(self) -> None:
        await super().close()
        if self._stderr_task is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._stderr_task), 1.0)
            self._stderr_task.cancel()


class CheckedHttp(HttpClientTransport):
    """``HttpClientTransport`` whose made-up errors (an HTTP failure turned into a JSON-RPC
    error for a request) say so in their data."""

    def fail(self, exchange: Exchange | None, message: str, code: int = -32603) -> None:
        if exchange is None or exchange.answered or exchange.abandoned:
            return
        error = {"code": code, "message": message, "data": {TRANSPORT_MADE: True}}
        self.deliver([{"jsonrpc": "2.0", "id": exchange.request_id, "error": error}])


@dataclass
class Target:
    """The server: ``command`` (spawned, stdio) or ``url`` (Streamable HTTP) with ``headers``
    and ``auth`` (an ``httpx2.Auth`` such as ``OAuth``) on every request."""

    command: tuple[str, ...] | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    auth: Any = None
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    show_stderr: bool = False

    def __post_init__(self) -> None:
        if (self.command is None) == (self.url is None):
            raise ValueError("a target is a command or a URL, not both and not neither")
        if self.command is not None and not self.command:
            raise ValueError("the target's command is empty")

    @property
    def kind(self) -> str:
        """``"stdio"`` or ``"http"``."""
        return "stdio" if self.command is not None else "http"

    def describe(self) -> str:
        """The target as the card names it: its URL, or its command line."""
        if self.command is not None:
            import shlex

            return shlex.join(self.command)
        assert self.url is not None
        return self.url

    @property
    def loopback(self) -> bool:
        """True for a URL on this machine (127.0.0.0/8, ::1, localhost): the only place the
        checks that load a server (the slow bodies, the many sessions) go unless asked."""
        if self.url is None:
            return True
        host = (urlsplit(self.url).hostname or "").lower()
        if host in _LOOPBACK_NAMES:
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False

    def transport(self, *, fresh_connections: bool = False) -> Transport:
        """A fresh transport: a new process, or a new HTTP client; with ``fresh_connections``,
        one that opens a new TCP connection for every request (a load balancer may send each
        to another worker)."""
        if self.command is not None:
            command, *args = self.command
            env = dict(self.env) if self.env is not None else None
            return CheckedStdio(command, args, show_stderr=self.show_stderr, env=env, cwd=self.cwd)
        assert self.url is not None
        if not fresh_connections:
            return CheckedHttp(self.url, headers=dict(self.headers), auth=self.auth)
        transport = CheckedHttp(self.url, headers=dict(self.headers), auth=self.auth, httpx_client=self.raw_http(False))
        transport.owns_client = True  # closed with the transport
        return transport

    def raw_http(self, keep_alive: bool = True) -> httpx2.AsyncClient:
        """A plain HTTP client for the checks that send what no MCP client would (closed by the
        caller); without ``keep_alive``, each request on a connection of its own."""
        import httpx2

        limits = httpx2.Limits() if keep_alive else httpx2.Limits(max_keepalive_connections=0)
        timeout = httpx2.Timeout(30, read=None) if not keep_alive else httpx2.Timeout(30, read=30)
        return httpx2.AsyncClient(timeout=timeout, headers=dict(self.headers), auth=self.auth, limits=limits)

    def environment(self) -> dict[str, str]:
        """The environment a stdio target's process is started with: ours and what was given."""
        return {**os.environ, **(self.env or {})}
