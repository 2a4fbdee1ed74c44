"""How much of the server one client may hold, and for how long: the HTTP endpoint's limits.

A client that sends its request slowly (one byte every few seconds) or opens
sessions and connections without end must cost a bounded share of the server,
and everyone else must keep being served. The limits, their defaults and what is
refused at each are listed in ``docs/reliability.md``:

- ``header_timeout``: the request line and headers must arrive within this many
  seconds of the connection opening (or of the previous request ending); else 408
  and the connection closes. Only the server that parses HTTP can see this: it is
  enforced by ``run_http``'s HTTP/1.1 server (``h1/connection.py``).
- ``body_timeout``: the body must arrive within this many seconds of the headers;
  else 408 and the connection closes. ``run_http`` enforces it for every path of the
  connection; ``HttpApp`` enforces it too, for the MCP endpoint mounted elsewhere.
- ``max_connections`` (``run_http``), ``max_requests`` (``HttpApp``: requests being
  served at once, open streams included) and ``max_sessions`` (live handshake-era
  sessions): past them a request is answered 503 with ``Retry-After`` at once.

Every refusal carries a JSON-RPC error body (id null) with a message saying which
limit was reached.
"""

from __future__ import annotations

__all__ = [
    "BODY_TIMEOUT",
    "FD_RESERVE",
    "HEADER_TIMEOUT",
    "MAX_CONNECTIONS",
    "MAX_REQUESTS",
    "MAX_SESSIONS",
    "RETRY_AFTER",
    "TIMED_OUT",
    "BodyDeadlines",
    "TimedOut",
    "busy",
    "connection_cap",
    "too_slow",
]

import asyncio
import enum
import logging
import time
from typing import Final

from ..framing import http as H
from ..types.errors import InternalError, InvalidRequest
from .asgi import Receive, read_body

logger = logging.getLogger("backchannel.http")

HEADER_TIMEOUT: Final = 10.0
BODY_TIMEOUT: Final = 30.0
MAX_CONNECTIONS: Final = 1000
#: Descriptors kept free for everything else a server opens (its listener, files, the
#: URL-elicitation side listener, outgoing connections) when capping connections.
FD_RESERVE: Final = 100
#: Responses open at once (a POST being answered, a GET stream): each holds a task and buffers.
MAX_REQUESTS: Final = 2000
#: An idle session costs about 2.5 KiB (benchmarks/RESULTS.md): the cap bounds memory under
#: abuse (about 25 MiB here), not ordinary load; one that never finishes its handshake is
#: ended by the idle timeout.
MAX_SESSIONS: Final = 10_000
RETRY_AFTER: Final = 5


class TimedOut(enum.Enum):
    """The type of ``TIMED_OUT``."""

    TIMED_OUT = "timed out"


#: What ``BodyDeadlines.read`` returns when the body did not arrive in time.
TIMED_OUT: Final = TimedOut.TIMED_OUT


def busy(message: str, retry_after: int) -> H.Rejection:
    """503 with ``Retry-After``: the server is at one of its caps; nothing about the request is wrong."""
    return H.Rejection(503, InternalError(f"Service Unavailable: {message}"), {"retry-after": str(retry_after)})


def too_slow(what: str, seconds: float) -> H.Rejection:
    """408: the client took too long; the connection closes (RFC 9110 §15.5.9)."""
    error = InvalidRequest(f"Request Timeout: the {what} did not arrive within {seconds:g} s")
    return H.Rejection(408, error, {"connection": "close"})


def connection_cap(requested: int | None) -> int | None:
    """``requested``, lowered so that the connections fit the process's file-descriptor limit
    (less ``FD_RESERVE``): past that, accepting fails and ordinary clients are reset instead of
    answered."""
    if requested is None:
        return None
    try:
        import resource
    except ImportError:  # Windows: no such limit to respect
        return requested
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return requested
    return max(1, min(requested, soft - FD_RESERVE))


class BodyDeadlines:
    """Bounds how long request bodies take to arrive, with no timer or task per request.

    A reader registers its task with its deadline; one timer, armed only while some body
    is being read, sweeps the overdue ones and cancels their read. Deadlines are ``now +
    timeout`` for one fixed ``timeout``, so registration order is deadline order and a
    sweep stops at the first reader still in time. Nearly every body has arrived with its
    headers: such a read costs two dict operations.
    """

    __slots__ = ("_expired", "_handle", "_loop", "_reading", "timeout")

    def __init__(self, timeout: float | None) -> None:
        self.timeout = timeout
        self._reading: dict[asyncio.Task[object], float] = {}
        self._expired: set[asyncio.Task[object]] = set()
        self._handle: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def read(self, receive: Receive, limit: int) -> bytes | TimedOut | None:
        """The body (see ``asgi.read_body``: None when over ``limit``, or when the client left
        before its end), or ``TIMED_OUT``."""
        task = asyncio.current_task() if self.timeout is not None else None
        if task is None:
            return await read_body(receive, limit)
        self._watch(task)
        expired = self._expired
        try:
            return await read_body(receive, limit)
        except asyncio.CancelledError:
            if task not in expired:
                raise
            # The cancellation was ours, to stop the read: the request goes on to its 408
            # (unless someone else cancelled the task as well).
            if task.uncancel() > 0:
                raise
            return TIMED_OUT
        finally:
            self._reading.pop(task, None)  # (a sweep took it out if it expired)
            if expired:
                expired.discard(task)

    def _watch(self, task: asyncio.Task[object]) -> None:
        assert self.timeout is not None
        self._reading[task] = time.monotonic() + self.timeout
        loop = task.get_loop()
        if self._handle is None or self._loop is not loop:  # (an app reused on another loop arms anew)
            self._loop = loop
            self._handle = loop.call_later(self._period(), self._sweep)

    def _period(self) -> float:
        # A sweep this often ends a slow read at most a quarter late (and at most a second).
        assert self.timeout is not None
        return max(0.01, min(1.0, self.timeout / 4))

    def _sweep(self) -> None:
        self._handle = None
        now = time.monotonic()
        reading = self._reading
        while reading:
            task, deadline = next(iter(reading.items()))
            if deadline > now:
                break
            del reading[task]
            self._expired.add(task)
            task.cancel("the request body did not arrive in time")
        if reading and self._loop is not None:
            self._handle = self._loop.call_later(self._period(), self._sweep)
