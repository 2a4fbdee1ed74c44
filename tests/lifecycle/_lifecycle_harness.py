"""Plumbing for the operation-lifecycle tests (issue #6), on ``backchannel.testing``: a
``Client`` and the server's ``Connection`` joined in memory, the server's side of the wire
recorded by a ``Tap``, and the tables a cancelled call must leave empty."""

from __future__ import annotations

__all__ = ["ERAS", "Wire", "assert_tables_empty", "run", "serving", "settle", "tables", "until"]

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from backchannel import Client, Server
from backchannel.runtime.connection import Connection
from backchannel.testing import Tap, run, within
from backchannel.transports.memory import memory_pair

ERAS = ("legacy", "modern")
until = within


class Wire(Tap):
    """The server's end, recorded; the two questions the kit's ``Tap`` does not answer."""

    def call_id(self, tool: str, index: int = -1) -> int | str:
        request_id: int | str = self.tool_calls_received(tool)[index]["id"]
        return request_id

    def cancellations(self) -> list[int | str]:
        return [m["params"]["requestId"] for m in self.notifications_received("notifications/cancelled")]


@contextlib.asynccontextmanager
async def serving(
    server: Server, era: str = "legacy", *, record: bool = True, **client_options: Any
) -> AsyncIterator[tuple[Client, Connection, Wire]]:
    """A ``Client`` in ``era`` connected to ``server``; yields (client, server connection, wire).
    ``record=False`` keeps no copy of the traffic.

    Not ``testing.connected``: these tests read the server's ``Connection`` (its tables),
    which ``Server.serve`` keeps to itself, so the connection is made here with ``server.connect``.
    """
    client_side, server_side = memory_pair()
    wire = Wire(server_side, keep=record)
    connection = server.connect(wire)
    runner = asyncio.create_task(connection.run())
    client_options.setdefault("request_timeout", 30.0)
    try:
        async with Client(client_side, era=era, **client_options) as client:  # type: ignore[arg-type]
            yield client, connection, wire
    finally:
        await wire.close()
        await runner


async def settle(client: Client) -> None:
    """Two round trips: whatever the server had to do about earlier messages is done."""
    await client.list_tools()  # not ping: the stateless era has none
    await client.list_tools()


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
