"""Every move of a session and of a request, legal or not, in one place.

A reader who wants to know what may happen when finds it here: the transition
tables say where each legal move leads, and the fault tables say what each illegal
one costs. If we made the illegal move, that is a ``LocalProtocolError``; if the
peer did, the error answered to it (``InvalidRequest``, -32600, naming what was
wrong), or ``RemoteProtocolError`` for an answer of the peer's that cannot be
accepted; a notification that breaks the rules is ``IGNORED``, since a
notification cannot be answered. The session reads both tables and decides nothing
about states itself.

Session (one per connection; the stateless era never leaves NEW or READY by a
handshake, since each of its requests stands alone). The tables are per role: a
move the other role makes is illegal for this one::

    NEW --initialize sent/received--> INITIALIZING --handshake done--> READY
    any open state --close started--> CLOSING --closed--> CLOSED

Inbound request (the peer asked us). DONE is "no entry": the request was answered
and forgotten, or never received::

    DONE --received--> ACTIVE --answered--> DONE
    DONE --initialize received--> ACTIVE_UNCANCELLABLE --answered--> DONE
    ACTIVE --peer cancelled--> CANCELLED --answer dropped--> DONE

Outbound request (we asked the peer). DONE is "no entry": answered, cancelled by
us, or never sent; a late answer to a cancelled request finds no entry and is dropped
like any stray answer (CN-12)::

    DONE --sent--> SENT --answer received / we cancelled--> DONE
    DONE --initialize sent--> SENT_UNCANCELLABLE --answer received--> DONE
    SENT --answered with a task--> TASK --task released / we cancelled--> DONE

TASK is 2025-11-25's task-augmented request (progress.mdx, tasks.mdx "Task Progress
Notifications"): answered with a ``CreateTaskResult``, but its progress token stays valid
until the task reaches a terminal status: released by the caller, who polls the task, or by
the peer's terminal ``notifications/tasks/status``.

There is no ABANDONED state: keeping a cancelled request's entry until its late
answer would distinguish that answer from a stray one, which changes nothing (both
are dropped), and the entry would mostly never be cleared, since the spec tells the
peer not to answer a cancelled request.
"""

from __future__ import annotations

__all__ = [
    "IGNORED",
    "INBOUND_FAULTS",
    "INBOUND_TRANSITIONS",
    "OUTBOUND_FAULTS",
    "OUTBOUND_TRANSITIONS",
    "SESSION_FAULTS",
    "SESSION_TRANSITIONS",
    "Fault",
    "InboundInput",
    "InboundState",
    "OutboundInput",
    "OutboundState",
    "Role",
    "SessionInput",
    "SessionState",
    "Who",
    "inbound_fault",
    "outbound_fault",
    "session_fault",
    "who_is_at_fault",
]

from dataclasses import dataclass
from enum import Enum
from typing import Literal

from ..types import meta as M
from ..types.errors import InvalidRequest, LocalProtocolError, MCPError, RemoteProtocolError

Who = Literal["local", "remote"]
Role = Literal["client", "server"]
ROLES: tuple[Role, ...] = ("client", "server")


@dataclass(frozen=True, slots=True)
class Fault:
    """What an illegal move costs: ``error`` with ``message``, or nothing when ``error`` is None
    (the move is ignored). ``message`` is a ``str.format`` template; the session fills in
    ``action``, ``state``, and, where it has them, ``method`` and ``id``."""

    error: type[MCPError] | None
    message: str = ""

    def exception(self, **details: object) -> MCPError:
        """The error to raise (ours) or to answer the peer with (theirs); only for a fault that has one."""
        assert self.error is not None
        return self.error(self.message.format(**details))


#: An illegal move that costs nothing: a notification cannot be answered, so it is dropped.
IGNORED = Fault(None)


# ---------------------------------------------------------------- session


class SessionState(Enum):
    """Where a session is in its life, from ``NEW`` to ``CLOSED``; ``states`` holds every legal move between them."""

    # Members are singletons: identity hashing keeps the table lookups on the hot path cheap.
    __hash__ = object.__hash__

    NEW = "new"
    INITIALIZING = "initializing"
    READY = "ready"
    CLOSING = "closing"
    CLOSED = "closed"


class SessionInput(Enum):
    # Members are singletons: identity hashing keeps the table lookups on the hot path cheap.
    __hash__ = object.__hash__

    # Each input says who acted: "SEND_*"/"START_*"/"CLOSED" are ours, "RECV_*" the peer's.
    SEND_INITIALIZE = "send initialize"  # client
    RECV_INITIALIZE = "receive initialize"  # server
    SEND_INITIALIZE_RESULT = "send initialize result"  # server
    SEND_INITIALIZE_ERROR = "send initialize error"  # server: the handshake failed, start over
    RECV_INITIALIZE_RESULT = "receive initialize result"  # client
    RECV_INITIALIZE_ERROR = "receive initialize error"  # client
    RECV_INITIALIZED = "receive initialized"  # server
    #: A worker of a fleet takes up a session whose handshake another worker served.
    RESUME_HANDSHAKE = "resume a handshake served elsewhere"  # server
    SEND_HANDSHAKE_ERA_REQUEST = "send request (handshake era)"
    RECV_HANDSHAKE_ERA_REQUEST = "receive request (handshake era)"
    SEND_STATELESS_REQUEST = "send request (stateless era)"  # client
    RECV_STATELESS_REQUEST = "receive request (stateless era)"  # server
    SEND_PING = "send ping"
    RECV_PING = "receive ping"
    SEND_NOTIFICATION = "send notification"
    START_CLOSE = "start closing"
    CLOSED = "closed"


S, In = SessionState, SessionInput
_OPEN = (S.NEW, S.INITIALIZING, S.READY)
_HANDSHAKE = (
    In.SEND_INITIALIZE_RESULT,
    In.SEND_INITIALIZE_ERROR,
    In.RECV_INITIALIZE_RESULT,
    In.RECV_INITIALIZE_ERROR,
    In.RECV_INITIALIZED,
)
#: Inputs only a client makes, and only a server makes; the other role's table has no row for them.
_CLIENT_ONLY = (In.SEND_INITIALIZE, In.RECV_INITIALIZE_RESULT, In.RECV_INITIALIZE_ERROR, In.SEND_STATELESS_REQUEST)
_SERVER_ONLY = (
    In.RECV_INITIALIZE,
    In.SEND_INITIALIZE_RESULT,
    In.SEND_INITIALIZE_ERROR,
    In.RECV_INITIALIZED,
    In.RESUME_HANDSHAKE,
    In.RECV_STATELESS_REQUEST,
)

_BOTH_ROLES: dict[tuple[SessionState, SessionInput], SessionState] = {
    (S.NEW, In.SEND_INITIALIZE): S.INITIALIZING,
    (S.NEW, In.RECV_INITIALIZE): S.INITIALIZING,
    (S.INITIALIZING, In.SEND_INITIALIZE_RESULT): S.INITIALIZING,
    (S.INITIALIZING, In.SEND_INITIALIZE_ERROR): S.NEW,
    (S.INITIALIZING, In.RECV_INITIALIZE_RESULT): S.READY,
    (S.INITIALIZING, In.RECV_INITIALIZE_ERROR): S.NEW,
    (S.INITIALIZING, In.RECV_INITIALIZED): S.READY,
    (S.NEW, In.RESUME_HANDSHAKE): S.READY,
    # A client that pipelines `initialized` right behind `initialize` makes us READY
    # before the initialize handler answers; the answer must still go out.
    (S.READY, In.SEND_INITIALIZE_RESULT): S.READY,
    # A server may hear requests between its initialize result and the client's
    # `initialized`: the spec only says the client SHOULD NOT, so we serve them.
    (S.INITIALIZING, In.RECV_HANDSHAKE_ERA_REQUEST): S.INITIALIZING,
    (S.READY, In.SEND_HANDSHAKE_ERA_REQUEST): S.READY,
    (S.READY, In.RECV_HANDSHAKE_ERA_REQUEST): S.READY,
    # Stateless-era requests stand alone: they need no handshake and leave the state as it was.
    **{(s, In.SEND_STATELESS_REQUEST): s for s in _OPEN},
    **{(s, In.RECV_STATELESS_REQUEST): s for s in _OPEN},
    # ping is allowed before and during the handshake.
    **{(s, In.SEND_PING): s for s in _OPEN},
    **{(s, In.RECV_PING): s for s in _OPEN},
    # Notifications go out until the connection is gone (a closing server still reports progress).
    **{(s, In.SEND_NOTIFICATION): s for s in (*_OPEN, S.CLOSING)},
    **{(s, In.START_CLOSE): S.CLOSING for s in _OPEN},
    # A handshake already under way when closing starts still finishes on the wire.
    **{(S.CLOSING, action): S.CLOSING for action in _HANDSHAKE},
    (S.CLOSING, In.START_CLOSE): S.CLOSING,
    **{(s, In.CLOSED): S.CLOSED for s in (*_OPEN, S.CLOSING, S.CLOSED)},
}

#: For each role, every legal move: ``SESSION_TRANSITIONS[role][state, input]`` is the next state.
SESSION_TRANSITIONS: dict[Role, dict[tuple[SessionState, SessionInput], SessionState]] = {
    "client": {key: after for key, after in _BOTH_ROLES.items() if key[1] not in _SERVER_ONLY},
    "server": {key: after for key, after in _BOTH_ROLES.items() if key[1] not in _CLIENT_ONLY},
}

_CLOSING_STATES = (S.CLOSING, S.CLOSED)
_REQUESTS_IN = (In.RECV_INITIALIZE, In.RECV_HANDSHAKE_ERA_REQUEST, In.RECV_STATELESS_REQUEST, In.RECV_PING)
_BEFORE_INITIALIZE = (
    "received {method} before initialize: send initialize first, "
    f"or put {M.PROTOCOL_VERSION} in params._meta for a stateless request"
)

#: What an illegal session move costs, most specific key first: ``(role, state, input)``,
#: ``(None, state, input)``, ``(role, None, input)``, ``(None, None, input)``; else the
#: default by who moved (``cannot <input> while the session is <state>``).
SESSION_FAULTS: dict[tuple[Role | None, SessionState | None, SessionInput], Fault] = {
    # A closing session takes no new requests: whatever they are, the peer hears why.
    **{
        (None, s, action): Fault(InvalidRequest, "the session is closing")
        for s in _CLOSING_STATES
        for action in _REQUESTS_IN
    },
    ("server", S.NEW, In.RECV_HANDSHAKE_ERA_REQUEST): Fault(InvalidRequest, _BEFORE_INITIALIZE),
    ("client", None, In.RECV_INITIALIZE): Fault(InvalidRequest, "only a server answers initialize"),
    ("client", None, In.RECV_STATELESS_REQUEST): Fault(InvalidRequest, "servers of the stateless era send no requests"),
    ("server", None, In.SEND_INITIALIZE): Fault(LocalProtocolError, "only a client sends initialize"),
    ("server", None, In.SEND_STATELESS_REQUEST): Fault(
        LocalProtocolError, "servers of the stateless era send no requests"
    ),
    (None, S.CLOSED, In.SEND_NOTIFICATION): Fault(LocalProtocolError, "the session is closed"),
    # A stray or repeated `initialized` is harmless, and a notification gets no error response.
    (None, None, In.RECV_INITIALIZED): IGNORED,
}

_DEFAULT_SESSION_FAULT = {
    "local": Fault(LocalProtocolError, "cannot {action} while the session is {state}"),
    "remote": Fault(RemoteProtocolError, "cannot {action} while the session is {state}"),
}


def session_fault(role: Role, state: SessionState, action: SessionInput) -> Fault:
    """What the illegal move ``action`` in ``state`` costs a session of ``role``."""
    for key in ((role, state, action), (None, state, action), (role, None, action), (None, None, action)):
        fault = SESSION_FAULTS.get(key)
        if fault is not None:
            return fault
    return _DEFAULT_SESSION_FAULT[who_is_at_fault(action)]


# ------------------------------------------------------- inbound requests


class InboundState(Enum):
    # Members are singletons: identity hashing keeps the table lookups on the hot path cheap.
    __hash__ = object.__hash__

    ACTIVE = "active"
    #: ``initialize``: the one request the peer cannot cancel.
    ACTIVE_UNCANCELLABLE = "active, not cancellable"
    #: The peer cancelled: whatever the handler sends from now on is dropped, never sent.
    CANCELLED = "cancelled"
    #: No entry: answered (or dropped) and forgotten, or never received.
    DONE = "done"


class InboundInput(Enum):
    # Members are singletons: identity hashing keeps the table lookups on the hot path cheap.
    __hash__ = object.__hash__

    RECV_REQUEST = "receive request"
    RECV_INITIALIZE = "receive initialize"
    SEND_RESPONSE = "send response"
    SEND_PROGRESS = "send progress"
    RECV_CANCEL = "receive cancellation"


Ib, II = InboundState, InboundInput

INBOUND_TRANSITIONS: dict[tuple[InboundState, InboundInput], InboundState] = {
    (Ib.DONE, II.RECV_REQUEST): Ib.ACTIVE,
    (Ib.DONE, II.RECV_INITIALIZE): Ib.ACTIVE_UNCANCELLABLE,
    (Ib.ACTIVE, II.SEND_RESPONSE): Ib.DONE,
    (Ib.ACTIVE, II.SEND_PROGRESS): Ib.ACTIVE,
    (Ib.ACTIVE, II.RECV_CANCEL): Ib.CANCELLED,
    (Ib.ACTIVE_UNCANCELLABLE, II.SEND_RESPONSE): Ib.DONE,
    (Ib.ACTIVE_UNCANCELLABLE, II.SEND_PROGRESS): Ib.ACTIVE_UNCANCELLABLE,
    # The race the spec calls out: the handler may finish after the peer cancelled.
    # From CANCELLED its response (and any progress) is dropped, never sent.
    (Ib.CANCELLED, II.SEND_RESPONSE): Ib.DONE,
    (Ib.CANCELLED, II.SEND_PROGRESS): Ib.CANCELLED,
}

_IN_FLIGHT = Fault(InvalidRequest, "request id {id!r} is already in use by a request in flight")

#: What an illegal move of an inbound request costs.
INBOUND_FAULTS: dict[tuple[InboundState, InboundInput], Fault] = {
    **{
        (s, action): _IN_FLIGHT
        for s in (Ib.ACTIVE, Ib.ACTIVE_UNCANCELLABLE, Ib.CANCELLED)
        for action in (II.RECV_REQUEST, II.RECV_INITIALIZE)
    },
    (Ib.DONE, II.SEND_RESPONSE): Fault(LocalProtocolError, "no request {id!r} is waiting for an answer"),
    (Ib.DONE, II.SEND_PROGRESS): Fault(LocalProtocolError, "progress for request {id!r} after its response"),
    # Unknown, finished, uncancellable or already cancelled requests: the spec says ignore (CN-11, CN-13).
    (Ib.DONE, II.RECV_CANCEL): IGNORED,
    (Ib.ACTIVE_UNCANCELLABLE, II.RECV_CANCEL): IGNORED,
    (Ib.CANCELLED, II.RECV_CANCEL): IGNORED,
}


def inbound_fault(state: InboundState, action: InboundInput) -> Fault:
    """What the illegal move ``action`` of an inbound request in ``state`` costs."""
    return INBOUND_FAULTS[state, action]


# ------------------------------------------------------ outbound requests


class OutboundState(Enum):
    # Members are singletons: identity hashing keeps the table lookups on the hot path cheap.
    __hash__ = object.__hash__

    SENT = "sent"
    #: ``initialize``: the one request we may not cancel.
    SENT_UNCANCELLABLE = "sent, not cancellable"
    #: Answered with a task (2025-11-25): only its progress token lives on, until released.
    TASK = "answered with a task"
    #: No entry: answered, cancelled by us, or never sent.
    DONE = "done"


class OutboundInput(Enum):
    # Members are singletons: identity hashing keeps the table lookups on the hot path cheap.
    __hash__ = object.__hash__

    SEND_REQUEST = "send request"
    SEND_INITIALIZE = "send initialize"
    RECV_RESPONSE = "receive response"
    #: The answer to a task-augmented request that carried a progress token is a ``CreateTaskResult``.
    RECV_TASK_CREATED = "receive task creation"
    RECV_PROGRESS = "receive progress"
    SEND_CANCEL = "cancel"
    #: The task reached a terminal status (or we stopped following it): its token is done.
    RELEASE_TASK = "release the task's progress token"


Ob, OI = OutboundState, OutboundInput

OUTBOUND_TRANSITIONS: dict[tuple[OutboundState, OutboundInput], OutboundState] = {
    (Ob.DONE, OI.SEND_REQUEST): Ob.SENT,
    (Ob.DONE, OI.SEND_INITIALIZE): Ob.SENT_UNCANCELLABLE,
    (Ob.SENT, OI.RECV_RESPONSE): Ob.DONE,
    (Ob.SENT, OI.RECV_PROGRESS): Ob.SENT,
    (Ob.SENT, OI.SEND_CANCEL): Ob.DONE,
    (Ob.SENT_UNCANCELLABLE, OI.RECV_RESPONSE): Ob.DONE,
    (Ob.SENT_UNCANCELLABLE, OI.RECV_PROGRESS): Ob.SENT_UNCANCELLABLE,
    # A timeout may race the answer: cancelling a request that is already done does nothing.
    (Ob.DONE, OI.SEND_CANCEL): Ob.DONE,
    # 2025-11-25: the token outlives the answer that created a task, until the task ends.
    (Ob.SENT, OI.RECV_TASK_CREATED): Ob.TASK,
    (Ob.TASK, OI.RECV_PROGRESS): Ob.TASK,
    (Ob.TASK, OI.RELEASE_TASK): Ob.DONE,
    # The caller stopped waiting just as the task was created: the token goes, and nothing is
    # sent (the request is answered; only ``tasks/cancel`` stops a task).
    (Ob.TASK, OI.SEND_CANCEL): Ob.DONE,
    # Seeing the end twice (a status, then the follower finishing) releases once.
    (Ob.DONE, OI.RELEASE_TASK): Ob.DONE,
}

#: What an illegal move of an outbound request costs.
OUTBOUND_FAULTS: dict[tuple[OutboundState, OutboundInput], Fault] = {
    # Our ids are fresh for every request: a second send under one id would be our bug.
    **{
        (s, action): Fault(LocalProtocolError, "request id {id!r} is already in flight")
        for s in (Ob.SENT, Ob.SENT_UNCANCELLABLE, Ob.TASK)
        for action in (OI.SEND_REQUEST, OI.SEND_INITIALIZE)
    },
    (Ob.SENT_UNCANCELLABLE, OI.SEND_CANCEL): Fault(LocalProtocolError, "initialize cannot be cancelled"),
    # A late answer (we cancelled), a stray one, or progress after the answer: dropped silently (CN-12).
    (Ob.DONE, OI.RECV_RESPONSE): IGNORED,
    (Ob.DONE, OI.RECV_TASK_CREATED): IGNORED,
    (Ob.DONE, OI.RECV_PROGRESS): IGNORED,
    # A second answer to a request that made a task: dropped like any stray answer.
    (Ob.TASK, OI.RECV_RESPONSE): IGNORED,
    (Ob.TASK, OI.RECV_TASK_CREATED): IGNORED,
    # ``initialize`` is never task-augmented, so its answer is never read as a task's creation.
    (Ob.SENT_UNCANCELLABLE, OI.RECV_TASK_CREATED): Fault(RemoteProtocolError, "initialize cannot create a task"),
    # Only a request answered with a task has a token to release (release goes by task id).
    **{
        (s, OI.RELEASE_TASK): Fault(LocalProtocolError, "request {id!r} has created no task")
        for s in (Ob.SENT, Ob.SENT_UNCANCELLABLE)
    },
}


def outbound_fault(state: OutboundState, action: OutboundInput) -> Fault:
    """What the illegal move ``action`` of an outbound request in ``state`` costs."""
    return OUTBOUND_FAULTS[state, action]


def who_is_at_fault(action: Enum) -> Who:
    """Whose move an input is: an illegal move of ours is a bug here, one of the peer's is its error."""
    return "remote" if action.name.startswith("RECV_") else "local"
