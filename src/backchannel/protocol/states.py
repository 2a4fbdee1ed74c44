"""Every legal move of a session and of a request, in one place.

A reader who wants to know what may happen when finds it here. Anything missing
from these tables is illegal: if we caused it, that is a ``LocalProtocolError``;
if the peer did, a ``RemoteProtocolError`` carrying the code to answer with.

Session (one per connection; the stateless era never leaves NEW or READY by a
handshake, since each of its requests stands alone)::

    NEW --initialize sent/received--> INITIALIZING --handshake done--> READY
    any open state --close started--> CLOSING --closed--> CLOSED

Inbound request (the peer asked us)::

    ACTIVE --answered--> ANSWERED          (the entry is then forgotten)
    ACTIVE --peer cancelled--> CANCELLED   (whatever the handler returns is dropped)

Outbound request (we asked the peer)::

    SENT --answer received--> ANSWERED     (forgotten)
    SENT --we cancelled--> ABANDONED       (a late answer is dropped silently)
"""

from __future__ import annotations

__all__ = [
    "INBOUND_TRANSITIONS",
    "OUTBOUND_TRANSITIONS",
    "SESSION_TRANSITIONS",
    "InboundInput",
    "InboundState",
    "OutboundInput",
    "OutboundState",
    "SessionInput",
    "SessionState",
    "Who",
    "who_is_at_fault",
]

from enum import Enum
from typing import Literal

Who = Literal["local", "remote"]


class SessionState(Enum):
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

    # Each input says who acted: "SEND_*"/"START_*" are ours, "RECV_*" the peer's.
    SEND_INITIALIZE = "send initialize"  # client
    RECV_INITIALIZE = "receive initialize"  # server
    SEND_INITIALIZE_RESULT = "send initialize result"  # server
    SEND_INITIALIZE_ERROR = "send initialize error"  # server: the handshake failed, start over
    RECV_INITIALIZE_RESULT = "receive initialize result"  # client
    RECV_INITIALIZE_ERROR = "receive initialize error"  # client
    RECV_INITIALIZED = "receive initialized"  # server
    SEND_LEGACY_REQUEST = "send request (handshake era)"
    RECV_LEGACY_REQUEST = "receive request (handshake era)"
    SEND_MODERN_REQUEST = "send request (stateless era)"
    RECV_MODERN_REQUEST = "receive request (stateless era)"
    SEND_PING = "send ping"
    RECV_PING = "receive ping"
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

SESSION_TRANSITIONS: dict[tuple[SessionState, SessionInput], SessionState] = {
    (S.NEW, In.SEND_INITIALIZE): S.INITIALIZING,
    (S.NEW, In.RECV_INITIALIZE): S.INITIALIZING,
    (S.INITIALIZING, In.SEND_INITIALIZE_RESULT): S.INITIALIZING,
    (S.INITIALIZING, In.SEND_INITIALIZE_ERROR): S.NEW,
    (S.INITIALIZING, In.RECV_INITIALIZE_RESULT): S.READY,
    (S.INITIALIZING, In.RECV_INITIALIZE_ERROR): S.NEW,
    (S.INITIALIZING, In.RECV_INITIALIZED): S.READY,
    # A client that pipelines `initialized` right behind `initialize` makes us READY
    # before the initialize handler answers; the answer must still go out.
    (S.READY, In.SEND_INITIALIZE_RESULT): S.READY,
    # A server may hear requests between its initialize result and the client's
    # `initialized`: the spec only says the client SHOULD NOT, so we serve them.
    (S.INITIALIZING, In.RECV_LEGACY_REQUEST): S.INITIALIZING,
    (S.READY, In.SEND_LEGACY_REQUEST): S.READY,
    (S.READY, In.RECV_LEGACY_REQUEST): S.READY,
    # Stateless-era requests stand alone: they need no handshake and leave the state as it was.
    **{(s, In.SEND_MODERN_REQUEST): s for s in _OPEN},
    **{(s, In.RECV_MODERN_REQUEST): s for s in _OPEN},
    # ping is allowed before and during the handshake.
    **{(s, In.SEND_PING): s for s in _OPEN},
    **{(s, In.RECV_PING): s for s in _OPEN},
    **{(s, In.START_CLOSE): S.CLOSING for s in _OPEN},
    # A handshake already under way when closing starts still finishes on the wire.
    **{(S.CLOSING, action): S.CLOSING for action in _HANDSHAKE},
    (S.CLOSING, In.START_CLOSE): S.CLOSING,
    **{(s, In.CLOSED): S.CLOSED for s in (*_OPEN, S.CLOSING, S.CLOSED)},
}


class InboundState(Enum):
    # Members are singletons: identity hashing keeps the table lookups on the hot path cheap.
    __hash__ = object.__hash__

    ACTIVE = "active"
    CANCELLED = "cancelled"
    ANSWERED = "answered"


class InboundInput(Enum):
    # Members are singletons: identity hashing keeps the table lookups on the hot path cheap.
    __hash__ = object.__hash__

    SEND_RESPONSE = "send response"
    SEND_PROGRESS = "send progress"
    RECV_CANCEL = "receive cancellation"


INBOUND_TRANSITIONS: dict[tuple[InboundState, InboundInput], InboundState] = {
    (InboundState.ACTIVE, InboundInput.SEND_RESPONSE): InboundState.ANSWERED,
    (InboundState.ACTIVE, InboundInput.SEND_PROGRESS): InboundState.ACTIVE,
    (InboundState.ACTIVE, InboundInput.RECV_CANCEL): InboundState.CANCELLED,
    # The race the spec calls out: the handler may finish after the peer cancelled.
    # Its response (and any progress) is dropped, never sent.
    (InboundState.CANCELLED, InboundInput.SEND_RESPONSE): InboundState.CANCELLED,
    (InboundState.CANCELLED, InboundInput.SEND_PROGRESS): InboundState.CANCELLED,
    (InboundState.CANCELLED, InboundInput.RECV_CANCEL): InboundState.CANCELLED,
}


class OutboundState(Enum):
    # Members are singletons: identity hashing keeps the table lookups on the hot path cheap.
    __hash__ = object.__hash__

    SENT = "sent"
    ANSWERED = "answered"
    ABANDONED = "abandoned"


class OutboundInput(Enum):
    # Members are singletons: identity hashing keeps the table lookups on the hot path cheap.
    __hash__ = object.__hash__

    RECV_RESPONSE = "receive response"
    SEND_CANCEL = "cancel"


OUTBOUND_TRANSITIONS: dict[tuple[OutboundState, OutboundInput], OutboundState] = {
    (OutboundState.SENT, OutboundInput.RECV_RESPONSE): OutboundState.ANSWERED,
    (OutboundState.SENT, OutboundInput.SEND_CANCEL): OutboundState.ABANDONED,
    (OutboundState.ABANDONED, OutboundInput.RECV_RESPONSE): OutboundState.ABANDONED,
    (OutboundState.ABANDONED, OutboundInput.SEND_CANCEL): OutboundState.ABANDONED,
}


def who_is_at_fault(action: Enum) -> Who:
    """Whose move an input is: an illegal move of ours is a bug here, one of the peer's is its error."""
    return "remote" if action.name.startswith("RECV_") else "local"
