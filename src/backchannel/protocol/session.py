"""The sans-IO MCP session: JSON values in, events out, messages to send.

Feed every decoded message to ``receive_message`` and act on the events it
returns; call the ``send_*`` commands to speak; then drain ``outgoing()`` and
write what it holds. The session never reads a clock or touches a socket, so a
test drives it with plain dicts.

One session serves both protocol eras. A handshake-era peer opens with
``initialize``; a stateless-era request carries its version and capabilities in
``params._meta`` and is served on its own, whatever the session's state. (In code
the eras are the values of ``Era``, ``"handshake"`` and ``"stateless"``.)

Every state move, legal or not, is read from the tables in ``states.py``; the
shape of each message from ``shapes.py``; the ``initialize`` exchange from
``handshake.py``; each request's record and its moves from ``requests.py``. Those
are the session's seams. ``Session`` itself is one class, as h11 keeps its
``Connection`` whole: its state and records, the receiving half (``receive_message``
classifies a message, moves the session and the request it concerns, and returns
events; a malformed message is answered with its JSON-RPC error in the outgoing queue
instead) and the sending half (each ``send_*`` command checks the move, updates the
records and queues the message; ``outgoing()`` hands the queue over) all read and write
the same records.

The session does not know which response or stream a message travels on: a transport
that routes by request (HTTP) gets that from the runtime, which knows which of the
peer's requests each of its commands concerns.
"""

from __future__ import annotations

__all__ = ["Role", "Session", "SessionConfig"]

from dataclasses import dataclass, field
from typing import Any

from ..types import meta as M
from ..types.errors import (
    INVALID_PARAMS,
    RESOURCE_NOT_FOUND,
    URL_ELICITATION_REQUIRED,
    ConnectionClosed,
    InvalidParams,
    LocalProtocolError,
    MCPError,
    MissingCapability,
    RemoteProtocolError,
    RequestError,
)
from ..types.ids import is_request_id
from ..types.methods import exists as method_exists
from ..types.tasks import TERMINAL_STATUSES
from ..types.versions import HANDSHAKE_VERSIONS, LATEST_STATELESS, VERSIONS, Era, era_of
from .capabilities import require
from .envelope import handshake_result, read_stateless_meta, stamp_stateless_result, stateless_meta
from .events import (
    CancelIntent,
    CancelRequested,
    ErrorReceived,
    Event,
    HandshakeCompleted,
    NotificationReceived,
    Outgoing,
    PeerClosed,
    ProgressReceived,
    RequestId,
    RequestReceived,
    ResponseReceived,
)
from .handshake import Agreed, read_initialize_params, read_initialize_result
from .requests import InboundRequest, OutboundRequest, move_inbound, move_outbound
from .shapes import Shape, classify
from .states import (
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
    session_fault,
)

#: Where the peer's requests start when their id is free.
_BEGIN = {
    action: INBOUND_TRANSITIONS[InboundState.DONE, action]
    for action in (InboundInput.RECV_REQUEST, InboundInput.RECV_INITIALIZE)
}


#: Server-to-client requests and the client capability each one needs.
_NEEDS_CAPABILITY = {
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}

#: Where our requests start (our ids are fresh, so the move from DONE is always legal).
_SENT = OUTBOUND_TRANSITIONS[OutboundState.DONE, OutboundInput.SEND_REQUEST]
_SENT_INITIALIZE = OUTBOUND_TRANSITIONS[OutboundState.DONE, OutboundInput.SEND_INITIALIZE]
#: (method, version, role) found in the method table: each question a server asks checks its method
#: exists in the agreed revision, and the table's answer never changes (a set of its rows: bounded).
_SENDABLE: set[tuple[str, str, str]] = set()
#: Where progress leads a request of the peer's, by its state: the legal moves of the table.
_PROGRESS_MOVES = {
    state: after for (state, action), after in INBOUND_TRANSITIONS.items() if action is InboundInput.SEND_PROGRESS
}
_CANCELLED = InboundState.CANCELLED


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


class Session:
    """One end of an MCP connection, client or server, with no I/O.

    Build it with a ``SessionConfig``; feed ``receive_message``, speak with the ``send_*``
    commands, and write what ``outgoing()`` returns after each call.
    """

    # ------------------------------------------------------------- state and records

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
        """The peer's requests we have received and not yet answered (nor seen cancelled)."""
        return len(self._inbound)

    @property
    def pending_outbound(self) -> int:
        """Our requests still waiting for an answer (not those answered with a task)."""
        return len(self._outbound) - len(self._task_ids)

    @property
    def active_progress_tokens(self) -> int:
        """Progress tokens of our own requests still live (unanswered, or their task runs): a
        ``notifications/progress`` from the peer naming one is delivered. A count for leak checks."""
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

    # ------------------------------------------------------------- receiving (events from the peer's messages)

    def receive_message(self, message: Any) -> list[Event]:
        """Feed one decoded JSON value from the peer.

        Returns the events it caused. A malformed message causes no event: the
        session queues the JSON-RPC error for it, so drain ``outgoing()`` after
        every call.
        """
        shape = classify(message)
        if shape is Shape.REQUEST:
            request_id = message["id"]
            params = message.get("params")
            try:
                return self._receive_request(request_id, message["method"], {} if params is None else params)
            except MCPError as exc:
                self._queue_error(request_id, exc)
                return []
        if shape is Shape.RESPONSE:
            return self._receive_response(message)
        if shape is Shape.NOTIFICATION:
            params = message.get("params")
            return self._receive_notification(message["method"], {} if params is None else params)
        if shape is not None:
            self._queue_error(shape.id, shape.error)
        return []

    def receive_invalid(self, error: MCPError) -> None:
        """Report input that never became a JSON value (bad JSON, an oversized line).

        The session answers with ``error`` and id null; drain ``outgoing()``.
        """
        self._queue_error(None, error)

    def _receive_request(self, request_id: RequestId, method: str, params: dict[str, Any]) -> list[Event]:
        meta = params.get("_meta")
        # The envelope decides the era, even for `initialize` (which 2026-07-28 does not have).
        stateless = type(meta) is dict and M.PROTOCOL_VERSION in meta
        if stateless:
            action = SessionInput.RECV_STATELESS_REQUEST
        elif method == "initialize":
            action = SessionInput.RECV_INITIALIZE
        elif method == "ping":
            action = SessionInput.RECV_PING
        else:
            action = SessionInput.RECV_HANDSHAKE_ERA_REQUEST
        first = InboundInput.RECV_INITIALIZE if action is SessionInput.RECV_INITIALIZE else InboundInput.RECV_REQUEST
        waiting = self._inbound.get(request_id)
        # The usual case, a fresh id, reads the table once at import (``_BEGIN``); an id in use
        # reads its fault from the table.
        begun = _BEGIN[first] if waiting is None else move_inbound(waiting, first, request_id)
        assert begun is not None
        after = self._transitions.get((self.state, action)) or self._next_state(action, method)
        assert after is not None  # no request is ignored: an illegal one is answered with its fault
        token = None
        if type(meta) is dict:
            token = meta.get(M.PROGRESS_TOKEN)
            if token is not None and not is_request_id(token):
                raise InvalidParams("_meta.progressToken must be a string or an integer")
        elif meta is not None:
            raise InvalidParams('"_meta" must be an object')

        if stateless:
            assert type(meta) is dict
            envelope = read_stateless_meta(meta, self.config.versions)
            self.state = after
            self._inbound[request_id] = InboundRequest(method, "stateless", begun, token)
            return [
                RequestReceived(
                    id=request_id,
                    method=method,
                    params=params,
                    era="stateless",
                    version=envelope.version,
                    client_capabilities=envelope.client_capabilities,
                    client_info=envelope.client_info,
                    log_level=envelope.log_level,
                )
            ]
        if action is SessionInput.RECV_INITIALIZE:
            agreed = read_initialize_params(params, self.config.handshake_versions, self.config.versions)
            self.protocol_version = agreed.version
            self.peer_capabilities = agreed.peer_capabilities
            self.peer_info = agreed.peer_info
            self.era = "handshake"
        self.state = after
        self._inbound[request_id] = InboundRequest(method, "handshake", begun, token)
        return [
            RequestReceived(
                id=request_id,
                method=method,
                params=params,
                era="handshake",
                version=self.protocol_version,
                client_capabilities=self.peer_capabilities,
                client_info=self.peer_info,
            )
        ]

    def _receive_notification(self, method: str, params: dict[str, Any]) -> list[Event]:
        if method == "notifications/cancelled":
            return self._receive_cancel(params)
        if method == "notifications/progress":
            return self._receive_progress(params)
        if method == "notifications/initialized":
            # A client that pipelines `initialized` right behind `initialize` is early, not wrong:
            # the handshake completes, and the initialize result still goes out (READY allows it).
            after = self._next_state(SessionInput.RECV_INITIALIZED)
            if after is None:
                return []
            self.state = after
            return [
                HandshakeCompleted(
                    version=self.protocol_version or HANDSHAKE_VERSIONS[-1],
                    peer_info=self.peer_info,
                    peer_capabilities=self.peer_capabilities,
                )
            ]
        if self._task_ids and method == "notifications/tasks/status" and _terminal(params.get("status")):
            # The peer says a task of ours ended: its token is done, in wire order (progress.mdx).
            task_id = params.get("taskId")
            if type(task_id) is str:
                self._release_task(task_id)
        return [NotificationReceived(method=method, params=params)]

    def _receive_cancel(self, params: dict[str, Any]) -> list[Event]:
        request_id = params.get("requestId")
        record = self._inbound.get(request_id) if is_request_id(request_id) else None
        after = move_inbound(record, InboundInput.RECV_CANCEL, request_id)
        if after is None:
            return []  # unknown, finished, uncancellable or cancelled already: the spec says ignore
        assert record is not None and is_request_id(request_id)
        record.state = after
        reason = params.get("reason")
        return [CancelRequested(id=request_id, reason=reason if isinstance(reason, str) else None)]

    def _receive_progress(self, params: dict[str, Any]) -> list[Event]:
        token = params.get("progressToken")
        progress = params.get("progress")
        if not is_request_id(token) or not is_number(progress):
            return []
        request_id = self._tokens.get(token)
        record = self._outbound.get(request_id) if request_id is not None else None
        after = move_outbound(record, OutboundInput.RECV_PROGRESS, request_id)
        if after is None:
            return []  # late or unknown: the request already finished
        assert record is not None and request_id is not None
        if record.last_progress is not None and progress <= record.last_progress:  # type: ignore[operator]
            return []  # the peer broke monotonicity; a notification cannot be answered, so drop it
        record.state = after
        record.last_progress = progress
        total = params.get("total")
        message = params.get("message")
        return [
            ProgressReceived(
                request_id=request_id,
                token=token,
                progress=progress,  # type: ignore[arg-type]
                total=total if is_number(total) else None,
                message=message if isinstance(message, str) else None,
                task_id=record.task_id,
            )
        ]

    def _receive_response(self, message: dict[str, Any]) -> list[Event]:
        request_id = message["id"]
        record = self._outbound.get(request_id) if is_request_id(request_id) else None
        task_id = _created_task(message.get("result")) if record is not None and record.asks_task else None
        created = task_id is not None and task_id not in self._task_ids  # one task, one token
        after = move_outbound(
            record, OutboundInput.RECV_TASK_CREATED if created else OutboundInput.RECV_RESPONSE, request_id
        )
        if after is None:
            return []  # a late answer to a request we cancelled, or a stray: nothing to do either way
        assert record is not None
        record.state = after
        if after is OutboundState.TASK:
            assert task_id is not None  # the token stays, until release_task_progress(task_id)
            record.task_id = task_id
            self._task_ids[task_id] = request_id
        else:
            self._drop_outbound(request_id, record)
        handshake = record.method == "initialize"
        if "error" in message:
            error = RequestError.from_error(message["error"])
            if handshake:
                self._move(SessionInput.RECV_INITIALIZE_ERROR)
            return [ErrorReceived(id=request_id, method=record.method, error=error)]
        result = message["result"]
        if type(result) is not dict:
            if handshake:
                self._move(SessionInput.RECV_INITIALIZE_ERROR)
            failure = RemoteProtocolError('"result" must be an object')
            return [ErrorReceived(id=request_id, method=record.method, error=failure)]
        if handshake:
            return self._receive_initialize_result(request_id, result)
        return [ResponseReceived(id=request_id, method=record.method, result=result)]

    def _receive_initialize_result(self, request_id: RequestId, result: dict[str, Any]) -> list[Event]:
        agreed = read_initialize_result(result, self.config.handshake_versions)
        if not isinstance(agreed, Agreed):
            self._move(SessionInput.RECV_INITIALIZE_ERROR)
            return [ErrorReceived(id=request_id, method="initialize", error=agreed)]
        self._move(SessionInput.RECV_INITIALIZE_RESULT)
        self.protocol_version = agreed.version
        self.era = "handshake"
        self.peer_capabilities = agreed.peer_capabilities
        self.peer_info = agreed.peer_info
        self.instructions = agreed.instructions
        self._out.append({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return [
            ResponseReceived(id=request_id, method="initialize", result=result),
            HandshakeCompleted(
                version=agreed.version,
                peer_info=self.peer_info,
                peer_capabilities=self.peer_capabilities,
                instructions=self.instructions,
            ),
        ]

    def connection_lost(self, reason: str = "connection closed") -> list[Event]:
        """The transport ended. Every request we sent fails; handlers of the peer's requests should stop.

        Returns an ``ErrorReceived`` with ``ConnectionClosed`` per pending request, then ``PeerClosed``.
        """
        self._move(SessionInput.CLOSED)
        waiting = {rid: record for rid, record in self._outbound.items() if record.state is not OutboundState.TASK}
        failed = tuple(waiting)
        events: list[Event] = [
            ErrorReceived(id=request_id, method=record.method, error=ConnectionClosed(f"Connection closed: {reason}"))
            for request_id, record in waiting.items()
        ]
        self._outbound.clear()
        self._tokens.clear()
        self._task_ids.clear()
        self._inbound.clear()
        events.append(PeerClosed(reason=reason, failed=failed))
        return events

    # ------------------------------------------------------------- sending (commands; drain outgoing() after each)

    def use_stateless(self, version: str = LATEST_STATELESS) -> None:
        """Client: speak the stateless era from now on (after ``server/discover`` succeeded)."""
        if era_of(version) != "stateless" or version not in self.config.versions:
            raise LocalProtocolError(f"{version!r} is not a stateless-era version we speak")
        self.era = "stateless"
        self.stateless_version = version

    def resume_handshake(
        self, version: str, peer_capabilities: dict[str, Any], peer_info: dict[str, Any] | None = None
    ) -> None:
        """Server: take up a handshake-era session whose ``initialize`` another worker of the
        fleet served, as it agreed (``version``, the client's capabilities and info); the
        session is READY, as after ``notifications/initialized``."""
        if version not in self.config.handshake_versions:
            raise LocalProtocolError(f"{version!r} is not a handshake-era version we speak")
        self._move(SessionInput.RESUME_HANDSHAKE)
        self.protocol_version = version
        self.peer_capabilities = dict(peer_capabilities)
        self.peer_info = dict(peer_info or {})
        self.era = "handshake"

    def stateless_meta(self, version: str | None = None) -> dict[str, Any]:
        """The ``_meta`` keys every stateless-era request carries."""
        meta = stateless_meta(version or self.stateless_version, self.config.capabilities, self.config.info)
        if self.log_level is not None:
            meta[M.LOG_LEVEL] = self.log_level
        return meta

    def send_request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        stateless_version: str | None = None,
    ) -> RequestId:
        """Queue a request and return its id; await the matching ``ResponseReceived``
        or ``ErrorReceived``. A client in the stateless era (or one that passes
        ``stateless_version``, as the discovery probe does) gets the ``_meta`` envelope added."""
        params = {} if params is None else params
        # Check the token before any state moves: a refused request must leave no trace.
        token = None
        meta = params.get("_meta")
        if type(meta) is dict and M.PROGRESS_TOKEN in meta:
            token = meta[M.PROGRESS_TOKEN]
            if not is_request_id(token):
                raise LocalProtocolError("a progress token must be a string or an integer")
            if token in self._tokens:
                raise LocalProtocolError(f"progress token {token!r} is already used by an active request")
        if method == "initialize":
            self._move(SessionInput.SEND_INITIALIZE)
        elif stateless_version is not None or self.era == "stateless":
            self._move(SessionInput.SEND_STATELESS_REQUEST)
            params = {**params, "_meta": {**params.get("_meta", {}), **self.stateless_meta(stateless_version)}}
        elif method == "ping":
            self._move(SessionInput.SEND_PING)
        else:
            self._move(SessionInput.SEND_HANDSHAKE_ERA_REQUEST)
            if self.role == "server":
                self._check_peer_declared(method, params)
        self._next_id += 1
        request_id: RequestId = self._next_id if self.id_prefix is None else f"{self.id_prefix}{self._next_id}"
        state = _SENT_INITIALIZE if method == "initialize" else _SENT
        # 2025-11-25: a task-augmented request's token may outlive its answer (see RECV_TASK_CREATED).
        asks_task = token is not None and state is _SENT and type(params.get("task")) is dict
        self._outbound[request_id] = OutboundRequest(method, state, token=token, asks_task=asks_task)
        if token is not None:
            self._tokens[token] = request_id
        self._out.append({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return request_id

    def _check_peer_declared(self, method: str, params: dict[str, Any]) -> None:
        # Not a state move: what the peer declared in its handshake, checked as data. A request
        # the agreed revision lacks (elicitation before 2025-06-18) cannot be used, declared or not.
        version = self.protocol_version
        if version is not None and (method, version, self.role) not in _SENDABLE:
            if not method_exists(method, version, self.role):
                raise MissingCapability(method.split("/")[0], f"{method} does not exist in protocol version {version}")
            _SENDABLE.add((method, version, self.role))
        if method == "elicitation/create":
            mode = params.get("mode", "form")
            require(self.peer_capabilities, f"elicitation.{mode}")
        elif method in _NEEDS_CAPABILITY:
            require(self.peer_capabilities, _NEEDS_CAPABILITY[method])
            if method == "sampling/createMessage" and params.get("tools"):
                require(self.peer_capabilities, "sampling.tools")

    def send_notification(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Queue a notification; drain ``outgoing()``."""
        self._move(SessionInput.SEND_NOTIFICATION)
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._out.append(message)

    def send_result(self, request_id: RequestId, result: dict[str, Any]) -> bool:
        """Answer the peer's request. Returns False when the answer was dropped
        because the peer had cancelled the request (nothing is sent then)."""
        record = self._finish_inbound(request_id)
        if record.state is InboundState.CANCELLED:
            return False
        if record.era == "stateless":
            result = stamp_stateless_result(result, self.config.info)
        else:
            result = handshake_result(result)
        if record.method == "initialize" and record.era == "handshake":
            self._move(SessionInput.SEND_INITIALIZE_RESULT)
            capabilities = result.get("capabilities")
            if isinstance(capabilities, dict) and "extensions" in capabilities:  # 2026-07-28's field (SEP-2133)
                result = {**result, "capabilities": {k: v for k, v in capabilities.items() if k != "extensions"}}
        self._out.append({"jsonrpc": "2.0", "id": request_id, "result": result})
        return True

    def send_error(self, request_id: RequestId, error: MCPError) -> bool:
        """Answer the peer's request with an error; False when dropped after a cancellation."""
        waiting = self._inbound.get(request_id)
        if waiting is not None and waiting.era == "stateless" and error.code == URL_ELICITATION_REQUIRED:
            # Refused before the request is forgotten, so that the caller can still answer it.
            raise LocalProtocolError("-32042 does not exist in the stateless era")
        record = self._finish_inbound(request_id)
        if record.state is InboundState.CANCELLED:
            return False
        if record.method == "initialize" and record.era == "handshake":
            self._move(SessionInput.SEND_INITIALIZE_ERROR)
        if record.era == "stateless" and error.code == RESOURCE_NOT_FOUND:
            body = error.to_error()
            body["code"] = INVALID_PARAMS
            self._out.append({"jsonrpc": "2.0", "id": request_id, "error": body})
            return True
        self._queue_error(request_id, error)
        return True

    def _finish_inbound(self, request_id: RequestId) -> InboundRequest:
        """The entry of the peer's request being answered, forgotten now; its ``state`` is the
        one it was answered in (CANCELLED: the answer is dropped)."""
        record = self._inbound.pop(request_id, None)
        if record is None:
            raise inbound_fault(InboundState.DONE, InboundInput.SEND_RESPONSE).exception(id=request_id)
        # Every state with an entry may answer (the table says so, and the state-machine test
        # checks it); the answer lands the request in DONE: no entry.
        return record

    def send_progress(
        self, request_id: RequestId, progress: float, total: float | None = None, message: str | None = None
    ) -> bool:
        """Report progress on the peer's request ``request_id``.

        Returns False (and sends nothing) when the request carried no progress
        token or was cancelled. Raises ``LocalProtocolError`` when the request is
        already answered or ``progress`` does not increase: such a value is refused
        here, never sent.
        """
        # A tool may report thousands of times a second: the legal moves are one lookup by
        # state (``_PROGRESS_MOVES``, read from the table), and the general ``move_inbound``
        # runs only to raise the fault of an illegal one.
        record = self._inbound.get(request_id)
        if record is None or (after := _PROGRESS_MOVES.get(record.state)) is None:
            move_inbound(record, InboundInput.SEND_PROGRESS, request_id)  # raises: no progress is ignored
            raise AssertionError("the tables let an illegal progress through")  # pragma: no cover
        kind = type(progress)  # a JSON number, as ``is_number`` says, inlined
        if (kind is not int and kind is not float) or (
            total is not None and type(total) is not int and type(total) is not float
        ):
            raise LocalProtocolError("progress and total must be numbers")
        token = record.token
        if token is None:
            return False
        record.state = after
        if after is _CANCELLED:
            return False
        last = record.last_progress
        if last is not None and progress <= last:
            raise LocalProtocolError(f"progress must increase: {progress} after {last}")
        record.last_progress = progress
        if total is None:
            params: dict[str, Any] = {"progressToken": token, "progress": progress}
        else:
            params = {"progressToken": token, "progress": progress, "total": total}
        if message is not None:
            params["message"] = message
        self._out.append({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})
        return True

    def cancel(self, request_id: RequestId, reason: str | None = None) -> CancelIntent | None:
        """Give up on our request ``request_id``.

        Queues a ``CancelIntent`` for the transport to express and returns it;
        a later answer is dropped. Returns None when the request already finished (one
        answered with a task loses its progress token: ``tasks/cancel`` stops the task).
        ``initialize`` cannot be cancelled (``LocalProtocolError``).
        """
        record = self._outbound.get(request_id)
        move_outbound(record, OutboundInput.SEND_CANCEL, request_id)  # initialize: raises
        if record is None:
            return None  # (DONE, SEND_CANCEL): the answer won the race; nothing to cancel
        self._drop_outbound(request_id, record)
        if record.state is OutboundState.TASK:
            return None  # answered already: nothing goes on the wire
        intent = CancelIntent(request_id=request_id, reason=reason)
        self._out.append(intent)
        return intent

    def release_task_progress(self, task_id: str) -> RequestId | None:
        """The task ``task_id`` that one of our requests created reached a terminal status, or we
        stopped following it: its progress token is freed, and later progress on it is dropped.

        Returns the id of the request that created the task, None when no token was kept for
        it (released already, or never kept). Nothing is sent. A terminal
        ``notifications/tasks/status`` from the peer releases it as well."""
        return self._release_task(task_id)

    def is_cancelled(self, request_id: RequestId) -> bool:
        """Whether the peer cancelled its request ``request_id`` (which is still being handled)."""
        record = self._inbound.get(request_id)
        return record is not None and record.state is InboundState.CANCELLED

    def forget(self, request_id: RequestId) -> None:
        """Drop our record of the peer's request without answering: its handler stopped
        (the peer cancelled it, or the transport that carried it is gone, as when an HTTP
        client closes a stateless stream). Nothing is sent.

        Every transport needs it, stdio too: a request the peer cancelled keeps its record
        (CANCELLED, so that a late answer is dropped) until its handler has stopped; the
        runtime calls this then, freeing the record and the id."""
        self._inbound.pop(request_id, None)

    def start_closing(self) -> None:
        """Refuse new requests from now on; answers to requests in flight still go out."""
        self._move(SessionInput.START_CLOSE)

    def refuse(self, request_id: RequestId, error: MCPError, *, received: bool) -> None:
        """Answer the peer's request ``request_id`` with ``error`` and forget it: the runtime's
        last resort when handling it failed unexpectedly. ``received`` says whether the
        request had become an event (then only a request still waiting is answered, never
        one answered or cancelled already) or failed while being read."""
        record = self._inbound.pop(request_id, None)
        if record is None and received:
            return  # (DONE, SEND_RESPONSE) is illegal: it was answered already
        if record is not None and record.state is InboundState.CANCELLED:
            return  # from CANCELLED an answer is dropped
        self._queue_error(request_id, error)

    def outgoing(self) -> list[Outgoing]:
        """Take everything queued to send, in order. Write dicts as JSON-RPC
        messages; express each ``CancelIntent`` the transport's way."""
        out, self._out = self._out, []
        return out


def _created_task(result: Any) -> str | None:
    """The id of the task a 2025-11-25 ``CreateTaskResult`` made, while it is ``working`` or
    ``input_required`` (its progress token stays valid until a terminal status: progress.mdx)."""
    task = result.get("task") if isinstance(result, dict) else None
    if not isinstance(task, dict):
        return None
    task_id, status = task.get("taskId"), task.get("status")
    if type(task_id) is not str or not task_id or status not in ("working", "input_required"):
        return None
    return task_id


def _terminal(status: Any) -> bool:
    return type(status) is str and status in TERMINAL_STATUSES
