"""Tasks: the experimental core utility of 2025-11-25 (SEP-1686) and the tasks extension of
2026-07-28 (SEP-2663, ``io.modelcontextprotocol/tasks``).

Only the shapes; the ``tasks/*`` methods are listed in :mod:`backchannel.types.methods`
(the extension's in ``EXTENSION_METHODS``). The two are not wire-compatible: 2025-11-25
wraps a new task in ``{"task": Task}`` and names its durations ``ttl``/``pollInterval``;
the extension answers ``tools/call`` with the task's fields at the top level
(``resultType: "task"``), names them ``ttlMs``/``pollIntervalMs``, inlines the result,
error or pending input requests into ``tasks/get`` (``DetailedTask``) and has no
``tasks/result`` or ``tasks/list``.
"""

from __future__ import annotations

__all__ = [
    "RELATED_TASK",
    "TASKS_EXTENSION",
    "TERMINAL_STATUSES",
    "CancelTaskRequestParams",
    "CancelTaskResult",
    "CreateTaskResult",
    "DetailedTask",
    "DetailedTaskNotificationParams",
    "GetTaskPayloadRequestParams",
    "GetTaskPayloadResult",
    "GetTaskRequestParams",
    "GetTaskResult",
    "ListTasksResult",
    "RelatedTaskMetadata",
    "Task",
    "TaskMetadata",
    "TaskStatus",
    "TaskStatusNotificationParams",
    "UpdateTaskRequestParams",
]

from typing import Any, Literal, TypeAlias

from .base import InputResponses, Model, NotificationParams, PaginatedResult, RequestParams, Result

#: The ``_meta`` key that ties a message to a task (2025-11-25).
RELATED_TASK = "io.modelcontextprotocol/related-task"
#: The extension's identifier (2026-07-28): a key of ``capabilities.extensions``.
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"

TaskStatus: TypeAlias = Literal["working", "input_required", "completed", "failed", "cancelled"]
#: Statuses a task never leaves.
TERMINAL_STATUSES: frozenset[str] = frozenset({"completed", "failed", "cancelled"})


class TaskMetadata(Model, kw_only=True):
    """The ``task`` param of a task-augmented request."""

    ttl: int | None = None


class RelatedTaskMetadata(Model, kw_only=True):
    """The value at ``_meta["io.modelcontextprotocol/related-task"]``."""

    task_id: str


class Task(Model, kw_only=True):
    """A task as the wire shows it: its id, status (and message), times, ``ttl`` and how often to poll."""

    task_id: str
    status: TaskStatus
    status_message: str | None = None
    created_at: str
    last_updated_at: str
    #: Retention in milliseconds; ``None`` (wire ``null``, always sent) means unlimited.
    ttl: int | None
    poll_interval: int | None = None


class CreateTaskResult(Result, kw_only=True):
    """The immediate answer to a task-augmented request."""

    task: Task


class GetTaskRequestParams(RequestParams, kw_only=True):
    """``tasks/get``: the status of task ``task_id``."""

    task_id: str


class GetTaskPayloadRequestParams(RequestParams, kw_only=True):
    """``tasks/result``: the result of task ``task_id``, waiting for it to end."""

    task_id: str


class CancelTaskRequestParams(RequestParams, kw_only=True):
    """``tasks/cancel``: cancel task ``task_id``."""

    task_id: str


class GetTaskResult(Result, kw_only=True):
    """``Result & Task``: the task's fields at the top level of the result."""

    task_id: str
    status: TaskStatus
    status_message: str | None = None
    created_at: str
    last_updated_at: str
    ttl: int | None
    poll_interval: int | None = None


CancelTaskResult: TypeAlias = GetTaskResult

#: The answer to ``tasks/result`` has the shape of the original request's result.
GetTaskPayloadResult: TypeAlias = dict[str, Any]


class ListTasksResult(PaginatedResult, kw_only=True):
    """One page of ``tasks/list``; ``next_cursor`` asks for the next."""

    tasks: list[Task]


class TaskStatusNotificationParams(NotificationParams, kw_only=True):
    """``NotificationParams & Task``."""

    task_id: str
    status: TaskStatus
    status_message: str | None = None
    created_at: str
    last_updated_at: str
    ttl: int | None
    poll_interval: int | None = None


# -- the tasks extension (2026-07-28) ---------------------------------------------------


class DetailedTask(Result, kw_only=True):
    """``Result & DetailedTask``: the answer to ``tasks/get``, and with ``resultType: "task"``
    (and none of the three status payloads) the ``CreateTaskResult`` that answers a ``tools/call``.

    ``input_requests`` is set when ``input_required``, ``result`` when ``completed`` (a tool's
    ``isError`` result included), ``error`` (a JSON-RPC error object) when ``failed``."""

    task_id: str
    status: TaskStatus
    status_message: str | None = None
    created_at: str
    last_updated_at: str
    #: Milliseconds from creation; ``None`` (wire ``null``) means unlimited.
    ttl_ms: int | None
    poll_interval_ms: int | None = None
    input_requests: dict[str, dict[str, Any]] | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class UpdateTaskRequestParams(RequestParams, kw_only=True):
    """``tasks/update``: answers to some or all of the task's outstanding ``inputRequests``."""

    task_id: str
    input_responses: InputResponses


class DetailedTaskNotificationParams(NotificationParams, kw_only=True):
    """``notifications/tasks`` (through ``subscriptions/listen``): what ``tasks/get`` would say now."""

    task_id: str
    status: TaskStatus
    status_message: str | None = None
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    poll_interval_ms: int | None = None
    input_requests: dict[str, dict[str, Any]] | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
