"""Wiring for sans-IO session tests: build sessions, pass messages across, run the handshake."""

from __future__ import annotations

from typing import Any

from backchannel.protocol.events import CancelIntent, Event, HandshakeCompleted, Outgoing
from backchannel.protocol.session import Session, SessionConfig
from backchannel.types import meta as M

CLIENT_INFO = {"name": "test-client", "version": "1.0"}
SERVER_INFO = {"name": "test-server", "version": "2.0"}
SERVER_CAPS = {"tools": {"listChanged": True}}


def client_session(capabilities: dict[str, Any] | None = None) -> Session:
    return Session(SessionConfig("client", info=CLIENT_INFO, capabilities=capabilities or {}))


def server_session() -> Session:
    return Session(SessionConfig("server", info=SERVER_INFO, capabilities=SERVER_CAPS))


def wire(items: list[Outgoing]) -> list[dict[str, Any]]:
    """What a stdio transport writes: dicts as they are, cancel intents as notifications."""
    return [item.as_notification() if isinstance(item, CancelIntent) else item for item in items]


def deliver(sender: Session, receiver: Session) -> list[Event]:
    """Drain ``sender`` and feed everything to ``receiver``; return the receiver's events."""
    events: list[Event] = []
    for message in wire(sender.outgoing()):
        events.extend(receiver.receive_message(message))
    return events


def initialize_params(version: str = "2025-11-25", capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "capabilities": capabilities if capabilities is not None else {},
        "clientInfo": CLIENT_INFO,
    }


def initialize_result(version: str) -> dict[str, Any]:
    return {"protocolVersion": version, "capabilities": SERVER_CAPS, "serverInfo": SERVER_INFO}


def handshake(client_caps: dict[str, Any] | None = None, version: str = "2025-11-25") -> tuple[Session, Session]:
    """A client and a server that finished ``initialize``; both queues are empty."""
    client, server = client_session(client_caps), server_session()
    client.send_request("initialize", initialize_params(version, client_caps))
    (request,) = deliver(client, server)
    server.send_result(request.id, initialize_result(request.version))  # type: ignore[union-attr]
    client_events = deliver(server, client)
    server_events = deliver(client, server)
    assert isinstance(client_events[-1], HandshakeCompleted)
    assert isinstance(server_events[-1], HandshakeCompleted)
    assert client.outgoing() == [] and server.outgoing() == []
    return client, server


def stateless_meta(version: Any = "2026-07-28", capabilities: Any = None, **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {M.PROTOCOL_VERSION: version, M.CLIENT_INFO: CLIENT_INFO}
    if capabilities is not None:
        meta[M.CLIENT_CAPABILITIES] = capabilities
    meta.update(extra)
    return meta


def request(request_id: Any, method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def tables_empty(session: Session) -> bool:
    return session.pending_inbound == 0 and session.pending_outbound == 0 and session.active_progress_tokens == 0
