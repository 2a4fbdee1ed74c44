"""In-process plumbing for the operation-lifecycle tests (issue #6): a ``Client`` and a
``Server`` joined by ``memory_pair``, with the server's side of the wire recorded in both
directions, and the tables a cancelled call must leave empty."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

from backchannel import Client, Server
from backchannel.protocol.events import Outgoing
from backchannel.runtime.connection import Connection
from backchannel.testing import run as kit_run
from backchannel.transports.base import Transport, wire_messages
from backchannel.transports.memory import MemoryTransport, memory_pair

T = TypeVar("T")
ERAS = ("legacy", "modern")
BOUND = 10.0  # seconds: no test may take longer, whatever goes wrong


run = kit_run


class Wire(Transport):
    """The server's transport, recording what it received (from the client) and wrote."""

    def __init__(self, inner: MemoryTransport, *, keep: bool = True) -> None:
        self.inner = inner
        self.keep = keep  # False: record nothing (a test measuring memory)
        self.received: list[dict[str, Any]] = []
        self.written: list[dict[str, Any]] = []

    async def receive(self) -> list[Any] | None:
        batch = await self.inner.receive()
        if batch and self.keep:
            self.received.extend(m for m in batch if isinstance(m, dict))
        return batch

    def write(self, items: list[Outgoing]) -> None:
        self.inner.write(items)
        if self.keep:
            self.written.extend(wire_messages(items))

    async def drain(self) -> None:
        await self.inner.drain()

    async def close(self) -> None:
        await self.inner.close()

    # ----------------------------------------------------------- queries

    def calls(self, tool: str) -> list[dict[str, Any]]:
        """Every ``tools/call`` of ``tool`` the server received, in order."""
        return [
            m for m in self.received if m.get("method") == "tools/call" and (m.get("params") or {}).get("name") == tool
        ]

    def call_id(self, tool: str, index: int = -1) -> int | str:
        request_id: int | str = self.calls(tool)[index]["id"]
        return request_id

    def sent(self, method: str) -> list[dict[str, Any]]:
        """Notifications ``method`` the server wrote."""
        return [m for m in self.written if m.get("method") == method and "id" not in m]

    def cancellations(self) -> list[int | str]:
        return [m["params"]["requestId"] for m in self.received if m.get("method") == "notifications/cancelled"]

    def answers_to(self, request_id: int | str) -> list[dict[str, Any]]:
        return [m for m in self.written if "method" not in m and m.get("id") == request_id]


@contextlib.asynccontextmanager
async def serving(
    server: Server, era: str = "legacy", *, record: bool = True, **client_options: Any
) -> AsyncIterator[tuple[Client, Connection, Wire]]:
    """A ``Client`` in ``era`` connected to ``server``; yields (client, server connection, wire).
    ``record=False`` keeps no copy of the traffic."""
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


async def until(condition: Callable[[], object], what: str = "condition", limit: float = 5.0) -> None:
    """Poll ``condition`` (cheap, synchronous) until true; fail after ``limit`` seconds."""
    async with asyncio.timeout(limit):
        while not condition():  # noqa: ASYNC110 - the condition is plain state, not an event
            await asyncio.sleep(0.001)


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
