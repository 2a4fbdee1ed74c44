"""What a session hands its transport to write: a JSON-RPC message, or a ``CancelIntent``.

They live here, below both, so a transport needs nothing of the protocol core to know what it is
given; ``protocol.events`` re-exports them with the events.
"""

from __future__ import annotations

__all__ = ["CancelIntent", "Outgoing"]

from dataclasses import dataclass
from typing import Any, TypeAlias

from .ids import RequestId


@dataclass(frozen=True, slots=True, kw_only=True)
class CancelIntent:
    """We gave up on our request ``request_id``.

    Transports write it their own way: ``notifications/cancelled`` on stdio and on
    handshake-era HTTP, closing the response stream on stateless-era HTTP.
    """

    request_id: RequestId
    reason: str | None = None

    def as_notification(self) -> dict[str, Any]:
        """The ``notifications/cancelled`` message that says this, for a transport that writes it as one."""
        params: dict[str, Any] = {"requestId": self.request_id}
        if self.reason is not None:
            params["reason"] = self.reason
        return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}


#: What ``Session.outgoing()`` yields: a JSON-RPC message to write, or a cancellation to express.
Outgoing: TypeAlias = dict[str, Any] | CancelIntent
