"""The receiving half of the session: every message from the peer becomes events.

``Receiving.receive_message`` classifies one decoded JSON value (``shapes.py``), moves
the session and the request it concerns through the tables (``states.py``), and
returns what happened as events; a malformed message is answered with its JSON-RPC
error in the outgoing queue instead. ``Session`` is where to use it.
"""

from __future__ import annotations

__all__ = ["Receiving"]

from typing import Any

from ..types import meta as M
from ..types.errors import ConnectionClosed, InvalidParams, MCPError, RemoteProtocolError, RequestError
from ..types.ids import is_request_id
from ..types.tasks import TERMINAL_STATUSES
from ..types.versions import HANDSHAKE_VERSIONS
from .envelope import read_stateless_meta
from .events import (
    CancelRequested,
    ErrorReceived,
    Event,
    HandshakeCompleted,
    NotificationReceived,
    PeerClosed,
    ProgressReceived,
    RequestId,
    RequestReceived,
    ResponseReceived,
)
from .handshake import Agreed, read_initialize_params, read_initialize_result
from .requests import InboundRequest, move_inbound, move_outbound
from .session_base import SessionBase, is_number
from .shapes import Shape, classify
from .states import INBOUND_TRANSITIONS, InboundInput, InboundState, OutboundInput, OutboundState, SessionInput

#: Where the peer's requests start when their id is free.
_BEGIN = {
    action: INBOUND_TRANSITIONS[InboundState.DONE, action]
    for action in (InboundInput.RECV_REQUEST, InboundInput.RECV_INITIALIZE)
}


class Receiving(SessionBase):
    """What the session does with the peer's messages; part of ``Session``."""

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
