"""The one small interface every transport implements.

A transport moves whole messages; it knows nothing of MCP beyond how to
express a ``CancelIntent`` on its wire. ``receive`` returns the next batch of
inbound items (JSON values, or ``MCPError`` for input that could not be
decoded) and ``None`` once the peer is gone.
"""

from __future__ import annotations

__all__ = ["Transport", "TransportBroken", "TransportClosed", "wire_messages"]

import abc
from typing import Any

from ..protocol.events import CancelIntent, Outgoing
from ..types.errors import ConnectionClosed


class TransportClosed(ConnectionClosed):
    """We closed the transport."""


class TransportBroken(ConnectionClosed):
    """The peer or the network ended the transport."""


class Transport(abc.ABC):
    @abc.abstractmethod
    async def receive(self) -> list[Any] | None:
        """The next inbound batch, or None at end of stream."""

    @abc.abstractmethod
    def write(self, items: list[Outgoing]) -> None:
        """Queue messages for the peer, in order, without waiting.

        Raises ``TransportBroken`` when the peer is gone.
        """

    async def drain(self) -> None:  # noqa: B027 - most transports have nothing to wait for
        """Wait until queued output is small enough to accept more input (backpressure)."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Release the transport; safe to call twice."""


def wire_messages(items: list[Outgoing]) -> list[dict[str, Any]]:
    """Messages for a transport that expresses cancellation as ``notifications/cancelled``."""
    return [item.as_notification() if isinstance(item, CancelIntent) else item for item in items]
