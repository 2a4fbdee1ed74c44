"""Tasks: a tool call that outlives its request (2025-11-25 tasks.mdx, the 2026-07-28 tasks extension).

``records.py`` is the task as data (its moves and wire shapes), ``store.py`` keeps records in the
server's state, ``runner.py`` runs one task's body in this process, ``relay.py`` carries commands to
the worker running a task, ``service.py`` (``server.tasks``) decides which calls become tasks and
finds a caller's, ``routes.py`` answers ``tasks/*``. ``docs/tasks.md`` is the guide.
"""

from __future__ import annotations

__all__ = ["TaskRecord", "TaskService", "TaskStart", "TaskSupport"]

from typing import TYPE_CHECKING, Any

from ..tools import TaskStart, TaskSupport
from .service import TaskService

if TYPE_CHECKING:
    from .records import TaskRecord


def __getattr__(name: str) -> Any:
    # ``TaskRecord`` loads with the first task (``service.py``), not with every server.
    if name == "TaskRecord":
        from .records import TaskRecord

        return TaskRecord
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
