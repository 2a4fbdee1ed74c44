"""What the server says of a task (``TaskState``), read from either revision's wire shape, and
how a task ends badly (``TaskFailed``, ``TaskCancelled``). ``client/tasks.py`` follows tasks."""

from __future__ import annotations

__all__ = ["TaskCancelled", "TaskFailed", "TaskState"]

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from ..types.errors import MCPError, RemoteProtocolError, RequestError
from ..types.tasks import TERMINAL_STATUSES, TaskStatus

_STATUSES: frozenset[str] = frozenset(("working", "input_required", *TERMINAL_STATUSES))


@dataclass(frozen=True, slots=True)
class TaskState:
    """What the server last said of a task: its status and, in the stateless era, what
    goes with it (``input_requests`` while ``input_required``, ``result`` once ``completed``,
    ``error`` once ``failed``). ``task_id`` is None for a call that ran without a task."""

    task_id: str | None
    status: TaskStatus
    status_message: str | None = None
    created_at: str | None = None
    last_updated_at: str | None = None
    #: Retention from creation in milliseconds; None when unlimited or not said.
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None
    input_requests: Mapping[str, Any] | None = None
    result: Mapping[str, Any] | None = None
    error: Mapping[str, Any] | None = None

    @property
    def terminal(self) -> bool:
        """True once the task is ``completed``, ``failed`` or ``cancelled``: it changes no more."""
        return self.status in TERMINAL_STATUSES

    @classmethod
    def from_wire(cls, value: Any, what: str) -> TaskState:
        """A ``Task`` of either revision (``ttl``/``pollInterval`` in 2025-11-25, ``ttlMs``/
        ``pollIntervalMs`` in the extension); ``RemoteProtocolError`` naming ``what`` when it is not one."""
        if not isinstance(value, Mapping):
            raise RemoteProtocolError(f"{what}: the server's task must be an object")
        task_id, status = value.get("taskId"), value.get("status")
        if not isinstance(task_id, str) or not task_id:
            raise RemoteProtocolError(f"{what}: the server's task has no taskId string")
        if status not in _STATUSES:
            raise RemoteProtocolError(f"{what}: the server's task has an unknown status {status!r}")
        return cls(
            task_id,
            cast(TaskStatus, status),
            _text(value.get("statusMessage")),
            _text(value.get("createdAt")),
            _text(value.get("lastUpdatedAt")),
            _whole(value.get("ttlMs", value.get("ttl"))),
            _whole(value.get("pollIntervalMs", value.get("pollInterval"))),
            _object(value.get("inputRequests")),
            _object(value.get("result")),
            _object(value.get("error")),
        )


class TaskFailed(RequestError):
    """The task ended ``failed``. ``code``, ``message`` and ``data`` are the JSON-RPC error it
    failed with (its status message, code -32603, when the server gave none); ``state`` is
    what the server last said of it."""

    def __init__(self, message: str, *, state: TaskState, code: int | None = None, data: Any = None) -> None:
        super().__init__(message, code=code, data=data)
        self.state = state


class TaskCancelled(MCPError):
    """The task ended ``cancelled``, by our ``cancel()`` or by the server; ``state`` is its last state."""

    def __init__(self, message: str, *, state: TaskState) -> None:
        super().__init__(message)
        self.state = state


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _object(value: Any) -> Mapping[str, Any] | None:
    return value if isinstance(value, Mapping) else None
