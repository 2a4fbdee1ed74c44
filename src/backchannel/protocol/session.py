"""The sans-IO MCP session: JSON values in, events out, messages to send.

Feed every decoded message to ``receive_message`` and act on the events it
returns; call the ``send_*`` commands to speak; then drain ``outgoing()`` and
write what it holds. The session never reads a clock or touches a socket, so a
test drives it with plain dicts.

One session serves both protocol eras. A handshake-era peer opens with
``initialize``; a stateless-era request carries its version and capabilities in
``params._meta`` and is served on its own, whatever the session's state.
"""

from __future__ import annotations

__all__ = ["Role", "Session", "SessionConfig"]

from dataclasses import dataclass, field
from typing import Any, Literal

from ..types import meta as M
from ..types.errors import (
    INVALID_PARAMS,
    RESOURCE_NOT_FOUND,
    URL_ELICITATION_REQUIRED,
    ConnectionClosed,
    InvalidParams,
    InvalidRequest,
    LocalProtocolError,
    MCPError,
    RemoteProtocolError,
    RequestError,
    UnsupportedProtocolVersion,
)
from ..types.versions import (
    LATEST_MODERN,
    LEGACY_VERSIONS,
    VERSIONS,
    Era,
    era_of,
    negotiate_legacy,
    newer_first,
)
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
from .states import (
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

Role = Literal["client", "server"]

#: Server-to-client requests and the client capability each one needs.
_NEEDS_CAPABILITY = {
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
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
        return tuple(v for v in self.versions if era_of(v) == "legacy")


@dataclass(slots=True)
class _Inbound:
    method: str
    era: Era
    state: InboundState = InboundState.ACTIVE
    token: int | str | None = None
    last_progress: float | None = None


@dataclass(slots=True)
class _Outbound:
    method: str
    state: OutboundState = OutboundState.SENT
    token: int | str | None = None
    last_progress: float | None = None
    related: RequestId | None = None  # the peer's request this one was sent on behalf of


def _valid_id(value: object) -> bool:
    # bool is an int subclass, and JSON `true` is no request id.
    kind = type(value)
    return kind is str or kind is int


def _valid_token(value: object) -> bool:
    return _valid_id(value)


def _is_number(value: object) -> bool:
    return type(value) in (int, float)


class Session:
    """One end of an MCP connection, client or server, with no I/O."""

    def __init__(self, config: SessionConfig) -> None:
        self.config = config
        self.role: Role = config.role
        self.state = SessionState.NEW
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
        self._inbound: dict[RequestId, _Inbound] = {}
        self._outbound: dict[RequestId, _Outbound] = {}
        self._tokens: dict[int | str, RequestId] = {}
        self._next_id = 0

    # ------------------------------------------------------------------ state

    def _move(self, action: SessionInput) -> None:
        try:
            self.state = SESSION_TRANSITIONS[self.state, action]
        except KeyError:
            message = f"cannot {action.value} while the session is {self.state.value}"
            if who_is_at_fault(action) == "remote":
                raise RemoteProtocolError(message) from None
            raise LocalProtocolError(message) from None

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
        if type(message) is not dict:
            if isinstance(message, list):
                self._queue_error(None, InvalidRequest("JSON-RPC batches are not supported"))
            else:
                self._queue_error(None, InvalidRequest("a JSON-RPC message must be an object"))
            return []
        if message.get("jsonrpc") != "2.0":
            self._queue_error(_id_or_none(message), InvalidRequest('"jsonrpc" must be "2.0"'))
            return []
        method = message.get("method")
        if method is not None:
            params = message.get("params")
            if params is None:
                params = {}
            elif type(params) is not dict:
                if "id" in message:
                    self._queue_error(_id_or_none(message), InvalidParams('"params" must be an object'))
                return []
            if type(method) is not str:
                self._queue_error(_id_or_none(message), InvalidRequest('"method" must be a string'))
                return []
            if "id" in message:
                request_id = message["id"]
                if not _valid_id(request_id):
                    self._queue_error(None, InvalidRequest('"id" must be a string or an integer'))
                    return []
                try:
                    return self._receive_request(request_id, method, params)
                except MCPError as exc:
                    self._queue_error(request_id, exc)
                    return []
            return self._receive_notification(method, params)
        if "id" in message and ("result" in message or "error" in message):
            return self._receive_response(message)
        self._queue_error(_id_or_none(message), InvalidRequest("not a request, notification or response"))
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
            return
        if record is not None and record.state is InboundState.CANCELLED:
            return
        self._queue_error(request_id, error)

    def _receive_request(self, request_id: RequestId, method: str, params: dict[str, Any]) -> list[Event]:
        if request_id in self._inbound:
            raise InvalidRequest(f"request id {request_id!r} is already in use by a request in flight")
        if self.state in (SessionState.CLOSING, SessionState.CLOSED):
            raise InvalidRequest("the session is closing")
        meta = params.get("_meta")
        token = None
        if type(meta) is dict:
            token = meta.get(M.PROGRESS_TOKEN)
            if token is not None and not _valid_token(token):
                raise InvalidParams("_meta.progressToken must be a string or an integer")
            # The envelope decides the era, even for `initialize` (which 2026-07-28 does not have).
            if M.PROTOCOL_VERSION in meta:
                event = self._modern_request(request_id, method, params, meta)
                self._inbound[request_id] = _Inbound(method, "modern", token=token)
                return [event]
        elif meta is not None:
            raise InvalidParams('"_meta" must be an object')

        if method == "initialize":
            if self.role != "server":
                raise InvalidRequest("only a server answers initialize")
            self._move(SessionInput.RECV_INITIALIZE)
            version = params.get("protocolVersion")
            if type(version) is not str:
                self.state = SessionState.NEW
                raise InvalidParams("initialize: protocolVersion must be a string")
            capabilities = params.get("capabilities", {})
            if type(capabilities) is not dict:
                self.state = SessionState.NEW
                raise InvalidParams("initialize: capabilities must be an object")
            client_info = params.get("clientInfo", {})
            self.protocol_version = negotiate_legacy(version, self.config.legacy_versions)
            self.peer_capabilities = capabilities
            self.peer_info = client_info if type(client_info) is dict else {}
            self.era = "legacy"
        elif method == "ping":
            self._move(SessionInput.RECV_PING)
        elif self.state is SessionState.NEW and self.role == "server":
            raise InvalidRequest(
                f"received {method} before initialize: send initialize first, "
                f"or put {M.PROTOCOL_VERSION} in params._meta for a stateless request"
            )
        else:
            self._move(SessionInput.RECV_LEGACY_REQUEST)
        self._inbound[request_id] = _Inbound(method, "legacy", token=token)
        return [
            RequestReceived(
                request_id,
                method,
                params,
                "legacy",
                self.protocol_version,
                self.peer_capabilities,
                self.peer_info,
            )
        ]

    def _modern_request(
        self, request_id: RequestId, method: str, params: dict[str, Any], meta: dict[str, Any]
    ) -> RequestReceived:
        if self.role != "server":
            raise InvalidRequest("servers of the stateless era send no requests")
        envelope = read_modern_meta(meta, self.config.versions)
        self._move(SessionInput.RECV_MODERN_REQUEST)
        return RequestReceived(
            request_id,
            method,
            params,
            "modern",
            envelope.version,
            envelope.client_capabilities,
            envelope.client_info,
            envelope.log_level,
        )

    def _receive_notification(self, method: str, params: dict[str, Any]) -> list[Event]:
        if method == "notifications/cancelled":
            return self._receive_cancel(params)
        if method == "notifications/progress":
            return self._receive_progress(params)
        if method == "notifications/initialized":
            # A client that pipelines `initialized` right behind `initialize` is early, not wrong:
            # the handshake completes, and the initialize result still goes out (READY allows it).
            if self.role == "server" and self.state in (SessionState.INITIALIZING, SessionState.CLOSING):
                self._move(SessionInput.RECV_INITIALIZED)
                return [
                    HandshakeCompleted(
                        self.protocol_version or LEGACY_VERSIONS[-1],
                        self.peer_info,
                        self.peer_capabilities,
                    )
                ]
            # A stray `initialized` is harmless; notifications get no error response.
            return []
        return [NotificationReceived(method, params)]

    def _receive_cancel(self, params: dict[str, Any]) -> list[Event]:
        request_id = params.get("requestId")
        record = self._inbound.get(request_id) if _valid_id(request_id) else None  # type: ignore[arg-type]
        # Unknown, finished or uncancellable requests: the spec says ignore.
        if record is None or record.method == "initialize" or record.state is InboundState.CANCELLED:
            return []
        record.state = INBOUND_TRANSITIONS[record.state, InboundInput.RECV_CANCEL]
        reason = params.get("reason")
        return [CancelRequested(request_id, reason if isinstance(reason, str) else None)]  # type: ignore[arg-type]

    def _receive_progress(self, params: dict[str, Any]) -> list[Event]:
        token = params.get("progressToken")
        progress = params.get("progress")
        if not _valid_token(token) or not _is_number(progress):
            return []
        request_id = self._tokens.get(token)  # type: ignore[arg-type]
        if request_id is None:
            return []  # late or unknown: the request already finished
        record = self._outbound[request_id]
        if record.last_progress is not None and progress <= record.last_progress:  # type: ignore[operator]
            return []  # the peer broke monotonicity; a notification cannot be answered, so drop it
        record.last_progress = progress
        total = params.get("total")
        message = params.get("message")
        return [
            ProgressReceived(
                request_id,
                token,  # type: ignore[arg-type]
                progress,  # type: ignore[arg-type]
                total if _is_number(total) else None,
                message if isinstance(message, str) else None,
            )
        ]

    def _receive_response(self, message: dict[str, Any]) -> list[Event]:
        request_id = message["id"]
        record = self._outbound.pop(request_id, None) if _valid_id(request_id) else None
        if record is None:
            return []  # a late answer to a request we abandoned, or a stray: nothing to do either way
        record.state = OUTBOUND_TRANSITIONS[record.state, OutboundInput.RECV_RESPONSE]
        if record.token is not None:
            self._tokens.pop(record.token, None)
        if "error" in message:
            error = RequestError.from_error(message["error"])
            if record.method == "initialize":
                self._move(SessionInput.RECV_INITIALIZE_ERROR)
            return [ErrorReceived(request_id, record.method, error)]
        result = message["result"]
        if type(result) is not dict:
            if record.method == "initialize":
                self._move(SessionInput.RECV_INITIALIZE_ERROR)
            return [ErrorReceived(request_id, record.method, RemoteProtocolError('"result" must be an object'))]
        if record.method == "initialize":
            return self._receive_initialize_result(request_id, result)
        return [ResponseReceived(request_id, record.method, result)]

    def _receive_initialize_result(self, request_id: RequestId, result: dict[str, Any]) -> list[Event]:
        version = result.get("protocolVersion")
        if version not in self.config.legacy_versions:
            self._move(SessionInput.RECV_INITIALIZE_ERROR)
            error = UnsupportedProtocolVersion(version, newer_first(self.config.legacy_versions))
            error.message = f"the server offered protocol version {version!r}, which this client does not speak"
            return [ErrorReceived(request_id, "initialize", error)]
        self._move(SessionInput.RECV_INITIALIZE_RESULT)
        self.protocol_version = version
        self.era = "legacy"
        capabilities = result.get("capabilities")
        info = result.get("serverInfo")
        instructions = result.get("instructions")
        self.peer_capabilities = capabilities if type(capabilities) is dict else {}
        self.peer_info = info if type(info) is dict else {}
        self.instructions = instructions if isinstance(instructions, str) else None
        self._emit({"jsonrpc": "2.0", "method": "notifications/initialized"}, None)
        return [
            ResponseReceived(request_id, "initialize", result),
            HandshakeCompleted(version, self.peer_info, self.peer_capabilities, self.instructions),
        ]

    def connection_lost(self, reason: str = "connection closed") -> list[Event]:
        """The transport ended. Every request we sent fails; handlers of the peer's requests should stop.

        Returns an ``ErrorReceived`` with ``ConnectionClosed`` per pending request, then ``PeerClosed``.
        """
        self._move(SessionInput.CLOSED)
        failed = tuple(self._outbound)
        events: list[Event] = [
            ErrorReceived(request_id, record.method, ConnectionClosed(f"Connection closed: {reason}"))
            for request_id, record in self._outbound.items()
        ]
        self._outbound.clear()
        self._tokens.clear()
        self._inbound.clear()
        events.append(PeerClosed(reason, failed))
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
        modern = modern_version is not None or (self.era == "modern" and method != "initialize")
        # Check the token before any state moves: a refused request must leave no trace.
        token = None
        meta = params.get("_meta")
        if type(meta) is dict and M.PROGRESS_TOKEN in meta:
            token = meta[M.PROGRESS_TOKEN]
            if not _valid_token(token):
                raise LocalProtocolError("a progress token must be a string or an integer")
            if token in self._tokens:
                raise LocalProtocolError(f"progress token {token!r} is already used by an active request")
        if method == "initialize":
            if self.role != "client":
                raise LocalProtocolError("only a client sends initialize")
            self._move(SessionInput.SEND_INITIALIZE)
        elif modern:
            if self.role != "client":
                raise LocalProtocolError("servers of the stateless era send no requests")
            self._move(SessionInput.SEND_MODERN_REQUEST)
            params = {**params, "_meta": {**params.get("_meta", {}), **self.modern_meta(modern_version)}}
        elif method == "ping":
            self._move(SessionInput.SEND_PING)
        else:
            self._move(SessionInput.SEND_LEGACY_REQUEST)
            if self.role == "server":
                self._check_peer_declared(method, params)
        self._next_id += 1
        request_id = self._next_id
        self._outbound[request_id] = _Outbound(method, token=token, related=related)
        if token is not None:
            self._tokens[token] = request_id
        self._emit({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}, related)
        return request_id

    def _check_peer_declared(self, method: str, params: dict[str, Any]) -> None:
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
        if self.state is SessionState.CLOSED:
            raise LocalProtocolError("the session is closed")
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

    def _finish_inbound(self, request_id: RequestId) -> _Inbound:
        record = self._inbound.pop(request_id, None)
        if record is None:
            raise LocalProtocolError(f"no request {request_id!r} is waiting for an answer")
        record.state = INBOUND_TRANSITIONS[record.state, InboundInput.SEND_RESPONSE]
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
        if record is None:
            raise LocalProtocolError(f"progress for request {request_id!r} after its response")
        if not _is_number(progress) or (total is not None and not _is_number(total)):
            raise LocalProtocolError("progress and total must be numbers")
        if record.token is None:
            return False
        record.state = INBOUND_TRANSITIONS[record.state, InboundInput.SEND_PROGRESS]
        if record.state is InboundState.CANCELLED:
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
        ``initialize`` cannot be cancelled.
        """
        record = self._outbound.get(request_id)
        if record is None:
            return None
        if record.method == "initialize":
            raise LocalProtocolError("initialize cannot be cancelled")
        record.state = OUTBOUND_TRANSITIONS[record.state, OutboundInput.SEND_CANCEL]
        del self._outbound[request_id]
        if record.token is not None:
            self._tokens.pop(record.token, None)
        intent = CancelIntent(request_id, reason)
        self._emit(intent, record.related)
        return intent

    def is_cancelled(self, request_id: RequestId) -> bool:
        """Whether the peer cancelled its request ``request_id`` (which is still being handled)."""
        record = self._inbound.get(request_id)
        return record is not None and record.state is InboundState.CANCELLED

    def forget(self, request_id: RequestId) -> None:
        """Drop our record of the peer's request without answering (the transport
        that carried it is gone, as when an HTTP client closes a stateless stream)."""
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


def _id_or_none(message: dict[str, Any]) -> RequestId | None:
    request_id = message.get("id")
    return request_id if _valid_id(request_id) else None
