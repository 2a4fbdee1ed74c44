"""Where tasks are kept: records in the server's ``StateStore``, one key per task, with its TTL.

The key carries its owner's slot: ``tasks:{<slot of owner>}:<task id>``. A caller can only
ever name keys under its own owner scope, so another caller's task id is "not found" by
construction (the record's ``owner`` is compared as well), and a Redis Cluster node holds an
owner's tasks together with the bucket that counts them. Creation is ``add`` counted in the
owner's bucket: at most ``limit`` tasks live per owner, the finished ones included until
their TTL passes (2025-11-25 tasks.mdx §Resource Management). The key expires with the task.
"""

from __future__ import annotations

__all__ = ["TaskStore", "TasksFull"]

from collections.abc import Callable

from ...state.store import StateStore, StoreFull, slot_of
from .records import TaskRecord


class TasksFull(StoreFull):
    """The caller holds as many tasks as allowed (-32603); earlier ones must finish and expire."""


class TaskStore:
    """Task records in ``state`` (``server.state``: in-process by default, Redis in a fleet)."""

    def __init__(self, state: Callable[[], StateStore], clock: Callable[[], float], limit: int) -> None:
        self._state = state  # read on each use: a server may be given a shared state after it was made
        self.clock = clock
        self.limit = limit

    @staticmethod
    def key(owner: str, task_id: str) -> str:
        return f"tasks:{slot_of(owner)}:{task_id}"

    @staticmethod
    def bucket(owner: str) -> str:
        return f"tasks:{slot_of(owner)}"

    async def create(self, record: TaskRecord) -> None:
        """Keep a new task; only once this returns may anyone be told its id (SEP-2663: a
        ``tasks/get`` on any worker finds it). ``TasksFull`` when its owner holds too many."""
        state = self._state()
        added = await state.add(
            self.key(record.owner, record.task_id),
            record.to_json(),
            ttl=record.ttl,
            bucket=self.bucket(record.owner),
            limit=self.limit,
        )
        if added == "full":
            raise TasksFull(
                f"too many tasks for this caller: the server keeps up to {self.limit} per caller until each "
                "one's ttl has passed; wait for earlier tasks to expire, or cancel them",
                data={"limit": self.limit},
            )
        if added == "exists":  # 128 random bits: never, unless the id was reused on purpose
            raise StoreFull("a task with this id exists already")

    async def load(self, owner: str, task_id: str) -> TaskRecord | None:
        """The task ``task_id`` of ``owner``; None when there is none (never made, someone
        else's, or expired)."""
        if not isinstance(task_id, str) or not task_id:
            return None
        record = TaskRecord.from_json(await self._state().get(self.key(owner, task_id)))
        if record is None or record.owner != owner or record.task_id != task_id:
            return None
        if record.expires <= self.clock():
            return None
        return record

    async def save(self, record: TaskRecord) -> bool:
        """Write ``record`` over the stored one, expiring when the task does; False (and
        nothing written) once its TTL has passed, so a late write cannot bring it back."""
        remaining = record.expires - self.clock()
        if remaining <= 0:
            return False
        await self._state().put(self.key(record.owner, record.task_id), record.to_json(), ttl=remaining)
        return True
