"""The tables behind tasks: every status move, the methods of each revision against the specs'
text, and the record's wire shapes per era (no I/O)."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from backchannel.server.tasks.records import MOVES, TaskRecord
from backchannel.types.errors import LocalProtocolError
from backchannel.types.methods import EXTENSION_METHODS, METHODS, requests_served
from backchannel.types.tasks import TASKS_EXTENSION, TERMINAL_STATUSES

_BESIDE = Path(__file__).resolve().parents[2].parent / "shared"
SPEC = (_BESIDE if _BESIDE.is_dir() else Path("/work/shared")) / "spec"
STATUSES = ("working", "input_required", "completed", "failed", "cancelled")


def record(status: str = "working") -> TaskRecord:
    return TaskRecord(
        task_id="t1",
        owner="o",
        era="stateless",
        worker="w",
        created=1_700_000_000.0,
        ttl=60.5,
        poll_interval=0.5,
        status=status,
    )


@pytest.mark.parametrize(("before", "after"), list(itertools.product(STATUSES, STATUSES)))
def test_every_status_move_is_in_the_table_or_refused(before: str, after: str) -> None:
    # tasks.mdx §Task Status Lifecycle: working <-> input_required, both -> terminal, terminal never moves.
    legal = before not in TERMINAL_STATUSES and before != after
    assert ((before, after) in MOVES) is legal
    task = record(before)
    if legal or before == after:
        task.move(after, 1_700_000_001.0, "note")
        assert (task.status, task.message, task.updated) == (after, "note", 1_700_000_001.0)
    else:
        with pytest.raises(LocalProtocolError):
            task.move(after, 1_700_000_001.0)
        assert task.status == before


def test_the_extension_methods_are_the_seps() -> None:
    text = (SPEC / "seps/2663-tasks-extension.md").read_text()
    requests = set(re.findall(r'interface \w+Request extends JSONRPCRequest \{\s*method: "([^"]+)"', text))
    notifications = set(
        re.findall(r'interface \w+Notification extends JSONRPCNotification \{\s*method: "([^"]+)"', text)
    )
    assert requests == {"tasks/get", "tasks/update", "tasks/cancel"}
    assert notifications == {"notifications/tasks"}
    tasks = {m: s for m, s in EXTENSION_METHODS.items() if s.extension == TASKS_EXTENSION}  # (skills have theirs)
    assert {m for m, s in tasks.items() if s.kind == "request"} == requests
    assert {m for m, s in tasks.items() if s.kind == "notification"} == notifications
    for spec in tasks.values():
        assert spec.versions == {"2026-07-28"}
        assert spec.method not in METHODS or "2026-07-28" not in METHODS[spec.method].versions


def test_each_revision_serves_its_own_tasks_methods() -> None:
    tasks = {method for method in requests_served("2026-07-28") if method.startswith("tasks/")}
    assert tasks == {"tasks/get", "tasks/update", "tasks/cancel"}  # tasks/result and tasks/list are removed
    tasks = {method for method in requests_served("2025-11-25") if method.startswith("tasks/")}
    assert tasks == {"tasks/get", "tasks/result", "tasks/list", "tasks/cancel"}
    assert not {m for m in requests_served("2025-06-18") if m.startswith("tasks/")}


def test_the_wire_shapes_of_each_era() -> None:
    task = record("input_required")
    task.questions = {"q1": {"method": "elicitation/create", "params": {"message": "?"}}}
    created = task.create_result("stateless")
    assert created == {
        "resultType": "task",
        "taskId": "t1",
        "status": "input_required",
        "createdAt": "2023-11-14T22:13:20.000Z",
        "lastUpdatedAt": "2023-11-14T22:13:20.000Z",
        "ttlMs": 60500,
        "pollIntervalMs": 500,
    }  # no inputRequests on a CreateTaskResult
    assert task.extension_task(detailed=True)["inputRequests"] == task.questions
    legacy = task.create_result("handshake")["task"]
    assert legacy["ttl"] == 60500 and legacy["pollInterval"] == 500 and "ttlMs" not in legacy
    assert TaskRecord.from_json(task.to_json()) == task
    assert TaskRecord.from_json({"id": "t1"}) is None and TaskRecord.from_json("x") is None
