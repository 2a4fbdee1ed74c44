"""The sans-IO MCP session: JSON values in, events out, messages to send.

Feed every decoded message to ``receive_message`` and act on the events it
returns; call the ``send_*`` commands to speak; then drain ``outgoing()`` and
write what it holds. The session never reads a clock or touches a socket, so a
test drives it with plain dicts.

One session serves both protocol eras. A handshake-era peer opens with
``initialize``; a stateless-era request carries its version and capabilities in
``params._meta`` and is served on its own, whatever the session's state. (In code
the eras are the values of ``Era``: ``"legacy"`` is the handshake era, ``"modern"``
the stateless era.)

Every state move, legal or not, is read from the tables in ``states.py``; the
shape of each message from ``shapes.py``; the ``initialize`` exchange from
``handshake.py``.
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
    RemoteProtocolError,
    RequestError,
)
from ..types.ids import is_request_id
from ..types.versions import LATEST_MODERN, LEGACY_VERSIONS, VERSIONS, Era, era_of
from .capabilities import require
from .envelope import legacy_result, modern_meta, read_modern_meta, stamp_modern_result
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

#: Server-to-client requests and the client capability each one needs.
_NEEDS_CAPABILITY = {
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}

_DONE_IN = InboundState.DONE
_DONE_OUT = OutboundState.DONE
#: Where our requests start (our ids are fresh, so the move from DONE is always legal).
_SENT = OUTBOUND_TRANSITIONS[_DONE_OUT, OutboundInput.SEND_REQUEST]
_SENT_INITIALIZE = OUTBOUND_TRANSITIONS[_DONE_OUT, OutboundInput.SEND_INITIALIZE]
#: Where the peer's requests start when their id is free.
_BEGIN = {
    action: INBOUND_TRANSITIONS[_DONE_IN, action]
    for action in (InboundInput.RECV_REQUEST, InboundInput.RECV_INITIALIZE)
}


@dataclass(frozen=True, slots=True)
class SessionConfig:
    """Who we are: ``info`` and ``capabilities`` are sent in ``initialize`` (client) or
    used to stamp stateless-era results (server, ``info`` only)."""

    role: Role
    info: dict[str, Any] = field(default_factory=lambda: {"name": "backchannel", "version": "0"})
    capabilities: dict[str, Any] = field(default_factory=dict)
    versions: tuple[str, ...] = VERSIONS

    @property
    def legacy_versions(self) -> tuple[str, ...]:
        """The handshake-era versions among ``versions``."""
        return tuple(v for v in self.versions if era_of(v) == "legacy")


def _is_number(value: object) -> bool:
    return type(value) in (int, float)


class Session:
    """One end of an MCP connection, client or server, with no I/O."""

    def __init__(self, config: SessionConfig) -> None:
        self.config = config
        self.role: Role = config.role
        self.state = SessionState.NEW
        self._transitions = SESSION_TRANSITIONS[config.role]
        #: The handshake-era version once ``initialize`` settled it.
        self.protocol_version: str | None = None
        #: The era a client chose (``use_modern`` or the handshake); None until then.
        self.era: Era | None = None
        self.modern_version: str = LATEST_MODERN
        self.peer_info: dict[str, Any] = {}
        self.peer_capabilities: dict[str, Any] = {}
        self.instructions: str | None = None
        #: Client, stateless era: the log level put in every request's ``_meta`` (None: no logs).
        self.log_level: str | None = None
        self._out: list[Outgoing] = []
        #: For each item of ``_out``, the peer's request it belongs to (HTTP routes by it).
        self._related: list[RequestId | None] = []
        self._inbound: dict[RequestId, InboundRequest] = {}
        self._outbound: dict[RequestId, OutboundRequest] = {}
        self._tokens: dict[int | str, RequestId] = {}
        self._next_id = 0

    # ------------------------------------------------------------------ state

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
        after = self._next_state(action)
        if after is not None:
            self.state = after

    @property
    def pending_inbound(self) -> int:
        return len(self._inbound)

    @property
    def pending_outbound(self) -> int:
        return len(self._outbound)

    @property
    def active_progress_tokens(self) -> int:
        return len(self._tokens)

    # -------------------------------------------------------------- receiving

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
            envelope = read_modern_meta(meta, self.config.versions)
            self.state = after
            self._inbound[request_id] = InboundRequest(method, "modern", begun, token)
            return [
                RequestReceived(
                    id=request_id,
                    method=method,
                    params=params,
                    era="modern",
                    version=envelope.version,
                    client_capabilities=envelope.client_capabilities,
                    client_info=envelope.client_info,
                    log_level=envelope.log_level,
                )
            ]
        if action is SessionInput.RECV_INITIALIZE:
            agreed = read_initialize_params(params, self.config.legacy_versions)
            self.protocol_version = agreed.version
            self.peer_capabilities = agreed.peer_capabilities
            self.peer_info = agreed.peer_info
            self.era = "legacy"
        self.state = after
        self._inbound[request_id] = InboundRequest(method, "legacy", begun, token)
        return [
            RequestReceived(
                id=request_id,
                method=method,
                params=params,
                era="legacy",
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
                    version=self.protocol_version or LEGACY_VERSIONS[-1],
                    peer_info=self.peer_info,
                    peer_capabilities=self.peer_capabilities,
                )
            ]
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
        if not is_request_id(token) or not _is_number(progress):
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
                total=total if _is_number(total) else None,
                message=message if isinstance(message, str) else None,
            )
        ]

    def _receive_response(self, message: dict[str, Any]) -> list[Event]:
        request_id = message["id"]
        record = self._outbound.pop(request_id, None) if is_request_id(request_id) else None
        after = move_outbound(record, OutboundInput.RECV_RESPONSE, request_id)
        if after is None:
            return []  # a late answer to a request we cancelled, or a stray: nothing to do either way
        assert record is not None
        record.state = after
        if record.token is not None:
            self._tokens.pop(record.token, None)
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
        agreed = read_initialize_result(result, self.config.legacy_versions)
        if not isinstance(agreed, Agreed):
            self._move(SessionInput.RECV_INITIALIZE_ERROR)
            return [ErrorReceived(id=request_id, method="initialize", error=agreed)]
        self._move(SessionInput.RECV_INITIALIZE_RESULT)
        self.protocol_version = agreed.version
        self.era = "legacy"
        self.peer_capabilities = agreed.peer_capabilities
        self.peer_info = agreed.peer_info
        self.instructions = agreed.instructions
        self._emit({"jsonrpc": "2.0", "method": "notifications/initialized"}, None)
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
        failed = tuple(self._outbound)
        events: list[Event] = [
            ErrorReceived(id=request_id, method=record.method, error=ConnectionClosed(f"Connection closed: {reason}"))
            for request_id, record in self._outbound.items()
        ]
        self._outbound.clear()
        self._tokens.clear()
        self._inbound.clear()
        events.append(PeerClosed(reason=reason, failed=failed))
        return events

    # ---------------------------------------------------------------- sending

    def use_modern(self, version: str = LATEST_MODERN) -> None:
        """Client: speak the stateless era from now on (after ``server/discover`` succeeded)."""
        if era_of(version) != "modern" or version not in self.config.versions:
            raise LocalProtocolError(f"{version!r} is not a stateless-era version we speak")
        self.era = "modern"
        self.modern_version = version

    def modern_meta(self, version: str | None = None) -> dict[str, Any]:
        """The ``_meta`` keys every stateless-era request carries."""
        meta = modern_meta(version or self.modern_version, self.config.capabilities, self.config.info)
        if self.log_level is not None:
            meta[M.LOG_LEVEL] = self.log_level
        return meta

    def send_request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        modern_version: str | None = None,
        related: RequestId | None = None,
    ) -> RequestId:
        """Queue a request and return its id; await the matching ``ResponseReceived``
        or ``ErrorReceived``. A client in the stateless era (or one that passes
        ``modern_version``, as the discovery probe does) gets the ``_meta`` envelope added.
        ``related`` names the peer's request this one serves (a server asking the user
        mid-tool-call), so HTTP can send it on that request's stream."""
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
        elif modern_version is not None or self.era == "modern":
            self._move(SessionInput.SEND_STATELESS_REQUEST)
            params = {**params, "_meta": {**params.get("_meta", {}), **self.modern_meta(modern_version)}}
        elif method == "ping":
            self._move(SessionInput.SEND_PING)
        else:
            self._move(SessionInput.SEND_HANDSHAKE_ERA_REQUEST)
            if self.role == "server":
                self._check_peer_declared(method, params)
        self._next_id += 1
        request_id = self._next_id
        state = _SENT_INITIALIZE if method == "initialize" else _SENT
        self._outbound[request_id] = OutboundRequest(method, state, token=token, related=related)
        if token is not None:
            self._tokens[token] = request_id
        self._emit({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}, related)
        return request_id

    def _check_peer_declared(self, method: str, params: dict[str, Any]) -> None:
        # Not a state move: what the peer declared in its handshake, checked as data.
        if method == "elicitation/create":
            mode = params.get("mode", "form")
            require(self.peer_capabilities, f"elicitation.{mode}")
        elif method in _NEEDS_CAPABILITY:
            require(self.peer_capabilities, _NEEDS_CAPABILITY[method])
            if method == "sampling/createMessage" and params.get("tools"):
                require(self.peer_capabilities, "sampling.tools")

    def send_notification(
        self, method: str, params: dict[str, Any] | None = None, *, related: RequestId | None = None
    ) -> None:
        """Queue a notification; drain ``outgoing()``."""
        self._move(SessionInput.SEND_NOTIFICATION)
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._emit(message, related)

    def send_result(self, request_id: RequestId, result: dict[str, Any]) -> bool:
        """Answer the peer's request. Returns False when the answer was dropped
        because the peer had cancelled the request (nothing is sent then)."""
        record = self._finish_inbound(request_id)
        if record.state is InboundState.CANCELLED:
            return False
        result = stamp_modern_result(result, self.config.info) if record.era == "modern" else legacy_result(result)
        if record.method == "initialize" and record.era == "legacy":
            self._move(SessionInput.SEND_INITIALIZE_RESULT)
        self._emit({"jsonrpc": "2.0", "id": request_id, "result": result}, request_id)
        return True

    def send_error(self, request_id: RequestId, error: MCPError) -> bool:
        """Answer the peer's request with an error; False when dropped after a cancellation."""
        waiting = self._inbound.get(request_id)
        if waiting is not None and waiting.era == "modern" and error.code == URL_ELICITATION_REQUIRED:
            # Refused before the request is forgotten, so that the caller can still answer it.
            raise LocalProtocolError("-32042 does not exist in the stateless era")
        record = self._finish_inbound(request_id)
        if record.state is InboundState.CANCELLED:
            return False
        if record.method == "initialize" and record.era == "legacy":
            self._move(SessionInput.SEND_INITIALIZE_ERROR)
        if record.era == "modern" and error.code == RESOURCE_NOT_FOUND:
            body = error.to_error()
            body["code"] = INVALID_PARAMS
            self._emit({"jsonrpc": "2.0", "id": request_id, "error": body}, request_id)
            return True
        self._queue_error(request_id, error)
        return True

    def _finish_inbound(self, request_id: RequestId) -> InboundRequest:
        """The entry of the peer's request being answered, forgotten now; its ``state`` is the
        one it was answered in (CANCELLED: the answer is dropped)."""
        record = self._inbound.pop(request_id, None)
        if record is None:
            raise inbound_fault(_DONE_IN, InboundInput.SEND_RESPONSE).exception(id=request_id)
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
        record = self._inbound.get(request_id)
        after = move_inbound(record, InboundInput.SEND_PROGRESS, request_id)
        assert record is not None and after is not None  # (no progress is ignored: an illegal one raises)
        if not _is_number(progress) or (total is not None and not _is_number(total)):
            raise LocalProtocolError("progress and total must be numbers")
        if record.token is None:
            return False
        record.state = after
        if after is InboundState.CANCELLED:
            return False
        if record.last_progress is not None and progress <= record.last_progress:
            raise LocalProtocolError(f"progress must increase: {progress} after {record.last_progress}")
        record.last_progress = progress
        params: dict[str, Any] = {"progressToken": record.token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        self._emit({"jsonrpc": "2.0", "method": "notifications/progress", "params": params}, request_id)
        return True

    def cancel(self, request_id: RequestId, reason: str | None = None) -> CancelIntent | None:
        """Give up on our request ``request_id``.

        Queues a ``CancelIntent`` for the transport to express and returns it;
        a later answer is dropped. Returns None when the request already finished.
        ``initialize`` cannot be cancelled (``LocalProtocolError``).
        """
        record = self._outbound.get(request_id)
        move_outbound(record, OutboundInput.SEND_CANCEL, request_id)  # initialize: raises
        if record is None:
            return None  # (DONE, SEND_CANCEL): the answer won the race; nothing to cancel
        del self._outbound[request_id]
        if record.token is not None:
            self._tokens.pop(record.token, None)
        intent = CancelIntent(request_id=request_id, reason=reason)
        self._emit(intent, record.related)
        return intent

    def is_cancelled(self, request_id: RequestId) -> bool:
        """Whether the peer cancelled its request ``request_id`` (which is still being handled)."""
        record = self._inbound.get(request_id)
        return record is not None and record.state is InboundState.CANCELLED

    def forget(self, request_id: RequestId) -> None:
        """Drop our record of the peer's request without answering: its handler stopped
        (the peer cancelled it, or the transport that carried it is gone, as when an HTTP
        client closes a stateless stream). Nothing is sent."""
        self._inbound.pop(request_id, None)

    def start_closing(self) -> None:
        """Refuse new requests from now on; answers to requests in flight still go out."""
        self._move(SessionInput.START_CLOSE)

    def outgoing(self) -> list[Outgoing]:
        """Take everything queued to send, in order. Write dicts as JSON-RPC
        messages; express each ``CancelIntent`` the transport's way."""
        out, self._out = self._out, []
        self._related = []
        return out

    def outgoing_routed(self) -> list[tuple[Outgoing, RequestId | None]]:
        """Like ``outgoing()``, with the id of the peer's request each item belongs to
        (None for items tied to no request), for transports that route by request."""
        routed = list(zip(self._out, self._related, strict=True))
        self._out, self._related = [], []
        return routed

    def _queue_error(self, request_id: RequestId | None, error: MCPError) -> None:
        self._emit({"jsonrpc": "2.0", "id": request_id, "error": error.to_error()}, request_id)

    def _emit(self, item: Outgoing, related: RequestId | None) -> None:
        self._out.append(item)
        self._related.append(related)
