"""Plumbing for the operation-lifecycle tests (issue #6), on ``backchannel.testing``: a
``Client`` and the server's ``Connection`` joined in memory, the server's side of the wire
recorded by a ``Tap`` (``serving``, shared with ``tests/runtime``: see ``tests/_serving.py``),
and the tables a cancelled call must leave empty."""

from __future__ import annotations

__all__ = ["ERAS", "Wire", "assert_tables_empty", "run", "serving", "settle", "tables", "until"]


from _serving import Wire, serving, settle
from backchannel import Client
from backchannel.runtime.connection import Connection
from backchannel.testing import run, within

ERAS = ("handshake", "stateless")
until = within


def tables(client: Client, connection: Connection) -> dict[str, int]:
    """The runtime's own tables, on both sides, by name."""
    counts: dict[str, int] = {}
    for side, conn in (("client", client.connection), ("server", connection)):
        counts[f"{side}.connection.active_handlers"] = conn.active_handlers
        counts[f"{side}.connection.pending_requests"] = conn.pending_requests
        counts[f"{side}.session.pending_inbound"] = conn.session.pending_inbound
        counts[f"{side}.session.pending_outbound"] = conn.session.pending_outbound
        counts[f"{side}.session.active_progress_tokens"] = conn.session.active_progress_tokens
    return counts


def assert_tables_empty(client: Client, connection: Connection) -> None:
    leftover = {name: n for name, n in tables(client, connection).items() if n}
    assert not leftover, f"entries left behind: {leftover}"
