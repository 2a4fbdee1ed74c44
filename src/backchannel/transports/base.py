"""The one small interface every transport implements.

A transport moves whole messages; it knows nothing of MCP beyond how to
express a ``CancelIntent`` on its wire. ``receive`` returns the next batch of
inbound items (JSON values, or ``MCPError`` for input that could not be
decoded) and ``None`` once the peer is gone.
"""

from __future__ import annotations

__all__ = ["PushedTransport", "Transport", "TransportBroken", "TransportClosed", "wire_messages"]

import abc
import asyncio
from typing import Any

from ..protocol.events import CancelIntent, Outgoing, RequestId
from ..types.errors import ConnectionClosed


class TransportClosed(ConnectionClosed):
    """We closed the transport."""


class TransportBroken(ConnectionClosed):
    """The peer or the network ended the transport."""


class Transport(abc.ABC):
    #: True for transports that send each message where its request lives (HTTP):
    #: the runtime then calls ``write_routed`` with the peer's request id per item.
    routes_by_request: bool = False

    @abc.abstractmethod
    async def receive(self) -> list[Any] | None:
        """The next inbound batch, or None at end of stream."""

    @abc.abstractmethod
    def write(self, items: list[Outgoing]) -> None:
        """Queue messages for the peer, in order, without waiting.

        Raises ``TransportBroken`` when the peer is gone.
        """

    def write_routed(self, items: list[tuple[Outgoing, RequestId | None]]) -> None:
        """Queue messages, each with the id of the peer's request it belongs to (or None)."""
        self.write([item for item, _ in items])

    async def drain(self) -> None:  # noqa: B027 - most transports have nothing to wait for
        """Wait until queued output is small enough to accept more input (backpressure)."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Release the transport; safe to call twice."""


class PushedTransport(Transport):
    """A transport whose inbound messages are handed to ``Connection.take`` as they arrive
    (HTTP POSTs) rather than read: ``receive`` only reports the end, once it is closed."""

    def __init__(self) -> None:
        self._ended = asyncio.Event()

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
