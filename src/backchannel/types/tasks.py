"""Tasks (2025-11-25 only, experimental; an extension in 2026-07-28).

Only the shapes; the ``tasks/*`` methods are listed in :mod:`backchannel.types.methods`.
"""

from __future__ import annotations

__all__ = [
    "RELATED_TASK",
    "CancelTaskRequestParams",
    "CancelTaskResult",
    "CreateTaskResult",
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
]

from typing import Any, Literal, TypeAlias

from .base import Model, NotificationParams, PaginatedResult, RequestParams, Result

#: The ``_meta`` key that ties a message to a task.
RELATED_TASK = "io.modelcontextprotocol/related-task"

TaskStatus: TypeAlias = Literal["working", "input_required", "completed", "failed", "cancelled"]


class TaskMetadata(Model, kw_only=True):
    """The ``task`` param of a task-augmented request."""

    ttl: int | None = None


class RelatedTaskMetadata(Model, kw_only=True):
    """The value at ``_meta["io.modelcontextprotocol/related-task"]``."""

    task_id: str


class Task(Model, kw_only=True):
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
    task_id: str


class GetTaskPayloadRequestParams(RequestParams, kw_only=True):
    task_id: str


class CancelTaskRequestParams(RequestParams, kw_only=True):
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
