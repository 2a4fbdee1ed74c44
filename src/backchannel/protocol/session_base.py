"""What a session knows, shared by its receiving and sending halves.

``SessionBase`` holds the session's state and records (who the peer is, the requests
in flight both ways, the queue of messages to send) and the one way the session
state moves: read from ``states.py``. ``receiving.py`` and ``sending.py`` add the two
halves of the API; ``session.py`` puts them together as ``Session``.
"""

from __future__ import annotations

__all__ = ["SessionBase", "SessionConfig", "is_number"]

from dataclasses import dataclass, field
from typing import Any

from ..types.errors import MCPError
from ..types.versions import LATEST_STATELESS, VERSIONS, Era, era_of
from .events import Outgoing, RequestId
from .requests import InboundRequest, OutboundRequest, move_outbound
from .states import SESSION_TRANSITIONS, OutboundInput, Role, SessionInput, SessionState, session_fault


@dataclass(frozen=True, slots=True)
class SessionConfig:
    """Who we are: ``info`` and ``capabilities`` are sent in ``initialize`` (client) or
    used to stamp stateless-era results (server, ``info`` only)."""

    role: Role
    info: dict[str, Any] = field(default_factory=lambda: {"name": "backchannel", "version": "0"})
    capabilities: dict[str, Any] = field(default_factory=dict)
    versions: tuple[str, ...] = VERSIONS

    @property
    def handshake_versions(self) -> tuple[str, ...]:
        """The handshake-era versions among ``versions``."""
        return tuple(v for v in self.versions if era_of(v) == "handshake")


def is_number(value: object) -> bool:
    """Whether ``value`` is a JSON number (``bool`` is not, though Python counts it an int)."""
    return type(value) in (int, float)


class SessionBase:
    """The state and records of one end of an MCP connection; use ``Session``, which adds the API."""

    def __init__(self, config: SessionConfig) -> None:
        self.config = config
        self.role: Role = config.role
        self.state = SessionState.NEW
        self._transitions = SESSION_TRANSITIONS[config.role]
        #: The handshake-era version once ``initialize`` settled it.
        self.protocol_version: str | None = None
        #: The era a client chose (``use_stateless`` or the handshake); None until then.
        self.era: Era | None = None
        self.stateless_version: str = LATEST_STATELESS
        self.peer_info: dict[str, Any] = {}
        self.peer_capabilities: dict[str, Any] = {}
        self.instructions: str | None = None
        #: Client, stateless era: the log level put in every request's ``_meta`` (None: no logs).
        self.log_level: str | None = None
        self._out: list[Outgoing] = []
        self._inbound: dict[RequestId, InboundRequest] = {}
        self._outbound: dict[RequestId, OutboundRequest] = {}
        self._tokens: dict[int | str, RequestId] = {}
        #: Tasks our requests created whose progress tokens live on (TASK): task id -> request id.
        self._task_ids: dict[str, RequestId] = {}
        self._next_id = 0
        #: Put before the number of each request we send (ids become strings): a worker of a
        #: fleet names itself there, so the peer's answer can be routed back to it.
        self.id_prefix: str | None = None

    def _next_state(self, action: SessionInput, method: str | None = None) -> SessionState | None:
        """Where ``action`` leads from the current state; None when the table ignores it.

        Raises the fault the table names for an illegal move (nothing has moved then).
        """
        after = self._transitions.get((self.state, action))
        if after is not None:
            return after
        fault = session_fault(self.role, self.state, action)
        if fault.error is None:
            return None
        raise fault.exception(action=action.value, state=self.state.value, method=method)

    def _move(self, action: SessionInput) -> None:
        # The table's legal moves first, without ``_next_state``'s call: every message sent moves.
        after = self._transitions.get((self.state, action)) or self._next_state(action)
        if after is not None:
            self.state = after

    @property
    def queued(self) -> int:
        """Messages queued and not yet taken by ``outgoing()``."""
        return len(self._out)

    def shrink(self) -> None:
        """Give back the room of the records emptied since they grew (a dict keeps its table
        when its last entry goes); for a session that may now stay idle for long."""
        for records in (self._inbound, self._outbound, self._tokens, self._task_ids):
            if not records:
                records.clear()

    @property
    def pending_inbound(self) -> int:
        return len(self._inbound)

    @property
    def pending_outbound(self) -> int:
        """Our requests still waiting for an answer (not those answered with a task)."""
        return len(self._outbound) - len(self._task_ids)

    @property
    def active_progress_tokens(self) -> int:
        return len(self._tokens)

    @property
    def task_progress_tokens(self) -> int:
        """Tokens kept alive for tasks our requests created, until ``release_task_progress``."""
        return len(self._task_ids)

    def task_created_by(self, request_id: RequestId) -> str | None:
        """The task our request ``request_id`` created while its progress token lives on
        (2025-11-25); None once it is released, or when the answer made no task."""
        record = self._outbound.get(request_id)
        return record.task_id if record is not None else None

    def _release_task(self, task_id: str) -> RequestId | None:
        """Free the progress token task ``task_id`` kept; the request that created it, or None."""
        request_id = self._task_ids.get(task_id)
        record = self._outbound.get(request_id) if request_id is not None else None
        move_outbound(record, OutboundInput.RELEASE_TASK, request_id)
        if record is None or request_id is None:
            return None  # (DONE, RELEASE_TASK): released already, or never kept
        self._drop_outbound(request_id, record)
        return request_id

    def _drop_outbound(self, request_id: RequestId, record: OutboundRequest) -> None:
        """Forget our request and free its token (and its task's, if it made one)."""
        del self._outbound[request_id]
        if record.token is not None:
            self._tokens.pop(record.token, None)
        if record.task_id is not None:
            self._task_ids.pop(record.task_id, None)

    def _queue_error(self, request_id: RequestId | None, error: MCPError) -> None:
        self._out.append({"jsonrpc": "2.0", "id": request_id, "error": error.to_error()})
