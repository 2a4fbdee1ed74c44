"""What one client may hold of the HTTP endpoint's handshake era: its sessions, its event streams.

A server's caps (live sessions, connections) are shared by everyone, so one client must not be
able to fill them. Each client gets a share, and every long-lived response ends after a while:

- **Who a client is** (``client_of``): the principal when the request is authenticated, else the
  address it comes from (ASGI's ``scope["client"]``; an IPv6 address by its /64, which one host
  typically has whole). Behind a reverse proxy every request comes from the proxy, so anonymous
  clients share one share there: authenticate them, or raise the per-client limits.
- **Event streams** (``StreamRules``): a client holds at most ``max_streams_per_client`` open GET
  streams (a session's stream, or the resumption of a request's stream with ``Last-Event-ID``),
  and all clients together ``max_streams``, so that streams never take every connection; past
  either the GET is refused with a JSON-RPC error body (429 for the client's share, 503 for the
  server's cap) and ``Retry-After``: when the client's (or anyone's) oldest stream reaches its
  lifetime. Every SSE response of a session (those of request POSTs too) ends after
  ``stream_lifetime`` with a ``retry`` field; the stream itself goes on, and the client reconnects
  (a request's stream is resumed with ``Last-Event-ID``, as after any break).

The share of live sessions, and the end of a session that never finishes its handshake, are kept
by the session registry (``sessions.py``) with the refusal made here (``too_many``).
"""

from __future__ import annotations

__all__ = [
    "HANDSHAKE_TIMEOUT",
    "MAX_SESSIONS_PER_CLIENT",
    "MAX_STREAMS",
    "MAX_STREAMS_PER_CLIENT",
    "STREAM_LIFETIME",
    "ClientKey",
    "OpenStream",
    "StreamRules",
    "client_of",
    "retry_seconds",
    "too_many",
]

import asyncio
import contextvars
import math
import time
from collections.abc import Callable
from typing import Final

from ..framing import http as H
from ..framing.sse import encode_event
from ..runtime.caller_address import address_budget
from ..types.errors import RateLimited
from .asgi import Scope
from .authenticator import Principal
from .limits import busy

#: Seconds a session may take from ``initialize`` to ``notifications/initialized`` (with no
#: response of it open) before it is ended: a client finishes its handshake in milliseconds.
HANDSHAKE_TIMEOUT: Final = 10.0
#: Live handshake-era sessions one client may hold: a tenth of ``limits.MAX_SESSIONS``.
MAX_SESSIONS_PER_CLIENT: Final = 1000
#: Open GET streams, all clients together: three quarters of ``limits.MAX_CONNECTIONS``, so a
#: quarter of the connections is always left for requests (``run_http`` scales it with its cap).
MAX_STREAMS: Final = 750
#: Open GET streams one client may hold (one per session, and a resumption per broken stream).
MAX_STREAMS_PER_CLIENT: Final = 100
#: Seconds after which an SSE response ends with a ``retry`` field, for the client to reconnect.
STREAM_LIFETIME: Final = 600.0

#: ``("principal", name)`` or ``("address", host)``.
ClientKey = tuple[str, str]
_NOWHERE: Final = ("address", "unknown")
# A deadline this close counts as reached (uvloop's timers have millisecond resolution).
_RESOLUTION = 0.001


def client_of(principal: Principal | None, scope: Scope) -> ClientKey:
    """Who is asking, for the per-client shares: the principal, else the client's address."""
    if principal is not None:
        return ("principal", principal)
    peer = scope.get("client")
    if not peer:  # (None under some test transports and unix sockets)
        return _NOWHERE
    host = str(peer[0])
    return ("address", address_budget(host))  # (an IPv6 address by its /64, as tasks count it)


def retry_seconds(wait: float) -> int:
    """A ``Retry-After`` for a wait of ``wait`` seconds: whole seconds, rounded up, at least 1."""
    return max(1, math.ceil(wait))


def too_many(message: str, wait: int) -> H.Rejection:
    """429 with ``Retry-After``: the client holds its whole share; ``RateLimited`` (-31429) with
    ``data.retryAfterMs``, as the completion rate limit answers."""
    error = RateLimited(f"Too Many Requests: {message}", data={"retryAfterMs": wait * 1000})
    return H.Rejection(429, error, {"retry-after": str(wait)})


class OpenStream:
    """One open SSE response under ``StreamRules``: ``end`` is called once its lifetime is over
    (``over`` is then True), and the response sends ``farewell`` last (an SSE ``retry`` field:
    when to reconnect); ``StreamRules.close`` it when the response ends, however it ends."""

    __slots__ = ("client", "deadline", "end", "farewell", "over")

    def __init__(self, client: ClientKey | None, deadline: float, end: Callable[[], None], farewell: bytes) -> None:
        self.client = client
        self.deadline = deadline
        self.end = end
        self.farewell = farewell
        self.over = False

    def ends_with(self, end: Callable[[], None]) -> None:
        """How to end the response, once it is known (at once, if its lifetime is over already)."""
        self.end = end
        if self.over:
            end()


class StreamRules:
    """The endpoint's open SSE responses: the GET streams counted per client and in all
    (``refusal``), and every response's lifetime.

    Lifetimes are ``now + lifetime`` for one fixed lifetime, so opening order is deadline order:
    one loop timer, set for the oldest open response, ends them; opening or closing one costs a
    few dict operations.
    """

    def __init__(
        self,
        *,
        lifetime: float | None = STREAM_LIFETIME,
        max_streams: int | None = MAX_STREAMS,
        max_per_client: int | None = MAX_STREAMS_PER_CLIENT,
        retry_ms: int = 1000,
        retry_after: int = 5,
    ) -> None:
        self.lifetime = lifetime
        self.max_streams = max_streams
        self.max_per_client = max_per_client
        self.retry_after = retry_after
        #: What a response sends before it ends at its lifetime: when to reconnect (SSE ``retry``).
        self.farewell = encode_event(retry_ms=retry_ms)
        #: Open GET streams, all clients' and each client's, oldest first.
        self.gets: dict[OpenStream, None] = {}
        self.by_client: dict[ClientKey, dict[OpenStream, None]] = {}
        self._living: dict[OpenStream, None] = {}  # every open response with a lifetime, oldest first
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def refusal(self, client: ClientKey) -> H.Rejection | None:
        """Why ``client`` may not open one more GET stream now, or None."""
        mine = self.by_client.get(client)
        if self.max_per_client is not None and mine is not None and len(mine) >= self.max_per_client:
            wait = self._wait(mine)
            return too_many(
                f"this client ({client[0]} {client[1]}) has {len(mine)} event streams open, its share; "
                f"close one, or retry when the oldest ends in {wait} s",
                wait,
            )
        if self.max_streams is not None and len(self.gets) >= self.max_streams:
            wait = self._wait(self.gets)
            return busy(f"the server is at its limit of {self.max_streams} open event streams", wait)
        return None

    def _wait(self, streams: dict[OpenStream, None]) -> int:
        """Seconds until the oldest of ``streams`` reaches its lifetime (else ``retry_after``)."""
        for stream in streams:
            if not stream.over and stream.deadline != math.inf:
                return retry_seconds(stream.deadline - time.monotonic())
        return self.retry_after

    def open(
        self, client: ClientKey | None, end: Callable[[], None] = lambda: None, *, lasting: bool = False
    ) -> OpenStream:
        """A response opens; ``client``: count it as that client's GET stream (None: a request
        POST's answer, bounded by its lifetime only). ``end`` ends the response, sending
        ``farewell`` last (``OpenStream.ends_with`` sets it later); ``lasting``: it has no
        lifetime (the deprecated HTTP+SSE transport's stream is its session). Call it in the
        same loop turn as ``refusal``, so that two requests cannot both take the last place."""
        lifetime = None if lasting else self.lifetime
        deadline = time.monotonic() + lifetime if lifetime is not None else math.inf
        stream = OpenStream(client, deadline, end, self.farewell)
        if client is not None:
            self.gets[stream] = None
            mine = self.by_client.get(client)
            if mine is None:
                mine = self.by_client[client] = {}
            mine[stream] = None
        if lifetime is not None:
            self._living[stream] = None
            if self._timer is None or self._loop is not asyncio.get_running_loop():  # (an app reused on another loop)
                self._arm(lifetime)
        return stream

    def close(self, stream: OpenStream) -> None:
        """The response ended (at its lifetime, or the client left, or the stream ended)."""
        self._living.pop(stream, None)
        client = stream.client
        if client is not None:
            stream.client = None  # (closed twice: counted once)
            self.gets.pop(stream, None)
            mine = self.by_client.get(client)
            if mine is not None:
                mine.pop(stream, None)
                if not mine:
                    del self.by_client[client]

    def _arm(self, delay: float) -> None:
        # An empty context: the timer must not keep the opening request's context alive.
        loop = self._loop = asyncio.get_running_loop()
        if self._timer is not None:
            self._timer.cancel()
        self._timer = loop.call_later(max(0.0, delay), self._expire, context=contextvars.Context())

    def _expire(self) -> None:
        self._timer = None
        due = time.monotonic() + _RESOLUTION
        living = self._living
        while living:
            stream = next(iter(living))
            if stream.deadline > due:
                self._arm(stream.deadline - time.monotonic())
                return
            del living[stream]
            stream.over = True
            stream.end()
