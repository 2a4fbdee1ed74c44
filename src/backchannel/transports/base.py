"""The one small interface every transport implements.

A transport moves whole messages; it knows nothing of MCP beyond how to
express a ``CancelIntent`` on its wire. ``receive`` returns the next batch of
inbound items (JSON values, or ``MCPError`` for input that could not be
decoded) and ``None`` once the peer is gone.

Everything the runtime, a server's ``Context`` or a ``Client`` may ask of every
transport is declared on ``Transport``, with a default where most transports have
nothing to do. A transport must implement ``receive``, ``write`` and ``close``; it
may override:

- ``start()``: connect before the first message (the HTTP client opens its pool);
- ``drain()``: wait for output to shrink (backpressure);
- ``respawns`` and ``until_read(timeout)``: whether ``start`` after ``close`` reaches a fresh peer,
  and waiting until the peer has read what was written (stdio: the era probe's clock starts then);
- ``progress_read()``: before an answer that follows its request's progress, let the peer read that
  progress first (a loop turn; stdio: until the peer read it, bounded);
- ``request_cancelled(request_id)``: the peer cancelled its request, so no answer will
  come: a transport that carries each request's answer on its own stream ends it.

What only the HTTP host's transports do is declared apart, as two protocols they
implement: ``RoutedTransport`` (``routes_by_request``, ``write_routed``, ``close_stream``:
each message goes on the response of the peer's request it belongs to) and
``AuthenticatedTransport`` (``authenticates_callers``, ``principal``: who is calling, as an
authenticator named them). Their readers look the members up once, with the defaults of a
transport that has neither (``getattr(transport, "routes_by_request", False)``, a
``principal`` of None): at connection setup for the per-message path, never per message.
"""

from __future__ import annotations

__all__ = [
    "AuthenticatedTransport",
    "LazyEvent",
    "PushedTransport",
    "RoutedTransport",
    "Transport",
    "TransportBroken",
    "TransportClosed",
    "wire_messages",
]

import abc
import asyncio
import collections
from collections.abc import Callable
from typing import Any, Literal, Protocol

from ..types.errors import TransportBroken, TransportClosed  # (defined in the errors tree; part of this interface)
from ..types.ids import RequestId
from ..types.outgoing import CancelIntent, Outgoing


class LazyEvent(asyncio.Event):
    """An ``asyncio.Event`` that makes its waiters' deque (624 bytes) when first waited on.

    Each connection and pushed transport has one, and a server holds thousands of idle
    HTTP sessions whose events are only ever set and tested, never awaited."""

    def __init__(self) -> None:  # not Event's: it makes the deque
        self._value = False
        self._waiters = _NO_WAITERS  # type: ignore[assignment]  # what ``set`` and ``repr`` read: empty

    async def wait(self) -> Literal[True]:
        waiters: object = self._waiters
        if waiters is _NO_WAITERS:
            self._waiters = collections.deque()
        return await super().wait()


_NO_WAITERS: tuple[()] = ()


class Transport(abc.ABC):
    """How messages reach the peer and come back; see the module docstring for what to override."""

    #: True where ``start`` after ``close`` reaches a fresh peer that saw nothing written before (a
    #: spawned server: a new process). A ``Client`` whose era probe went unanswered starts afresh
    #: then, so that a late answer to the probe cannot meet its ``initialize``.
    respawns: bool = False

    async def start(self) -> None:  # noqa: B027 - most transports are ready when built
        """Get ready for the first message; a ``Client`` awaits it before anything is sent."""

    @abc.abstractmethod
    async def receive(self) -> list[Any] | None:
        """The next inbound batch, or None at end of stream."""

    @abc.abstractmethod
    def write(self, items: list[Outgoing]) -> None:
        """Queue messages for the peer, in order, without waiting.

        Raises ``TransportBroken`` when the peer is gone.
        """

    def push_to(self, sink: Callable[[list[Any]], None]) -> bool:
        """Hand each inbound batch to ``sink`` as it is read, instead of through ``receive``;
        False (the default) where the transport cannot. Where it can (stdio's server side),
        ``receive`` then brings only the end of the input; ``Connection.run`` asks first."""
        return False

    async def drain(self) -> None:  # noqa: B027 - most transports have nothing to wait for
        """Wait until queued output is small enough to accept more input (backpressure)."""

    async def until_read(self, timeout: float | None) -> bool | None:
        """Wait until the peer has read everything written so far: True once it has, False when
        ``timeout`` seconds (None: no bound) passed first or the output closed, None at once where
        this end cannot tell (the default). A ``Client`` starts its era probe's clock on True."""
        return None

    async def progress_read(self) -> None:
        """Called with a request's progress just written and its answer next: return when the
        answer may follow without sharing a read with that progress.

        The TypeScript SDK drops progress that it reads in one chunk with the request's answer
        (it hands a notification to a microtask but a response to its handler at once, and the
        response removes the request's progress handler). The default waits one loop turn, so
        the answer leaves in a write of its own (a stream's writer takes the progress first);
        stdio waits, bounded, until the peer has read the progress (``stdio_stream``)."""
        await asyncio.sleep(0)

    def request_cancelled(self, request_id: RequestId) -> None:  # noqa: B027 - most have no stream per request
        """The peer cancelled its request ``request_id``: no answer will be written for it.

        The runtime calls this as it stops the handler; a transport that gives each request
        its own response (HTTP) ends that response here.
        """

    @abc.abstractmethod
    async def close(self) -> None:
        """Release the transport; safe to call twice."""


class RoutedTransport(Protocol):
    """A transport that sends each message on the response of the peer's request it belongs
    to (the HTTP host's session transport). Readers find it by ``routes_by_request``, read
    once with a default of False; a transport without it is written with ``write``."""

    #: True: the runtime calls ``write_routed`` instead of ``write``, with the peer's request id per item.
    routes_by_request: bool

    def write_routed(self, items: list[tuple[Outgoing, RequestId | None]]) -> None:
        """Queue messages, each with the id of the peer's request it belongs to (or None)."""

    def close_stream(self, request_id: RequestId) -> bool:
        """End the response carrying the peer's request ``request_id`` now, keeping what follows
        for the client to resume (handshake-era HTTP, SEP-1699 polling); False where there is
        no such stream."""


class AuthenticatedTransport(Protocol):
    """A transport whose callers an authenticator names (the HTTP host's). Readers take
    ``principal`` with a default of None and ``authenticates_callers`` of False: stdio and
    memory carry one client, known by its connection."""

    #: True: a ``principal`` of None is an anonymous caller, not one known by its connection.
    authenticates_callers: bool
    #: Who is calling, as the authenticator named them; None for an anonymous caller.
    principal: str | None


class PushedTransport(Transport):
    """A transport whose inbound messages are handed to ``Connection.feed`` as they arrive
    (HTTP POSTs) rather than read: ``receive`` only reports the end, once it is closed."""

    def __init__(self) -> None:
        self._ended = LazyEvent()

    @property
    def ended(self) -> bool:
        return self._ended.is_set()

    async def receive(self) -> list[Any] | None:
        await self._ended.wait()
        return None

    async def close(self) -> None:
        self._ended.set()


def wire_messages(items: list[Outgoing]) -> list[dict[str, Any]]:
    """Messages for a transport that expresses cancellation as ``notifications/cancelled``."""
    return [item.as_notification() if isinstance(item, CancelIntent) else item for item in items]
