"""Where tasks are kept: records in the server's ``StateStore``, one key per task, with its TTL.

The key carries its owner's slot: ``tasks:{<slot of owner>}:<task id>``. A caller can only
ever name keys under its own owner scope, so another caller's task id is "not found" by
construction (the record's ``owner`` is compared as well). The key expires with the task.

Every live task counts (2025-11-25 tasks.mdx §Resource Management), the finished ones included
until their TTL passes, in two pools of the store (``StateStore.claim``): its caller's budget
(``Budget``: a principal, a connection, or the address of an anonymous HTTP caller, which is not
always the task's owner: the tasks of all anonymous sessions from one address count together)
and the pool of every task, bounded so that tasks never fill the store that ``ctx.once``
results and the rest share. Past either, the task is not made, and the error names which.
"""

from __future__ import annotations

__all__ = ["ALL_TASKS", "Budget", "TaskStore", "TasksFull"]

import contextlib
from collections.abc import Callable
from dataclasses import dataclass

from ...state.store import StateStore, StoreFull, slot_of
from .records import TaskRecord

#: The pool that counts every live task, whoever made it.
ALL_TASKS = "tasks:{all}"


class TasksFull(StoreFull):
    """No task was made: its caller holds as many as allowed, or the server does (-32603); the
    message says which, and ``data.limit`` and ``data.scope`` ("caller" or "server") too."""


@dataclass(frozen=True, slots=True)
class Budget:
    """Whose tasks a new task counts among: ``name`` (a fixed-shape scope), the most it may hold
    (``limit``), and how an error names it (``who``: "this caller", "anonymous callers from ...")."""

    name: str
    limit: int
    who: str


class TaskStore:
    """Task records in ``state`` (``server.state``: in-process by default, Redis in a fleet)."""

    def __init__(self, state: Callable[[], StateStore], clock: Callable[[], float], limit_total: int) -> None:
        self._state = state  # read on each use: a server may be given a shared state after it was made
        self.clock = clock
        self.limit_total = limit_total

    @staticmethod
    def key(owner: str, task_id: str) -> str:
        return f"tasks:{slot_of(owner)}:{task_id}"

    @staticmethod
    def pool(budget: Budget) -> str:
        return f"tasks:{slot_of(budget.name)}"

    async def create(self, record: TaskRecord, budget: Budget) -> None:
        """Keep a new task; only once this returns may anyone be told its id (SEP-2663: a
        ``tasks/get`` on any worker finds it). ``TasksFull`` when its caller's budget, or the
        server's, holds as many tasks as allowed; ``StoreFull`` when the store itself is full."""
        state = self._state()
        key = self.key(record.owner, record.task_id)
        mine = self.pool(budget)
        if await state.claim(mine, key, ttl=record.ttl, limit=budget.limit) == "full":
            raise TasksFull(
                f"too many tasks: {budget.who} may keep {budget.limit} (a task counts until its ttl of "
                f"{_seconds(record.ttl)} has passed, finished or not); retry when earlier tasks have expired",
                data={"limit": budget.limit, "scope": "caller"},
            )
        try:
            if await state.claim(ALL_TASKS, key, ttl=record.ttl, limit=self.limit_total) == "full":
                raise TasksFull(
                    f"the server holds {self.limit_total} tasks, the most it keeps for all callers together: "
                    "a limit of the server, not of this caller; retry later",
                    data={"limit": self.limit_total, "scope": "server"},
                )
            added = await state.add(key, record.to_json(), ttl=record.ttl)
            if added == "full":
                raise StoreFull("the server's state store is full (its own bound of keys); retry later")
            if added == "exists":  # 128 random bits: never, unless the id was reused on purpose
                raise StoreFull("a task with this id exists already")
        except BaseException:
            for pool in (ALL_TASKS, mine):
                with contextlib.suppress(Exception):  # (the store may be what failed: the claims then expire)
                    await state.release(pool, key)
            raise

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


def _seconds(ttl: float) -> str:
    return f"{ttl:g} s"
