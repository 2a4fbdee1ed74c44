"""The sending half of the session: the commands that speak to the peer.

Each ``send_*`` command checks the move against the tables (``states.py``), updates
the records, and queues the message; ``outgoing()`` hands the queue over to be
written. Which response or stream a message travels on is the runtime's business,
not the session's: the caller of each command knows which of the peer's requests it
concerns. ``Session`` is where to use it.
"""

from __future__ import annotations

__all__ = ["Sending"]

from typing import Any

from ..types import meta as M
from ..types.errors import (
    INVALID_PARAMS,
    RESOURCE_NOT_FOUND,
    URL_ELICITATION_REQUIRED,
    LocalProtocolError,
    MCPError,
    MissingCapability,
)
from ..types.ids import is_request_id
from ..types.methods import exists as method_exists
from ..types.versions import LATEST_STATELESS, era_of
from .capabilities import require
from .envelope import handshake_result, stamp_stateless_result, stateless_meta
from .events import CancelIntent, Outgoing, RequestId
from .requests import InboundRequest, OutboundRequest, move_inbound, move_outbound
from .session_base import SessionBase
from .states import (
    INBOUND_TRANSITIONS,
    OUTBOUND_TRANSITIONS,
    InboundInput,
    InboundState,
    OutboundInput,
    OutboundState,
    SessionInput,
    inbound_fault,
)

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


class Sending(SessionBase):
    """The session's commands; part of ``Session``. Drain ``outgoing()`` after each."""

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
