"""A task as data: its record, every legal move of its status, and its wire shapes per era.

Pure: no I/O, no clock of its own (times are passed in). The record is what the shared
state keeps (``TaskRecord.to_json``), so any worker can answer ``tasks/get``; the worker
running the task is its only writer while it runs (``runner.py``).

The status moves are one table, ``MOVES`` (2025-11-25 tasks.mdx §Task Status Lifecycle,
the same in SEP-2663): ``working`` and ``input_required`` move to each other and to the
three terminal statuses, which never move again. Writing the status a task already has
(a new status message, progress) is no move.
"""

from __future__ import annotations

__all__ = ["MOVES", "PROGRESS_META", "TaskRecord", "iso_time", "new_task_id"]

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ...types.errors import LocalProtocolError
from ...types.tasks import TERMINAL_STATUSES
from ...types.versions import Era

_LIVE = ("working", "input_required")

#: (from, to): every status change a task may make.
MOVES: frozenset[tuple[str, str]] = frozenset(
    (before, after)
    for before in _LIVE
    for after in ("working", "input_required", "completed", "failed", "cancelled")
    if before != after
)

#: backchannel's own ``_meta`` key on an extension ``tasks/get``: the last progress reported.
PROGRESS_META = "dev.backchannel/progress"


def new_task_id() -> str:
    """128 random bits, URL-safe: a task id is also the bearer of the task for an anonymous caller."""
    import secrets  # (with hashlib's OpenSSL: loaded by a first task, not at start)

    return secrets.token_urlsafe(16)


def iso_time(seconds: float) -> str:
    """``seconds`` since the epoch as ISO 8601 in UTC, to the millisecond (``...Z``)."""
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(slots=True)
class TaskRecord:
    """One task: who owns it, where it runs, its status and what it ended with.

    ``questions`` are the requests it waits on, by key (``inputRequests``); ``result`` is
    the tool's ``CallToolResult``; ``error`` a JSON-RPC error object. Times are seconds on
    the server's clock; ``ttl`` counts from ``created``."""

    task_id: str
    owner: str
    era: Era
    worker: str
    created: float
    ttl: float
    poll_interval: float
    status: str = "working"
    updated: float = 0.0
    message: str | None = None
    questions: dict[str, dict[str, Any]] = field(default_factory=dict)
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    progress: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if not self.updated:
            self.updated = self.created

    @property
    def terminal(self) -> bool:
        """Whether the task has ended (completed, failed or cancelled): no move leaves it."""
        return self.status in TERMINAL_STATUSES

    @property
    def expires(self) -> float:
        """When the record may be forgotten: its creation time plus its ``ttl``, on the store's clock."""
        return self.created + self.ttl

    def move(self, status: str, now: float, message: str | None = None) -> None:
        """Change the status (and its message); ``LocalProtocolError`` for a move ``MOVES`` lacks."""
        if status != self.status:
            if (self.status, status) not in MOVES:
                raise LocalProtocolError(f"task {self.task_id}: no move from {self.status!r} to {status!r}")
            self.status = status
        self.message = message
        self.updated = now

    # ------------------------------------------------------------ storage

    def to_json(self) -> dict[str, Any]:
        """The record as compact JSON data for the shared state; ``from_json`` reads it back."""
        value: dict[str, Any] = {
            "id": self.task_id,
            "o": self.owner,
            "e": self.era,
            "w": self.worker,
            "c": self.created,
            "t": self.ttl,
            "i": self.poll_interval,
            "s": self.status,
            "u": self.updated,
        }
        for key, item in (
            ("m", self.message),
            ("q", self.questions),
            ("r", self.result),
            ("x", self.error),
            ("p", self.progress),
        ):
            if item:
                value[key] = item
        return value

    @classmethod
    def from_json(cls, value: Any) -> TaskRecord | None:
        """The record ``to_json`` made, or None for anything else (a foreign or damaged value)."""
        if not isinstance(value, dict):
            return None
        try:
            record = cls(
                task_id=value["id"],
                owner=value["o"],
                era=value["e"],
                worker=value["w"],
                created=float(value["c"]),
                ttl=float(value["t"]),
                poll_interval=float(value["i"]),
                status=value["s"],
                updated=float(value["u"]),
                message=value.get("m"),
                questions=dict(value.get("q") or {}),
                result=value.get("r"),
                error=value.get("x"),
                progress=value.get("p"),
            )
        except (KeyError, TypeError, ValueError):
            return None
        return record

    # ------------------------------------------------------------ the wire

    def task(self) -> dict[str, Any]:
        """2025-11-25 ``Task`` (``tasks/get``, ``tasks/cancel``, ``tasks/list``, the status notification)."""
        task: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": iso_time(self.created),
            "lastUpdatedAt": iso_time(self.updated),
            "ttl": round(self.ttl * 1000),
            "pollInterval": round(self.poll_interval * 1000),
        }
        if self.message is not None:
            task["statusMessage"] = self.message
        return task

    def extension_task(self, *, detailed: bool) -> dict[str, Any]:
        """2026-07-28 ``Task`` (``ttlMs``, ``pollIntervalMs``); ``detailed`` adds what its status
        carries (``DetailedTask``: ``inputRequests``, ``result`` or ``error``), as ``tasks/get``
        and ``notifications/tasks`` send it. The ``CreateTaskResult`` is the plain one."""
        task: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": iso_time(self.created),
            "lastUpdatedAt": iso_time(self.updated),
            "ttlMs": round(self.ttl * 1000),
            "pollIntervalMs": round(self.poll_interval * 1000),
        }
        if self.message is not None:
            task["statusMessage"] = self.message
        if not detailed:
            return task
        if self.status == "input_required":
            task["inputRequests"] = self.questions
        elif self.status == "completed" and self.result is not None:
            # The inlined CallToolResult is a 2026-07-28 Result, which carries its resultType
            # (schema.ts ``Result``: servers of this revision MUST include it).
            task["result"] = {"resultType": "complete", **self.result}
        elif self.status == "failed" and self.error is not None:
            task["error"] = self.error
        if self.progress is not None and not self.terminal:
            task["_meta"] = {PROGRESS_META: self.progress}
        return task

    def create_result(self, era: Era) -> dict[str, Any]:
        """What answers the ``tools/call`` that made this task, in the caller's era."""
        if era == "handshake":
            return {"task": self.task()}
        return {"resultType": "task", **self.extension_task(detailed=False)}
