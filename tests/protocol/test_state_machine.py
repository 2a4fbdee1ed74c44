"""The transition tables, checked over every (state, input) pair, and two sessions under random traffic.

STYLE items 2 and 11: the tables in ``protocol/states.py`` are the whole truth; whatever
the session does through its public API must agree with them.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from _session_helpers import (
    client_session,
    handshake,
    initialize_params,
    initialize_result,
    request,
    server_session,
    stateless_meta,
    wire,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from backchannel.protocol.events import (
    CancelIntent,
    CancelRequested,
    ErrorReceived,
    Event,
    HandshakeCompleted,
    NotificationReceived,
    ProgressReceived,
    RequestReceived,
    ResponseReceived,
)
from backchannel.protocol.session import Session
from backchannel.protocol.states import (
    INBOUND_TRANSITIONS,
    OUTBOUND_TRANSITIONS,
    SESSION_TRANSITIONS,
    InboundInput,
    InboundState,
    OutboundInput,
    OutboundState,
    Role,
    SessionInput,
    SessionState,
    inbound_fault,
    outbound_fault,
    session_fault,
    who_is_at_fault,
)
from backchannel.types.errors import InternalError, InvalidRequest, LocalProtocolError, RemoteProtocolError

In = SessionInput
request_ids = st.one_of(st.integers(-(2**53), 2**53), st.text(max_size=8))
roles = st.sampled_from(["client", "server"])


def is_error_response(message: Any) -> bool:
    return (
        isinstance(message, dict)
        and set(message) == {"jsonrpc", "id", "error"}
        and isinstance(message["error"].get("code"), int)
    )


# ------------------------------------------------------- (a) session table


@dataclass
class Move:
    """A session prepared for one input, and the call that applies it through the public API."""

    session: Session
    act: Callable[[], Any]
    #: The method the move concerns, as a fault message names it.
    method: str | None = None


def prepare(action: SessionInput, role: str, rid: Any, variant: bool) -> Move | None:
    """A session of ``role`` ready for ``action``; None where ``role`` can never hold what the
    move needs (a client answering ``initialize`` would need to have accepted one first)."""
    s = client_session() if role == "client" else server_session()
    if action is In.SEND_INITIALIZE:
        return Move(s, lambda: s.send_request("initialize", initialize_params()), "initialize")
    if action is In.RECV_INITIALIZE:
        return Move(s, lambda: s.receive_message(request(rid, "initialize", initialize_params())), "initialize")
    if action in (In.SEND_INITIALIZE_RESULT, In.SEND_INITIALIZE_ERROR):
        if role == "client":
            return None
        s.receive_message(request(rid, "initialize", initialize_params()))
        if action is In.SEND_INITIALIZE_RESULT:
            return Move(s, lambda: s.send_result(rid, initialize_result("2025-11-25")))
        return Move(s, lambda: s.send_error(rid, InternalError("no")))
    if action in (In.RECV_INITIALIZE_RESULT, In.RECV_INITIALIZE_ERROR):
        if role == "server":
            return None
        cid = s.send_request("initialize", initialize_params())
        if action is In.RECV_INITIALIZE_RESULT:
            answer: dict[str, Any] = {"result": initialize_result("2025-11-25")}
        elif variant:  # an offered version the client does not speak also fails the handshake
            answer = {"result": initialize_result("1999-01-01")}
        else:
            answer = {"error": {"code": -32602, "message": "no"}}
        return Move(s, lambda: s.receive_message({"jsonrpc": "2.0", "id": cid, **answer}))
    if action is In.RECV_INITIALIZED:
        if role == "server":
            s.receive_message(request(rid, "initialize", initialize_params()))
            s.send_result(rid, initialize_result("2025-11-25"))
        message = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        return Move(s, lambda: s.receive_message(message))
    if action is In.RESUME_HANDSHAKE:  # a fleet worker taking up a session another worker opened
        return None if role == "client" else Move(s, lambda: s.resume_handshake("2025-11-25", {"roots": {}}))
    if action is In.SEND_HANDSHAKE_ERA_REQUEST:
        return Move(s, lambda: s.send_request("tools/list" if role == "client" else "custom/ask"))
    if action is In.RECV_HANDSHAKE_ERA_REQUEST:
        method = "roots/list" if role == "client" else "tools/list"
        return Move(s, lambda: s.receive_message(request(rid, method)), method)
    if action is In.SEND_STATELESS_REQUEST:
        if variant and role == "client":
            s.use_stateless()
            return Move(s, lambda: s.send_request("tools/list"))
        return Move(s, lambda: s.send_request("server/discover", stateless_version="2026-07-28"))
    if action is In.RECV_STATELESS_REQUEST:
        params = {"_meta": stateless_meta(capabilities={})}
        return Move(s, lambda: s.receive_message(request(rid, "tools/list", params)), "tools/list")
    if action is In.SEND_PING:
        return Move(s, lambda: s.send_request("ping"))
    if action is In.RECV_PING:
        return Move(s, lambda: s.receive_message(request(rid, "ping")), "ping")
    if action is In.SEND_NOTIFICATION:
        return Move(s, lambda: s.send_notification("notifications/message", {"level": "info", "data": 1}))
    if action is In.START_CLOSE:
        return Move(s, s.start_closing)
    assert action is In.CLOSED
    return Move(s, s.connection_lost)


ALL_SESSION_MOVES = list(itertools.product(("client", "server"), SessionState, SessionInput))
REQUESTS_IN = (In.RECV_INITIALIZE, In.RECV_HANDSHAKE_ERA_REQUEST, In.RECV_STATELESS_REQUEST, In.RECV_PING)
NOTIFICATIONS_IN = (In.RECV_INITIALIZED,)


def test_the_universe_is_complete() -> None:
    assert len(ALL_SESSION_MOVES) == 2 * len(SessionState) * len(SessionInput) == 170
    for role in ("client", "server"):
        assert set(SESSION_TRANSITIONS[role]) <= {(s, i) for _, s, i in ALL_SESSION_MOVES}  # type: ignore[index]
    assert {who_is_at_fault(i) for i in SessionInput if i.name.startswith("RECV_")} == {"remote"}
    assert {who_is_at_fault(i) for i in SessionInput if not i.name.startswith("RECV_")} == {"local"}
    # Every illegal move has a fault, and an ignored one only where a notification cannot be answered.
    for role, state, action in ALL_SESSION_MOVES:
        if (state, action) not in SESSION_TRANSITIONS[role]:  # type: ignore[index]
            fault = session_fault(role, state, action)  # type: ignore[arg-type]
            if fault.error is None:
                assert action in NOTIFICATIONS_IN
            elif who_is_at_fault(action) == "local":
                assert fault.error is LocalProtocolError
            else:
                assert fault.error in (InvalidRequest, RemoteProtocolError)


@pytest.mark.parametrize(("role", "state", "action"), ALL_SESSION_MOVES, ids=str)
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rid=request_ids, variant=st.booleans())
def test_every_session_move_follows_the_tables(
    role: Role, state: SessionState, action: SessionInput, rid: Any, variant: bool
) -> None:
    move = prepare(action, role, rid, variant)
    if move is None:  # the role never holds what the move needs: the table has no row for it either
        assert (state, action) not in SESSION_TRANSITIONS[role]
        return
    move.session.state = state
    move.session.outgoing()

    if (state, action) in SESSION_TRANSITIONS[role]:
        outcome = move.act()
        assert move.session.state is SESSION_TRANSITIONS[role][state, action]
        sent = move.session.outgoing()
        if action.name.startswith("SEND_"):
            assert len(sent) == 1
            assert is_error_response(sent[0]) is (action is In.SEND_INITIALIZE_ERROR)
        elif action in REQUESTS_IN:
            assert sent == []
            assert [type(e) for e in outcome] == [RequestReceived]
        elif action is In.RECV_INITIALIZED:
            assert [type(e) for e in outcome] == [HandshakeCompleted]
        elif action is In.RECV_INITIALIZE_RESULT:
            assert [type(e) for e in outcome] == [ResponseReceived, HandshakeCompleted]
        elif action is In.RECV_INITIALIZE_ERROR:
            assert [type(e) for e in outcome] == [ErrorReceived]
        return

    fault = session_fault(role, state, action)
    if fault.error is None:  # a notification cannot be answered: ignored
        assert move.act() == []
        assert move.session.outgoing() == []
        assert move.session.state is state
        return
    expected = fault.exception(action=action.value, state=state.value, method=move.method)
    if who_is_at_fault(action) == "local":
        with pytest.raises(LocalProtocolError) as raised:
            move.act()
        assert type(raised.value) is fault.error and raised.value.message == expected.message
        assert move.session.outgoing() == []
    elif action in REQUESTS_IN:  # the peer's request is answered with the fault's code and message
        assert move.act() == []
        (reply,) = move.session.outgoing()
        assert reply == {"jsonrpc": "2.0", "id": rid, "error": {"code": expected.code, "message": expected.message}}
        assert expected.code == -32600
    else:  # an answer of the peer's that the session cannot accept
        with pytest.raises(RemoteProtocolError) as remote:
            move.act()
        assert remote.value.message == expected.message
        assert move.session.outgoing() == []
    assert move.session.state is state


def test_faults_keep_their_wire_text() -> None:
    """The folded guards answer the peer exactly as before (the wire tests pin these)."""
    assert session_fault("server", SessionState.NEW, In.RECV_HANDSHAKE_ERA_REQUEST).exception(
        method="tools/list"
    ).message == (
        "received tools/list before initialize: send initialize first, "
        "or put io.modelcontextprotocol/protocolVersion in params._meta for a stateless request"
    )
    for state in (SessionState.CLOSING, SessionState.CLOSED):
        for action in REQUESTS_IN:
            for role in ("client", "server"):
                fault = session_fault(role, state, action)  # type: ignore[arg-type]
                assert (fault.error, fault.message) == (InvalidRequest, "the session is closing")


# -------------------------------------------------- inbound / outbound tables


def observe_inbound(server: Session, rid: Any) -> InboundState:
    """Which state request ``rid`` is in, as the API shows it (this answers the request)."""
    if server.pending_inbound == 0:
        return InboundState.DONE
    answered = server.send_result(rid, {})
    sent = server.outgoing()
    if answered:
        assert sent == [{"jsonrpc": "2.0", "id": rid, "result": {}}]
        return InboundState.ACTIVE
    assert sent == []
    return InboundState.CANCELLED


def _inbound_in(state: InboundState, rid: Any) -> tuple[Session, str]:
    """A server holding request ``rid`` in ``state`` (DONE: answered); and the request's method."""
    server = handshake()[1]
    if state is InboundState.ACTIVE_UNCANCELLABLE:
        server = server_session()
        server.receive_message(request(rid, "initialize", {**initialize_params(), "_meta": {"progressToken": "p"}}))
        return server, "initialize"
    server.receive_message(request(rid, "tools/call", {"_meta": {"progressToken": "p"}}))
    if state is InboundState.CANCELLED:
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}}
        assert server.receive_message(cancel) == [CancelRequested(id=rid, reason=None)]
    elif state is InboundState.DONE:
        assert server.send_result(rid, {}) is True
    server.outgoing()
    return server, "tools/call"


@pytest.mark.parametrize(("state", "action"), list(itertools.product(InboundState, InboundInput)), ids=lambda v: v.name)
@settings(max_examples=5, deadline=None)
@given(rid=request_ids)
def test_every_inbound_move_follows_the_table(state: InboundState, action: InboundInput, rid: Any) -> None:
    server, _ = _inbound_in(state, rid)
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}}
    acts: dict[InboundInput, Callable[[], Any]] = {
        InboundInput.RECV_REQUEST: lambda: server.receive_message(request(rid, "tools/list")),
        InboundInput.RECV_INITIALIZE: lambda: server.receive_message(request(rid, "initialize", initialize_params())),
        InboundInput.SEND_RESPONSE: lambda: server.send_result(rid, {"done": True}),
        InboundInput.SEND_PROGRESS: lambda: server.send_progress(rid, 1),
        InboundInput.RECV_CANCEL: lambda: server.receive_message(cancel),
    }
    if action is InboundInput.RECV_INITIALIZE and state is InboundState.DONE:
        server = server_session()  # a fresh session: initialize is legal only once per handshake

    if (state, action) in INBOUND_TRANSITIONS:
        outcome = acts[action]()
        sent = server.outgoing()
        after = INBOUND_TRANSITIONS[state, action]
        if state is InboundState.CANCELLED:  # nothing more goes out for a cancelled request (CN-10)
            assert sent == [] and outcome is False
        elif action in (InboundInput.RECV_REQUEST, InboundInput.RECV_INITIALIZE):
            assert [type(e) for e in outcome] == [RequestReceived] and sent == []
        elif action is InboundInput.SEND_RESPONSE:
            assert outcome is True and sent[0]["id"] == rid and "result" in sent[0]  # type: ignore[index]
        elif action is InboundInput.SEND_PROGRESS:
            assert outcome is True and [m["method"] for m in sent] == ["notifications/progress"]  # type: ignore[index]
        else:
            assert outcome == [CancelRequested(id=rid, reason=None)] and sent == []
        if after is not InboundState.ACTIVE_UNCANCELLABLE:  # (answering initialize would move the session)
            assert observe_inbound(server, rid) is after
        return

    fault = inbound_fault(state, action)
    if fault.error is None:  # CN-11/CN-13: a cancellation that cannot apply is ignored
        assert acts[action]() == []
        assert server.outgoing() == []
    elif who_is_at_fault(action) == "local":
        with pytest.raises(LocalProtocolError) as raised:
            acts[action]()
        assert raised.value.message == fault.exception(id=rid).message
        assert server.outgoing() == []
    else:  # a second request under an id in flight: answered with the fault, the first goes on
        assert acts[action]() == []
        (reply,) = server.outgoing()
        assert reply == {"jsonrpc": "2.0", "id": rid, "error": fault.exception(id=rid).to_error()}
    if state is not InboundState.ACTIVE_UNCANCELLABLE:
        assert observe_inbound(server, rid) is state
    else:
        assert server.pending_inbound == 1


#: 2025-11-25's answer to a task-augmented request: the task goes on, and so does its token.
CREATE_TASK = {"task": {"taskId": "t", "status": "working", "createdAt": "now", "lastUpdatedAt": "now", "ttl": None}}


def _outbound_in(state: OutboundState) -> tuple[Session, Any, str]:
    if state is OutboundState.SENT_UNCANCELLABLE:
        client = client_session()
        params = {**initialize_params(), "_meta": {"progressToken": "p"}}
        return client, client.send_request("initialize", params), "initialize"
    client = handshake()[0]
    # Task-augmented (``params.task``), so that its answer may create a task (TASK).
    rid = client.send_request("tools/call", {"task": {}, "_meta": {"progressToken": "p"}})
    if state is OutboundState.DONE:
        client.receive_message({"jsonrpc": "2.0", "id": rid, "result": {"n": 0}})
    elif state is OutboundState.TASK:
        client.receive_message({"jsonrpc": "2.0", "id": rid, "result": CREATE_TASK})
    client.outgoing()
    return client, rid, "tools/call"


def observe_outbound(client: Session, rid: Any, method: str) -> OutboundState:
    """Which state our request ``rid`` is in, as the API shows it."""
    if client.pending_outbound:
        return OutboundState.SENT_UNCANCELLABLE if method == "initialize" else OutboundState.SENT
    if client.task_created_by(rid) is not None:
        assert client.active_progress_tokens == client.task_progress_tokens == 1
        return OutboundState.TASK
    assert client.active_progress_tokens == client.task_progress_tokens == 0
    return OutboundState.DONE


@pytest.mark.parametrize(
    ("state", "action"), list(itertools.product(OutboundState, OutboundInput)), ids=lambda v: v.name
)
def test_every_outbound_move_follows_the_table(state: OutboundState, action: OutboundInput) -> None:
    client, rid, method = _outbound_in(state)
    client.outgoing()
    if action in (OutboundInput.SEND_REQUEST, OutboundInput.SEND_INITIALIZE):
        # Our ids are fresh for every request, so a send always starts from DONE.
        assert (OutboundState.DONE, action) in OUTBOUND_TRANSITIONS
        assert (state, action) in OUTBOUND_TRANSITIONS or state is not OutboundState.DONE
        return
    answer = initialize_result("2025-11-25") if method == "initialize" else {}
    acts: dict[OutboundInput, Callable[[], Any]] = {
        OutboundInput.RECV_RESPONSE: lambda: client.receive_message({"jsonrpc": "2.0", "id": rid, "result": answer}),
        OutboundInput.RECV_TASK_CREATED: lambda: client.receive_message(
            {"jsonrpc": "2.0", "id": rid, "result": CREATE_TASK}
        ),
        OutboundInput.RECV_PROGRESS: lambda: client.receive_message(
            {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "p", "progress": 1}}
        ),
        OutboundInput.SEND_CANCEL: lambda: client.cancel(rid),
        OutboundInput.RELEASE_TASK: lambda: client.release_task_progress("t"),
    }
    if (state, action) in OUTBOUND_TRANSITIONS:
        outcome = acts[action]()
        after = OUTBOUND_TRANSITIONS[state, action]
        if action is OutboundInput.SEND_CANCEL:
            if state is OutboundState.SENT:
                assert outcome == CancelIntent(request_id=rid) and client.outgoing() == [outcome]
            else:  # DONE: a timeout raced the answer; TASK: answered, only tasks/cancel stops a task
                assert outcome is None and client.outgoing() == []
        elif action is OutboundInput.RELEASE_TASK:
            assert outcome == (rid if state is OutboundState.TASK else None) and client.outgoing() == []
        elif action in (OutboundInput.RECV_RESPONSE, OutboundInput.RECV_TASK_CREATED):
            assert type(outcome[0]) is ResponseReceived
        else:
            (progress,) = outcome
            assert type(progress) is ProgressReceived
            assert progress.task_id == ("t" if state is OutboundState.TASK else None)
        assert observe_outbound(client, rid, method) is after
        return
    fault = outbound_fault(state, action)
    if (state, action) == (OutboundState.SENT_UNCANCELLABLE, OutboundInput.RECV_TASK_CREATED):
        # Out of reach: initialize is never task-augmented, so its answer is the handshake's.
        assert fault.error is RemoteProtocolError
        assert [type(e) for e in acts[action]()] == [ErrorReceived]  # no protocolVersion in it
        assert observe_outbound(client, rid, method) is OutboundState.DONE
        return
    if action is OutboundInput.RELEASE_TASK:
        # Out of reach too: release goes by task id, and a request still waiting has none.
        assert fault.error is LocalProtocolError
        assert acts[action]() is None and client.outgoing() == []
    elif fault.error is None:  # a late or repeated answer, or late progress: dropped silently (CN-12)
        assert acts[action]() == []
        assert client.outgoing() == []
    else:
        with pytest.raises(LocalProtocolError) as raised:
            acts[action]()
        assert raised.value.message == fault.exception(id=rid).message
    assert observe_outbound(client, rid, method) is state


# ------------------------------------------- (b) two sessions, random traffic


@dataclass
class Served:
    token: Any
    cancelled: bool = False
    last_progress: float | None = None


GARBAGE = st.one_of(
    st.lists(st.integers(), max_size=3),
    st.none(),
    st.booleans(),
    st.integers(),
    st.text(max_size=5),
    st.dictionaries(st.text(max_size=5).filter(lambda k: k != "jsonrpc"), st.integers(), max_size=3),
    st.sampled_from(
        [
            {"jsonrpc": "2.0"},
            {"jsonrpc": "1.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "id": True, "method": "ping"},
            {"jsonrpc": "2.0", "id": 1.5, "method": "ping"},
            {"jsonrpc": "2.0", "id": None, "method": "ping"},
            {"jsonrpc": "2.0", "id": "g", "method": 42},
            {"jsonrpc": "2.0", "id": "g", "method": "tools/list", "params": [1]},
            {"jsonrpc": "2.0", "id": "g", "result": {}},
            {"jsonrpc": "2.0", "id": [1], "error": {"code": 1}},
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "g"}},
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "x"},
            {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": "g", "progress": 1},
            },
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
        ]
    ),
)


class BackToBack(RuleBasedStateMachine):
    """A client and a server after the handshake, wired by two FIFO pipes (stdio)."""

    def __init__(self) -> None:
        super().__init__()
        self.client, self.server = handshake({"roots": {}, "elicitation": {}})
        self.to_server: deque[dict[str, Any]] = deque()
        self.to_client: deque[dict[str, Any]] = deque()
        self.tokens = itertools.count()
        # The client's view: its requests still waiting (id -> token), the server's requests to answer.
        self.client_waiting: dict[Any, Any] = {}
        self.client_serving: set[Any] = set()
        self.client_saw_progress: dict[Any, float] = {}
        # The server's view.
        self.server_serving: dict[Any, Served] = {}
        self.server_waiting: set[Any] = set()
        # What crossed the wire, for the invariants.
        self.cancelled_at_server: set[Any] = set()
        self.received_by_server: dict[Any, Any] = {}  # id -> progress token
        self.answered_by_server: set[Any] = set()
        self.received_by_client: set[Any] = set()
        self.answered_by_client: set[Any] = set()
        self.wire_progress: dict[Any, float] = {}

    # ------------------------------------------------------------ plumbing

    def pump(self) -> None:
        for message in self.server.outgoing():
            assert isinstance(message, dict), "the server never cancels here"
            self.check_server_message(message)
            self.to_client.append(message)
        for item in self.client.outgoing():
            (message,) = wire([item])
            if "id" in message and ("result" in message or "error" in message):
                rid = message["id"]
                assert rid in self.received_by_client and rid not in self.answered_by_client
                self.answered_by_client.add(rid)
            self.to_server.append(message)

    def check_server_message(self, message: dict[str, Any]) -> None:
        if "id" in message and ("result" in message or "error" in message):
            rid = message["id"]
            # Every response answers a request in flight; never one the peer cancelled (CN-10).
            assert rid in self.received_by_server, f"response to unknown {rid!r}"
            assert rid not in self.answered_by_server, f"second response to {rid!r}"
            assert rid not in self.cancelled_at_server, f"response to cancelled {rid!r}"
            self.answered_by_server.add(rid)
        elif message.get("method") == "notifications/progress":
            params = message["params"]
            token, value = params["progressToken"], params["progress"]
            owners = [rid for rid, tok in self.received_by_server.items() if tok == token]
            assert len(owners) == 1  # tokens are never reused in this machine
            (rid,) = owners
            assert rid not in self.answered_by_server, "progress after the response (PG-18)"
            assert rid not in self.cancelled_at_server, "progress after the cancellation"
            assert token not in self.wire_progress or value > self.wire_progress[token], "PG-05"
            self.wire_progress[token] = value

    def on_server_event(self, event: Event) -> None:
        if isinstance(event, RequestReceived):
            token = event.params.get("_meta", {}).get("progressToken")
            assert event.id not in self.server_serving
            self.server_serving[event.id] = Served(token)
            self.received_by_server[event.id] = token
        elif isinstance(event, CancelRequested):
            served = self.server_serving[event.id]
            assert not served.cancelled
            served.cancelled = True
            self.cancelled_at_server.add(event.id)
        elif isinstance(event, ResponseReceived | ErrorReceived):
            self.server_waiting.remove(event.id)
        else:
            assert isinstance(event, NotificationReceived), event

    def on_client_event(self, event: Event) -> None:
        if isinstance(event, RequestReceived):
            self.client_serving.add(event.id)
            self.received_by_client.add(event.id)
        elif isinstance(event, ResponseReceived | ErrorReceived):
            del self.client_waiting[event.id]
        elif isinstance(event, ProgressReceived):
            assert self.client_waiting[event.request_id] == event.token
            last = self.client_saw_progress.get(event.token)
            assert last is None or event.progress > last
            self.client_saw_progress[event.token] = event.progress
        else:
            assert isinstance(event, NotificationReceived), event

    # ---------------------------------------------------------------- rules

    @rule(with_token=st.booleans())
    def client_sends_request(self, with_token: bool) -> None:
        token = f"tok{next(self.tokens)}" if with_token else None
        params: dict[str, Any] = {"name": "work"}
        if token is not None:
            params["_meta"] = {"progressToken": token}
        rid = self.client.send_request("tools/call", params)
        self.client_waiting[rid] = token
        self.pump()

    @rule(method=st.sampled_from(["ping", "roots/list", "elicitation/create"]))
    def server_sends_request(self, method: str) -> None:
        params = {"message": "?", "requestedSchema": {"type": "object"}} if method == "elicitation/create" else {}
        self.server_waiting.add(self.server.send_request(method, params))
        self.pump()

    @rule(count=st.integers(1, 4))
    def deliver_to_server(self, count: int) -> None:
        for _ in range(min(count, len(self.to_server))):
            message = self.to_server.popleft()
            events = self.server.receive_message(message)
            for event in events:
                self.on_server_event(event)
            if message.get("method") == "notifications/cancelled":
                # CN-08: a cancellation of a request still being served reaches the handler.
                rid = message["params"]["requestId"]
                served = self.server_serving.get(rid)
                still_served = served is not None and rid not in self.answered_by_server
                assert (events == [CancelRequested(id=rid, reason=message["params"].get("reason"))]) is still_served
        self.pump()

    @rule(count=st.integers(1, 4))
    def deliver_to_client(self, count: int) -> None:
        for _ in range(min(count, len(self.to_client))):
            for event in self.client.receive_message(self.to_client.popleft()):
                self.on_client_event(event)
        self.pump()

    @precondition(lambda self: self.server_serving)
    @rule(data=st.data(), as_error=st.booleans())
    def server_answers(self, data: st.DataObject, as_error: bool) -> None:
        rid = data.draw(st.sampled_from(sorted(self.server_serving, key=repr)))
        served = self.server_serving.pop(rid)
        if as_error:
            sent = self.server.send_error(rid, InternalError("failed"))
        else:
            sent = self.server.send_result(rid, {"content": []})
        assert sent is (not served.cancelled)
        self.pump()

    @precondition(lambda self: self.server_serving)
    @rule(data=st.data(), step=st.one_of(st.sampled_from([0.0, -1.0, 1]), st.floats(-2, 3)))
    def server_reports_progress(self, data: st.DataObject, step: float) -> None:
        rid = data.draw(st.sampled_from(sorted(self.server_serving, key=repr)))
        served = self.server_serving[rid]
        value = (served.last_progress or 0) + step
        if served.token is None or served.cancelled:
            assert self.server.send_progress(rid, value) is False
            assert self.server.outgoing() == []
        elif served.last_progress is not None and value <= served.last_progress:
            with pytest.raises(LocalProtocolError):
                self.server.send_progress(rid, value)
            assert self.server.outgoing() == []
        else:
            assert self.server.send_progress(rid, value) is True
            served.last_progress = value
        self.pump()

    @precondition(lambda self: self.client_serving)
    @rule(data=st.data())
    def client_answers(self, data: st.DataObject) -> None:
        rid = data.draw(st.sampled_from(sorted(self.client_serving, key=repr)))
        self.client_serving.remove(rid)
        assert self.client.send_result(rid, {}) is True
        self.pump()

    @precondition(lambda self: self.client_waiting)
    @rule(data=st.data(), reason=st.none() | st.just("bored"))
    def client_cancels(self, data: st.DataObject, reason: str | None) -> None:
        rid = data.draw(st.sampled_from(sorted(self.client_waiting, key=repr)))
        del self.client_waiting[rid]
        assert self.client.cancel(rid, reason) == CancelIntent(request_id=rid, reason=reason)
        self.pump()

    @rule(to_server=st.booleans())
    def notify(self, to_server: bool) -> None:
        if to_server:
            self.client.send_notification("notifications/roots/list_changed")
        else:
            self.server.send_notification("notifications/message", {"level": "info", "data": "x"})
        self.pump()

    @rule(value=GARBAGE, to_server=st.booleans())
    def garbage(self, value: Any, to_server: bool) -> None:
        session = self.server if to_server else self.client
        before = (session.pending_inbound, session.pending_outbound, session.active_progress_tokens)
        assert session.receive_message(value) == []
        replies = session.outgoing()  # answers to garbage go back to whoever sent it, not to the peer
        assert all(is_error_response(reply) for reply in replies)
        assert len(replies) <= 1
        assert (session.pending_inbound, session.pending_outbound, session.active_progress_tokens) == before

    # ----------------------------------------------------------- invariants

    @invariant()
    def tables_hold_only_unfinished_requests(self) -> None:
        assert self.client.pending_outbound == len(self.client_waiting)
        assert self.client.active_progress_tokens == sum(t is not None for t in self.client_waiting.values())
        assert self.client.pending_inbound == len(self.client_serving)
        assert self.server.pending_inbound == len(self.server_serving)
        assert self.server.pending_outbound == len(self.server_waiting)
        assert self.server.active_progress_tokens == 0
        assert self.client.state is self.server.state is SessionState.READY

    def teardown(self) -> None:
        # Let everything land, answer everything: both sides end with empty tables.
        while self.to_server or self.to_client or self.server_serving or self.client_serving:
            self.deliver_to_server(len(self.to_server) or 1)
            self.deliver_to_client(len(self.to_client) or 1)
            for rid in list(self.server_serving):
                self.server.send_result(rid, {})
                del self.server_serving[rid]
            for rid in list(self.client_serving):
                self.client.send_result(rid, {})
                self.client_serving.remove(rid)
            self.pump()
        for session in (self.client, self.server):
            assert session.pending_inbound == session.pending_outbound == session.active_progress_tokens == 0


BackToBack.TestCase.settings = settings(
    max_examples=60, stateful_step_count=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
test_back_to_back = BackToBack.TestCase


def test_a_resumed_session_serves_and_asks_as_after_its_own_handshake() -> None:
    # A fleet worker takes up a session another worker opened: requests are served at once,
    # what the client declared is enforced, and its own requests carry the worker's prefix.
    from backchannel.protocol import Session, SessionConfig
    from backchannel.types.errors import MissingCapability

    s = Session(SessionConfig("server"))
    s.id_prefix = "w1-"
    s.resume_handshake("2025-11-25", {"elicitation": {}}, {"name": "c"})
    assert s.state is SessionState.READY and s.protocol_version == "2025-11-25"
    (event,) = s.receive_message(request(7, "tools/list"))
    assert isinstance(event, RequestReceived) and event.client_capabilities == {"elicitation": {}}
    asked = s.send_request("elicitation/create", {"mode": "form", "message": "?", "requestedSchema": {}})
    assert asked == "w1-1" and s.outgoing()[0]["id"] == "w1-1"
    with pytest.raises(MissingCapability):
        s.send_request("sampling/createMessage", {"messages": [], "maxTokens": 1})
    with pytest.raises(LocalProtocolError):
        s.resume_handshake("2025-11-25", {})  # only a new session can be taken up
