"""The session's record of each request in flight, and its moves through the request tables.

``InboundRequest`` is a request of the peer's that we are serving; ``OutboundRequest``
one of ours that waits for the peer's answer. A request with no record is DONE
(answered and forgotten, or never seen). ``move_inbound``/``move_outbound`` read where
a move leads from ``states.py``, and raise the fault of an illegal one.
"""

from __future__ import annotations

__all__ = ["InboundRequest", "OutboundRequest", "move_inbound", "move_outbound"]

from dataclasses import dataclass

from ..types.versions import Era
from .states import (
    INBOUND_TRANSITIONS,
    OUTBOUND_TRANSITIONS,
    InboundInput,
    InboundState,
    OutboundInput,
    OutboundState,
    inbound_fault,
    outbound_fault,
)


@dataclass(slots=True)
class InboundRequest:
    """The peer's request ``method`` we serve, in ``era``; ``token`` is its progress token."""

    method: str
    era: Era
    state: InboundState
    token: int | str | None = None
    last_progress: float | None = None


@dataclass(slots=True)
class OutboundRequest:
    """Our request ``method``, waiting for its answer; ``token`` is its progress token.

    ``asks_task``: a task-augmented request (2025-11-25 ``params.task``) with a token, whose
    answer may create a task; then ``task_id`` names it while the token lives on (TASK)."""

    method: str
    state: OutboundState
    token: int | str | None = None
    last_progress: float | None = None
    asks_task: bool = False
    task_id: str | None = None


def move_inbound(record: InboundRequest | None, action: InboundInput, request_id: object) -> InboundState | None:
    """Where ``action`` leads the peer's request ``request_id`` (``record`` None: DONE); None when
    the table ignores the move. Raises the table's fault for an illegal one. The caller
    stores the state it gets."""
    state = InboundState.DONE if record is None else record.state
    after = INBOUND_TRANSITIONS.get((state, action))
    if after is not None:
        return after
    fault = inbound_fault(state, action)
    if fault.error is None:
        return None
    raise fault.exception(id=request_id)


def move_outbound(record: OutboundRequest | None, action: OutboundInput, request_id: object) -> OutboundState | None:
    """Where ``action`` leads our request ``request_id`` (``record`` None: DONE); None when the
    table ignores the move. Raises the table's fault for an illegal one."""
    state = OutboundState.DONE if record is None else record.state
    after = OUTBOUND_TRANSITIONS.get((state, action))
    if after is not None:
        return after
    fault = outbound_fault(state, action)
    if fault.error is None:
        return None
    raise fault.exception(id=request_id)
