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
    modern_meta,
    request,
    server_session,
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
    SessionInput,
    SessionState,
    who_is_at_fault,
)
from backchannel.types.errors import InternalError, LocalProtocolError, RemoteProtocolError

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
    #: RECV_* of a notification: a notification cannot be answered, so an illegal one is ignored.
    notification: bool = False


def prepare(action: SessionInput, role: str, rid: Any, variant: bool) -> Move:
    if action is In.SEND_INITIALIZE:
        s = client_session()
        return Move(s, lambda: s.send_request("initialize", initialize_params()))
    if action is In.RECV_INITIALIZE:
        s = server_session()
        return Move(s, lambda: s.receive_message(request(rid, "initialize", initialize_params())))
    if action in (In.SEND_INITIALIZE_RESULT, In.SEND_INITIALIZE_ERROR):
        s = server_session()
        s.receive_message(request(rid, "initialize", initialize_params()))
        if action is In.SEND_INITIALIZE_RESULT:
            return Move(s, lambda: s.send_result(rid, initialize_result("2025-11-25")))
        return Move(s, lambda: s.send_error(rid, InternalError("no")))
    if action in (In.RECV_INITIALIZE_RESULT, In.RECV_INITIALIZE_ERROR):
        s = client_session()
        cid = s.send_request("initialize", initialize_params())
        if action is In.RECV_INITIALIZE_RESULT:
            answer: dict[str, Any] = {"result": initialize_result("2025-11-25")}
        elif variant:  # an offered version the client does not speak also fails the handshake
            answer = {"result": initialize_result("1999-01-01")}
        else:
            answer = {"error": {"code": -32602, "message": "no"}}
        return Move(s, lambda: s.receive_message({"jsonrpc": "2.0", "id": cid, **answer}))
    if action is In.RECV_INITIALIZED:
        s = server_session()
        s.receive_message(request(rid, "initialize", initialize_params()))
        s.send_result(rid, initialize_result("2025-11-25"))
        message = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        return Move(s, lambda: s.receive_message(message), notification=True)
    if action is In.SEND_LEGACY_REQUEST:
        s = client_session() if role == "client" else server_session()
        return Move(s, lambda: s.send_request("tools/list" if role == "client" else "custom/ask"))
    if action is In.RECV_LEGACY_REQUEST:
        s = client_session() if role == "client" else server_session()
        method = "roots/list" if role == "client" else "tools/list"
        return Move(s, lambda: s.receive_message(request(rid, method)))
    if action is In.SEND_MODERN_REQUEST:
        s = client_session()
        if variant:
            s.use_modern()
            return Move(s, lambda: s.send_request("tools/list"))
        return Move(s, lambda: s.send_request("server/discover", modern_version="2026-07-28"))
    if action is In.RECV_MODERN_REQUEST:
        s = server_session()
        params = {"_meta": modern_meta(capabilities={})}
        return Move(s, lambda: s.receive_message(request(rid, "tools/list", params)))
    if action is In.SEND_PING:
        s = client_session() if role == "client" else server_session()
        return Move(s, lambda: s.send_request("ping"))
    if action is In.RECV_PING:
        s = client_session() if role == "client" else server_session()
        return Move(s, lambda: s.receive_message(request(rid, "ping")))
    if action is In.START_CLOSE:
        s = client_session() if role == "client" else server_session()
        return Move(s, s.start_closing)
    assert action is In.CLOSED
    s = client_session() if role == "client" else server_session()
    return Move(s, s.connection_lost)


ALL_SESSION_PAIRS = list(itertools.product(SessionState, SessionInput))


def test_the_universe_is_complete() -> None:
    assert len(ALL_SESSION_PAIRS) == len(SessionState) * len(SessionInput) == 75
    assert set(SESSION_TRANSITIONS) <= set(ALL_SESSION_PAIRS)
    assert {who_is_at_fault(i) for i in SessionInput if i.name.startswith("RECV_")} == {"remote"}
    assert {who_is_at_fault(i) for i in SessionInput if not i.name.startswith("RECV_")} == {"local"}


@pytest.mark.parametrize(("state", "action"), ALL_SESSION_PAIRS, ids=lambda v: v.name)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(role=roles, rid=request_ids, variant=st.booleans())
def test_every_session_pair_follows_the_table(
    state: SessionState, action: SessionInput, role: str, rid: Any, variant: bool
) -> None:
    move = prepare(action, role, rid, variant)
    move.session.state = state
    move.session.outgoing()

    if (state, action) in SESSION_TRANSITIONS:
        outcome = move.act()
        assert move.session.state is SESSION_TRANSITIONS[state, action]
        sent = move.session.outgoing()
        if action.name.startswith("SEND_"):
            assert len(sent) == 1
            assert is_error_response(sent[0]) is (action is In.SEND_INITIALIZE_ERROR)
        elif action in (In.RECV_INITIALIZE, In.RECV_LEGACY_REQUEST, In.RECV_MODERN_REQUEST, In.RECV_PING):
            assert sent == []
            assert [type(e) for e in outcome] == [RequestReceived]
        elif action is In.RECV_INITIALIZED:
            assert [type(e) for e in outcome] == [HandshakeCompleted]
        elif action is In.RECV_INITIALIZE_RESULT:
            assert [type(e) for e in outcome] == [ResponseReceived, HandshakeCompleted]
        elif action is In.RECV_INITIALIZE_ERROR:
            assert [type(e) for e in outcome] == [ErrorReceived]
        return

    if who_is_at_fault(action) == "local":
        with pytest.raises(LocalProtocolError):
            move.act()
        assert move.session.outgoing() == []
    elif move.notification:
        assert move.act() == []
        assert move.session.outgoing() == []
    else:
        try:
            events = move.act()
        except RemoteProtocolError:
            assert move.session.outgoing() == []
        else:
            assert events == []
            (reply,) = move.session.outgoing()
            assert is_error_response(reply)
            assert reply["error"]["code"] == -32600
    assert move.session.state is state


# -------------------------------------------------- inbound / outbound tables


def observe_inbound(server: Session, rid: Any) -> InboundState | None:
    """Which state request ``rid`` is in, as the API shows it (this answers the request).

    None: the session forgot it, as it does once the handler answered (sent or dropped).
    """
    if server.pending_inbound == 0:
        return None
    answered = server.send_result(rid, {})
    sent = server.outgoing()
    if answered:
        assert sent == [{"jsonrpc": "2.0", "id": rid, "result": {}}]
        return InboundState.ACTIVE
    assert sent == []
    return InboundState.CANCELLED


@pytest.mark.parametrize(("state", "action"), list(itertools.product(InboundState, InboundInput)), ids=lambda v: v.name)
@settings(max_examples=5, deadline=None)
@given(rid=request_ids)
def test_every_inbound_pair_follows_the_table(state: InboundState, action: InboundInput, rid: Any) -> None:
    server = handshake()[1]
    server.receive_message(request(rid, "tools/call", {"_meta": {"progressToken": "p"}}))
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}}
    if state is InboundState.CANCELLED:
        assert server.receive_message(cancel) == [CancelRequested(rid, None)]
    elif state is InboundState.ANSWERED:
        assert server.send_result(rid, {}) is True
    server.outgoing()

    acts: dict[InboundInput, Callable[[], Any]] = {
        InboundInput.SEND_RESPONSE: lambda: server.send_result(rid, {"done": True}),
        InboundInput.SEND_PROGRESS: lambda: server.send_progress(rid, 1),
        InboundInput.RECV_CANCEL: lambda: server.receive_message(cancel),
    }
    if (state, action) in INBOUND_TRANSITIONS:
        outcome = acts[action]()
        sent = server.outgoing()
        if state is InboundState.CANCELLED:  # nothing more goes out for a cancelled request (CN-10)
            assert sent == [] and outcome in (False, [])
        elif action is InboundInput.SEND_RESPONSE:
            assert outcome is True and sent == [{"jsonrpc": "2.0", "id": rid, "result": {"done": True}}]
        elif action is InboundInput.SEND_PROGRESS:
            assert outcome is True and [m["method"] for m in sent] == ["notifications/progress"]  # type: ignore[index]
        else:
            assert outcome == [CancelRequested(rid, None)] and sent == []
        # An answer ends the request whatever the table state (ANSWERED, or CANCELLED and dropped).
        forgotten = action is InboundInput.SEND_RESPONSE
        assert observe_inbound(server, rid) is (None if forgotten else INBOUND_TRANSITIONS[state, action])
        return
    if who_is_at_fault(action) == "local":
        with pytest.raises(LocalProtocolError):
            acts[action]()
    else:  # CN-11/CN-13: a cancellation for a finished request is ignored
        assert acts[action]() == []
    assert server.outgoing() == []
    assert state is InboundState.ANSWERED  # the only state with illegal moves
    assert observe_inbound(server, rid) is None


@pytest.mark.parametrize(
    ("state", "action"), list(itertools.product(OutboundState, OutboundInput)), ids=lambda v: v.name
)
def test_every_outbound_pair_follows_the_table(state: OutboundState, action: OutboundInput) -> None:
    client = handshake()[0]
    rid = client.send_request("tools/call", {"_meta": {"progressToken": "p"}})
    response = {"jsonrpc": "2.0", "id": rid, "result": {"n": 1}}
    if state is OutboundState.ANSWERED:
        assert [type(e) for e in client.receive_message(response)] == [ResponseReceived]
    elif state is OutboundState.ABANDONED:
        assert client.cancel(rid) == CancelIntent(rid)
    client.outgoing()

    if action is OutboundInput.RECV_RESPONSE:
        events = client.receive_message(response)
        assert client.outgoing() == []
        if state is OutboundState.SENT:
            assert events == [ResponseReceived(rid, "tools/call", {"n": 1})]
        else:  # a late or repeated answer is dropped silently (CN-12)
            assert events == []
    else:
        intent = client.cancel(rid)
        if state is OutboundState.SENT:
            assert intent == CancelIntent(rid) and client.outgoing() == [intent]
        else:
            # Judgement call kept from the code: (ANSWERED, SEND_CANCEL) is outside the table,
            # but cancel() tolerates it (returns None, sends nothing) because a timeout may race
            # the answer; it is not a LocalProtocolError.
            assert intent is None and client.outgoing() == []
    # The API shows SENT (still tracked, token held) or finished; it never holds a finished request.
    after = OUTBOUND_TRANSITIONS.get((state, action), state)
    tracked = 1 if after is OutboundState.SENT else 0
    assert client.pending_outbound == client.active_progress_tokens == tracked


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
                assert (events == [CancelRequested(rid, message["params"].get("reason"))]) is still_served
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
        assert self.client.cancel(rid, reason) == CancelIntent(rid, reason)
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
