"""What the peer did, as the session reports it.

Each event is named for something that already happened, in the past tense.
The runtime reacts to events; it never inspects raw messages itself. Events are
built with keywords only (``RequestReceived(id=..., method=..., ...)``), so a
reader of a construction site sees what each value is.
"""

from __future__ import annotations

__all__ = [
    "CancelIntent",
    "CancelRequested",
    "ErrorReceived",
    "Event",
    "HandshakeCompleted",
    "NotificationReceived",
    "Outgoing",
    "PeerClosed",
    "ProgressReceived",
    "RequestId",
    "RequestReceived",
    "ResponseReceived",
]

from dataclasses import dataclass, field
from typing import Any, TypeAlias

from ..types.errors import MCPError
from ..types.ids import RequestId
from ..types.outgoing import CancelIntent, Outgoing
from ..types.versions import Era


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestReceived:
    """The peer asked for something; answer with ``send_result`` or ``send_error``.

    ``era`` says how to answer: a stateless-era request carries its own ``version`` and
    ``client_capabilities``; a handshake-era one relies on the session's handshake.
    """

    id: RequestId
    method: str
    params: dict[str, Any]
    era: Era
    version: str | None
    client_capabilities: dict[str, Any] | None = None
    client_info: dict[str, Any] | None = None
    log_level: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class NotificationReceived:
    """The peer sent a notification ``method`` with ``params``; nothing to answer."""

    method: str
    params: dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class ResponseReceived:
    """The peer answered our request ``id`` (sent as ``method``)."""

    id: RequestId
    method: str
    result: dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorReceived:
    """Our request ``id`` failed: the peer sent an error, or the session could not accept its answer."""

    id: RequestId
    method: str
    error: MCPError


@dataclass(frozen=True, slots=True, kw_only=True)
class ProgressReceived:
    """Progress for our request ``request_id``; values are already checked to increase.

    ``task_id`` is set when the request was answered with a task (2025-11-25): the progress
    is the task's, until the task ends (``Session.release_task_progress``, or the peer's
    terminal ``notifications/tasks/status``)."""

    request_id: RequestId
    token: int | str
    progress: float
    total: float | None
    message: str | None
    task_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CancelRequested:
    """The peer gave up on its request ``id``: stop the work; no response will be sent."""

    id: RequestId
    reason: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class HandshakeCompleted:
    """The ``initialize`` exchange finished; the session is READY."""

    version: str
    peer_info: dict[str, Any]
    peer_capabilities: dict[str, Any]
    instructions: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PeerClosed:
    """The connection ended; every request we had pending has failed."""

    reason: str = "connection closed"
    failed: tuple[RequestId, ...] = field(default=())


Event: TypeAlias = (
    RequestReceived
    | NotificationReceived
    | ResponseReceived
    | ErrorReceived
    | ProgressReceived
    | CancelRequested
    | HandshakeCompleted
    | PeerClosed
)
