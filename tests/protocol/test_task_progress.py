"""A task's progress token outlives the answer that created the task (2025-11-25), in the sans-IO core.

progress.mdx item 3 (PG-13, PG-14, PG-15) and tasks.mdx "Task Progress Notifications": the
token of a task-augmented request stays valid after the ``CreateTaskResult`` and until the
task reaches a terminal status, which the client reports with ``release_task_progress``.
Every other request keeps the old rule: no progress after its answer (PG-09, PG-18).
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from _session_helpers import deliver, handshake
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from backchannel.protocol.events import (
    ErrorReceived,
    NotificationReceived,
    PeerClosed,
    ProgressReceived,
    ResponseReceived,
)
from backchannel.protocol.session import Session
from backchannel.types.errors import InternalError, LocalProtocolError


def created(task_id: str, status: str = "working") -> dict[str, Any]:
    """2025-11-25's ``CreateTaskResult``."""
    task = {"taskId": task_id, "status": status, "createdAt": "2025-11-25T10:00:00Z", "ttl": None}
    return {"task": {**task, "lastUpdatedAt": "2025-11-25T10:00:00Z"}}


def progress_note(token: Any, progress: float) -> dict[str, Any]:
    params = {"progressToken": token, "progress": progress}
    return {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}


def task_call(client: Session, token: Any, *, task: bool = True) -> Any:
    params: dict[str, Any] = {"name": "deploy", "_meta": {"progressToken": token}}
    if task:
        params["task"] = {"ttl": 60000}
    return client.send_request("tools/call", params)


def answered(client: Session, rid: Any, result: dict[str, Any]) -> list[Any]:
    return client.receive_message({"jsonrpc": "2.0", "id": rid, "result": result})


def started_task(token: Any = "tok", task_id: str = "T1") -> tuple[Session, Any]:
    """A client whose task-augmented call with ``token`` was answered with task ``task_id``."""
    client, _ = handshake()
    rid = task_call(client, token)
    client.outgoing()
    assert answered(client, rid, created(task_id)) == [
        ResponseReceived(id=rid, method="tools/call", result=created(task_id))
    ]
    return client, rid


def test_the_token_of_a_task_outlives_its_creation_result_pg13_pg14() -> None:
    client, rid = started_task("tok", "T1")
    assert client.pending_outbound == 0  # answered...
    assert client.active_progress_tokens == client.task_progress_tokens == 1  # ...but the token lives
    assert client.task_created_by(rid) == "T1"
    assert client.receive_message(progress_note("tok", 1)) == [
        ProgressReceived(request_id=rid, token="tok", progress=1, total=None, message=None, task_id="T1")
    ]
    assert client.receive_message(progress_note("tok", 1)) == []  # PG-05 still holds for a task's token
    assert [e.progress for e in client.receive_message(progress_note("tok", 2.5))] == [2.5]  # type: ignore[union-attr]
    assert client.outgoing() == []


def test_released_the_token_is_gone_and_late_progress_dropped_pg15() -> None:
    client, rid = started_task("tok", "T1")
    assert client.release_task_progress("T1") == rid
    assert client.receive_message(progress_note("tok", 1)) == []
    assert client.active_progress_tokens == client.task_progress_tokens == client.pending_outbound == 0
    assert client.task_created_by(rid) is None
    assert client.release_task_progress("T1") is None  # seen ending twice: released once
    assert client.release_task_progress("never") is None
    assert client.outgoing() == []
    # The token is free again for a new request (PG-02 counts only active ones).
    task_call(client, "tok")


def status_note(task_id: Any, status: str) -> dict[str, Any]:
    params = {**created(task_id, status)["task"]}
    return {"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": params}


def test_the_peers_terminal_status_releases_the_token_in_wire_order_pg15() -> None:
    # The status may reach the session before the caller has a handle for the task: the
    # progress sent after it on the same wire is dropped all the same.
    client, rid = started_task("tok", "T1")
    (working,) = client.receive_message(status_note("T1", "working"))
    assert working == NotificationReceived(
        method="notifications/tasks/status", params=status_note("T1", "working")["params"]
    )
    assert [e.progress for e in client.receive_message(progress_note("tok", 1))] == [1]  # type: ignore[union-attr]
    client.receive_message(status_note("other", "completed"))
    client.receive_message(status_note(None, "completed"))
    odd = status_note("T1", "completed")
    odd["params"]["status"] = ["completed"]  # not a status at all: no end, and no crash
    client.receive_message(odd)
    assert client.task_progress_tokens == 1
    (ended,) = client.receive_message(status_note("T1", "completed"))
    assert isinstance(ended, NotificationReceived)  # the caller still hears of it
    assert client.receive_message(progress_note("tok", 2)) == []
    assert client.active_progress_tokens == client.task_progress_tokens == 0
    assert client.release_task_progress("T1") is None and client.task_created_by(rid) is None


def test_a_living_task_token_is_still_active_pg02() -> None:
    client, _ = started_task("tok", "T1")
    with pytest.raises(LocalProtocolError, match="already used by an active request"):
        task_call(client, "tok")


@pytest.mark.parametrize(
    ("task", "result"),
    [
        (False, created("T1")),  # not task-augmented: a task-shaped answer is just an answer
        (True, {"content": []}),  # the server ran it at once
        (True, created("T1", "completed")),  # a task born terminal has no progress to come
        (True, created("T1", "failed")),
        (True, {"task": {"status": "working"}}),  # no taskId: no task to release it by
        (True, {"task": {"taskId": "", "status": "working"}}),
        (True, {"task": "T1"}),
        (True, {"task": {"taskId": "T1", "status": ["working"]}}),  # not a status: not a task to follow
        (True, {"task": {"taskId": "T1", "status": "paused"}}),
        (True, {"resultType": "task", "taskId": "T1", "status": "working"}),  # the extension's shape
    ],
)
def test_any_other_answer_retires_the_token_as_before_pg09_pg18(task: bool, result: dict[str, Any]) -> None:
    client, _ = handshake()
    rid = task_call(client, "tok", task=task)
    answered(client, rid, result)
    assert client.receive_message(progress_note("tok", 1)) == []
    assert client.active_progress_tokens == client.task_progress_tokens == client.pending_outbound == 0
    assert client.task_created_by(rid) is None


def test_an_error_answer_to_a_task_augmented_request_retires_the_token() -> None:
    client, _ = handshake()
    rid = task_call(client, "tok")
    (event,) = client.receive_message({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}})
    assert isinstance(event, ErrorReceived)
    assert client.receive_message(progress_note("tok", 1)) == []
    assert client.active_progress_tokens == 0


def test_a_second_answer_to_a_task_request_is_dropped_and_keeps_the_token() -> None:
    client, rid = started_task("tok", "T1")
    assert answered(client, rid, {"content": []}) == []
    assert answered(client, rid, created("T2")) == []
    assert client.task_created_by(rid) == "T1" and client.task_progress_tokens == 1


def test_one_task_id_keeps_one_token() -> None:
    # A server that names the same task twice: the first request keeps it, the second's token goes.
    client, first = started_task("a", "T1")
    second = task_call(client, "b")
    answered(client, second, created("T1"))
    assert client.task_created_by(first) == "T1" and client.task_created_by(second) is None
    assert client.receive_message(progress_note("b", 1)) == []
    assert client.active_progress_tokens == 1


def test_cancelling_a_request_that_made_a_task_sends_nothing_and_frees_the_token() -> None:
    # The caller stopped waiting just as the task was created: only tasks/cancel stops a task.
    client, rid = started_task("tok", "T1")
    assert client.cancel(rid, "bored") is None
    assert client.outgoing() == []
    assert client.receive_message(progress_note("tok", 1)) == []
    assert client.active_progress_tokens == client.task_progress_tokens == 0
    assert client.release_task_progress("T1") is None


def test_connection_lost_fails_waiting_requests_only() -> None:
    client, task_rid = started_task("tok", "T1")
    waiting = task_call(client, "w")
    events = client.connection_lost("gone")
    assert [(type(e), getattr(e, "id", None)) for e in events] == [(ErrorReceived, waiting), (PeerClosed, None)]
    assert events[-1] == PeerClosed(reason="gone", failed=(waiting,))
    assert client.active_progress_tokens == client.task_progress_tokens == 0
    assert client.task_created_by(task_rid) is None
    assert client.release_task_progress("T1") is None


def test_our_server_session_sends_what_the_client_keeps() -> None:
    # Both halves of the core: the server answers with the task, then reports progress on the
    # request's token (its runtime sends it as a plain notification once the request is answered).
    client, server = handshake()
    rid = task_call(client, 7)
    (request,) = deliver(client, server)
    assert server.send_result(request.id, created("T9")) is True  # type: ignore[union-attr]
    with pytest.raises(LocalProtocolError):  # the inbound rule is unchanged: no send_progress after the answer
        server.send_progress(request.id, 1)  # type: ignore[union-attr]
    server.send_notification("notifications/progress", {"progressToken": 7, "progress": 1, "total": 2})
    events = deliver(server, client)
    assert [type(e) for e in events] == [ResponseReceived, ProgressReceived]
    assert events[1] == ProgressReceived(request_id=rid, token=7, progress=1, total=2, message=None, task_id="T9")


# ------------------------------------------------------- random traffic, one client


class TaskTokens(RuleBasedStateMachine):
    """A client's task-augmented and plain calls, answered with tasks or results, progress on every
    token at any time, tasks released in any order: progress events come exactly for live tokens."""

    def __init__(self) -> None:
        super().__init__()
        self.client, _ = handshake()
        self.names = itertools.count()
        self.waiting: dict[Any, tuple[str, bool]] = {}  # id -> (token, task-augmented)
        self.tasks: dict[str, tuple[Any, str]] = {}  # live task id -> (request id, token)
        self.retired: set[str] = set()  # tokens whose request and task are over
        self.last: dict[str, float] = {}

    def live_tokens(self) -> dict[str, Any]:
        live = {token: rid for rid, (token, _) in self.waiting.items()}
        live.update({token: rid for rid, token in self.tasks.values()})
        return live

    @rule(task=st.booleans())
    def call(self, task: bool) -> None:
        token = f"tok{next(self.names)}"
        self.waiting[task_call(self.client, token, task=task)] = (token, task)
        self.client.outgoing()

    @precondition(lambda self: self.waiting)
    @rule(data=st.data(), as_task=st.booleans(), as_error=st.booleans())
    def answer(self, data: st.DataObject, as_task: bool, as_error: bool) -> None:
        rid = data.draw(st.sampled_from(sorted(self.waiting, key=repr)))
        token, augmented = self.waiting.pop(rid)
        if as_error:
            message = {"jsonrpc": "2.0", "id": rid, "error": InternalError("no").to_error()}
        else:
            task_id = f"T{next(self.names)}"
            message = {"jsonrpc": "2.0", "id": rid, "result": created(task_id) if as_task else {"content": []}}
        (event,) = self.client.receive_message(message)
        assert event.id == rid  # type: ignore[union-attr]
        if as_task and augmented and not as_error:
            self.tasks[task_id] = (rid, token)
        else:
            self.retired.add(token)

    @precondition(lambda self: self.tasks)
    @rule(data=st.data())
    def release(self, data: st.DataObject) -> None:
        task_id = data.draw(st.sampled_from(sorted(self.tasks)))
        rid, token = self.tasks.pop(task_id)
        assert self.client.release_task_progress(task_id) == rid
        assert self.client.release_task_progress(task_id) is None
        self.retired.add(token)

    @precondition(lambda self: self.tasks)
    @rule(data=st.data(), status=st.sampled_from(["working", "input_required", "completed", "failed", "cancelled"]))
    def peer_tells_status(self, data: st.DataObject, status: str) -> None:
        task_id = data.draw(st.sampled_from(sorted(self.tasks)))
        (event,) = self.client.receive_message(status_note(task_id, status))
        assert isinstance(event, NotificationReceived)
        if status in ("completed", "failed", "cancelled"):  # the end: the token goes with it
            _, token = self.tasks.pop(task_id)
            self.retired.add(token)
            assert self.client.release_task_progress(task_id) is None

    @precondition(lambda self: self.waiting or self.tasks or self.retired)
    @rule(data=st.data(), step=st.sampled_from([-1.0, 0.0, 0.5, 1.0]))
    def progress(self, data: st.DataObject, step: float) -> None:
        live = self.live_tokens()
        token = data.draw(st.sampled_from(sorted({*live, *self.retired})))
        value = self.last.get(token, 0.0) + step
        events = self.client.receive_message(progress_note(token, value))
        if token not in live or (token in self.last and value <= self.last[token]):
            assert events == []  # PG-05, PG-09, PG-15: late, released or not increasing
            return
        (event,) = events
        assert isinstance(event, ProgressReceived) and event.request_id == live[token]
        owner = [task_id for task_id, (_, tok) in self.tasks.items() if tok == token]
        assert event.task_id == (owner[0] if owner else None)
        self.last[token] = value

    @invariant()
    def tables_hold_what_lives(self) -> None:
        assert self.client.pending_outbound == len(self.waiting)
        assert self.client.task_progress_tokens == len(self.tasks)
        assert self.client.active_progress_tokens == len(self.waiting) + len(self.tasks)
        assert self.client.outgoing() == []

    def teardown(self) -> None:
        for task_id in list(self.tasks):
            self.client.release_task_progress(task_id)
        for rid in list(self.waiting):
            answered(self.client, rid, {"content": []})
        assert self.client.pending_outbound == self.client.active_progress_tokens == 0


TaskTokens.TestCase.settings = settings(
    max_examples=40, stateful_step_count=30, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
test_task_tokens = TaskTokens.TestCase
