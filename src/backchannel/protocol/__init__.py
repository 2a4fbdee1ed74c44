"""The sans-IO core: one MCP session, client or server, with no I/O (as h11 is for HTTP).

Build a ``Session(SessionConfig(role))``, feed it every decoded message with
``receive_message`` and act on the events it returns, speak with its ``send_*``
commands, and drain ``outgoing()`` to write. Every move, legal or not, is in
``states``; the events are in ``events``; capabilities are checked with ``has`` and
``require``.

The two protocol eras are named as in the docs, the values of ``Era``: ``"handshake"``
(``initialize``, 2025-11-25 and older) and ``"stateless"`` (2026-07-28, version and
capabilities in every request's ``_meta``).

This package imports only ``types`` and the standard library: no event loop, no
clock, no filesystem (``tests/protocol/test_sans_io.py`` checks it).
"""

from __future__ import annotations

__all__ = [
    "CancelIntent",
    "CancelRequested",
    "ErrorReceived",
    "Event",
    "HandshakeCompleted",
    "NotificationReceived",
    "Outgoing",
    "PeerClosed",
    "ProgressReceived",
    "RequestId",
    "RequestReceived",
    "ResponseReceived",
    "Role",
    "Session",
    "SessionConfig",
    "SessionState",
    "has",
    "require",
]

from .capabilities import has, require
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
from .session import Session, SessionConfig
from .states import Role, SessionState
