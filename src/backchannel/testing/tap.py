"""A transport wrapper that keeps a copy of everything that crosses it.

Wrap either end of a connection (``connected(..., wrap_server=Tap)``) and assert on
what went over the wire, not on what the objects in between believe.
"""

from __future__ import annotations

__all__ = ["Tap"]

from typing import Any, cast

import msgspec

from ..framing.codec import encode_message
from ..protocol.events import Outgoing, RequestId
from ..transports.base import RoutedTransport, Transport, wire_messages

_decode = msgspec.json.decode


def _as_sent(message: Any) -> Any:
    """The message as the peer will read it: encoded to JSON and decoded again."""
    data = encode_message(message)
    return _decode(data) if data else None


class Tap(Transport):
    """Forwards to ``inner`` and records both directions, as JSON-decoded dicts.

    ``received`` holds what this end read (MCP errors for undecodable input are skipped),
    ``written`` what this end wrote (a cancellation as the ``notifications/cancelled`` it
    is on a message wire). ``keep=False`` records nothing (a test that measures memory).
    The query methods below cover the common questions; subclass for more. It states what
    the wrapped transport states of ``RoutedTransport`` and ``AuthenticatedTransport``.

    Made without ``inner``, it is bound later by ``around``: pass ``wrap_server=tap.around``
    to ``connected`` and keep ``tap`` to read afterwards.
    """

    routes_by_request: bool = False
    authenticates_callers: bool = False
    principal: str | None = None

    def __init__(self, inner: Transport | None = None, *, keep: bool = True) -> None:
        self._inner = inner
        self.keep = keep
        self.received: list[dict[str, Any]] = []
        self.written: list[dict[str, Any]] = []
        if inner is not None:
            self.around(inner)

    def around(self, inner: Transport) -> Tap:
        """Wrap ``inner``; this tap, ready to use as the transport."""
        self._inner = inner
        # The HTTP-side facts (RoutedTransport, AuthenticatedTransport), as the wrapped transport states them.
        self.routes_by_request = getattr(inner, "routes_by_request", False)
        self.authenticates_callers = getattr(inner, "authenticates_callers", False)
        self.principal = getattr(inner, "principal", None)
        return self

    @property
    def inner(self) -> Transport:
        """The transport this tap forwards to; a ``Tap`` made without one raises until ``around`` binds it."""
        assert self._inner is not None, "this Tap wraps nothing yet: call around(transport) first"
        return self._inner

    # ------------------------------------------------------------ interface

    async def start(self) -> None:
        await self.inner.start()
        self.principal = getattr(self.inner, "principal", None)

    def request_cancelled(self, request_id: RequestId) -> None:
        self.inner.request_cancelled(request_id)

    def close_stream(self, request_id: RequestId) -> bool:
        """``RoutedTransport.close_stream`` of the wrapped transport; False where it has none."""
        close_stream = getattr(self.inner, "close_stream", None)
        return close_stream is not None and bool(close_stream(request_id))

    async def receive(self) -> list[Any] | None:
        batch = await self.inner.receive()
        if batch and self.keep:
            self.received.extend(_as_sent(m) for m in batch if isinstance(m, dict))
        return batch

    def write(self, items: list[Outgoing]) -> None:
        if self.keep:
            self.written.extend(m for m in map(_as_sent, wire_messages(items)) if isinstance(m, dict))
        self.inner.write(items)

    def write_routed(self, items: list[tuple[Outgoing, RequestId | None]]) -> None:
        """Records, then hands on: to ``RoutedTransport.write_routed`` where the wrapped
        transport routes by request, else to its ``write``."""
        if self.keep:
            self.written.extend(m for m in map(_as_sent, wire_messages([i for i, _ in items])) if isinstance(m, dict))
        if self.routes_by_request:
            cast(RoutedTransport, self.inner).write_routed(items)
        else:
            self.inner.write([item for item, _ in items])

    async def drain(self) -> None:
        await self.inner.drain()

    async def until_read(self, timeout: float | None) -> bool | None:
        return await self.inner.until_read(timeout)

    async def progress_read(self) -> None:
        await self.inner.progress_read()

    async def close(self) -> None:
        await self.inner.close()

    # ------------------------------------------------------------ queries

    def requests_received(self, method: str) -> list[dict[str, Any]]:
        """Requests ``method`` this end read, in order."""
        return [m for m in self.received if m.get("method") == method and "id" in m]

    def requests_written(self, method: str) -> list[dict[str, Any]]:
        """Requests ``method`` this end wrote, in order."""
        return [m for m in self.written if m.get("method") == method and "id" in m]

    def notifications_received(self, method: str) -> list[dict[str, Any]]:
        """Notifications ``method`` this end read, in order."""
        return [m for m in self.received if m.get("method") == method and "id" not in m]

    def notifications_written(self, method: str) -> list[dict[str, Any]]:
        """Notifications ``method`` this end wrote, in order."""
        return [m for m in self.written if m.get("method") == method and "id" not in m]

    def responses_received(self, request_id: RequestId) -> list[dict[str, Any]]:
        """Responses (result or error) this end read to request ``request_id``."""
        return [m for m in self.received if "method" not in m and m.get("id") == request_id]

    def responses_written(self, request_id: RequestId) -> list[dict[str, Any]]:
        """Responses (result or error) this end wrote to request ``request_id``."""
        return [m for m in self.written if "method" not in m and m.get("id") == request_id]

    def tool_calls_received(self, tool: str) -> list[dict[str, Any]]:
        """Every ``tools/call`` of ``tool`` this end read, in order."""
        return [m for m in self.requests_received("tools/call") if (m.get("params") or {}).get("name") == tool]

    def tool_calls_written(self, tool: str) -> list[dict[str, Any]]:
        """Every ``tools/call`` of ``tool`` this end wrote, in order."""
        return [m for m in self.requests_written("tools/call") if (m.get("params") or {}).get("name") == tool]
