"""In-process plumbing for the roots and sampling tests (issue #5): a ``Client`` and a
``Server`` joined by ``memory_pair``, with the server's side of the wire recorded."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from backchannel import Client, Server
from backchannel.protocol.events import Outgoing
from backchannel.runtime.connection import Connection
from backchannel.testing import run as kit_run
from backchannel.transports.base import Transport, wire_messages
from backchannel.transports.memory import MemoryTransport, memory_pair

T = TypeVar("T")
ERAS = ("legacy", "modern")
BOUND = 10.0


run = kit_run


class Wire(Transport):
    """The server's transport, recording what it received (from the client) and wrote."""

    def __init__(self, inner: MemoryTransport) -> None:
        self.inner = inner
        self.received: list[dict[str, Any]] = []
        self.written: list[dict[str, Any]] = []

    async def receive(self) -> list[Any] | None:
        batch = await self.inner.receive()
        if batch:
            self.received.extend(m for m in batch if isinstance(m, dict))
        return batch

    def write(self, items: list[Outgoing]) -> None:
        self.inner.write(items)
        self.written.extend(wire_messages(items))

    async def drain(self) -> None:
        await self.inner.drain()

    async def close(self) -> None:
        await self.inner.close()

    # ----------------------------------------------------------- queries

    def requests_sent(self, method: str) -> list[dict[str, Any]]:
        """Requests ``method`` the server wrote (handshake era: server -> client)."""
        return [m for m in self.written if m.get("method") == method and "id" in m]

    def notifications_received(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.received if m.get("method") == method and "id" not in m]

    def calls(self, tool: str) -> list[dict[str, Any]]:
        """Every ``tools/call`` of ``tool`` the server received, in order."""
        return [
            m for m in self.received if m.get("method") == "tools/call" and (m.get("params") or {}).get("name") == tool
        ]

    def answer_to(self, request_id: int | str) -> dict[str, Any]:
        found = [m for m in self.written if "method" not in m and m.get("id") == request_id]
        assert len(found) == 1, found
        return found[0]

    def answers_from_client(self, request_id: int | str) -> list[dict[str, Any]]:
        """The client's responses to the server's request ``request_id``."""
        return [m for m in self.received if "method" not in m and m.get("id") == request_id]


@contextlib.asynccontextmanager
async def serving(server: Server, era: str = "legacy", **client_options: Any) -> AsyncIterator[tuple[Client, Wire]]:
    """A ``Client`` in ``era`` connected to ``server``; yields (client, wire)."""
    client, wire, _connection, close = await connect(server, era, **client_options)
    try:
        yield client, wire
    finally:
        await close()


async def connect(
    server: Server, era: str = "legacy", **client_options: Any
) -> tuple[Client, Wire, Connection, Callable[[], Awaitable[None]]]:
    client_side, server_side = memory_pair()
    wire = Wire(server_side)
    connection = server.connect(wire)
    runner = asyncio.create_task(connection.run())
    client_options.setdefault("request_timeout", 30.0)
    client = Client(client_side, era=era, **client_options)  # type: ignore[arg-type]
    await client.__aenter__()

    async def close() -> None:
        await client.aclose()
        await wire.close()
        await runner

    return client, wire, connection, close


async def settle(client: Client) -> None:
    """Two round trips: whatever the server had to do about earlier messages is done."""
    await client.list_tools()
    await client.list_tools()


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


class RawServer:
    """The server's end of a memory pair, driven by hand: for what our ``Server`` refuses to
    send (malformed sampling requests, requests the client did not declare)."""

    def __init__(self, transport: MemoryTransport) -> None:
        self.transport = transport
        self.received: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        self.transport.write([{"jsonrpc": "2.0", **message}])

    async def next(self, predicate: Callable[[dict[str, Any]], bool] = lambda m: True) -> dict[str, Any]:
        """The next message from the client that ``predicate`` accepts (others are kept)."""
        while True:
            batch = await self.transport.receive()
            assert batch is not None, "the client went away"
            for message in batch:
                self.received.append(message)
                if predicate(message):
                    return message  # type: ignore[no-any-return]

    async def serve_handshake(self, era: str) -> None:
        """Answer the client's ``initialize`` (legacy) or ``server/discover`` (modern)."""
        if era == "legacy":
            init = await self.next(lambda m: m.get("method") == "initialize")
            self.send(
                {
                    "id": init["id"],
                    "result": {
                        "protocolVersion": init["params"]["protocolVersion"],
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "raw", "version": "0"},
                    },
                }
            )
        else:
            probe = await self.next(lambda m: m.get("method") == "server/discover")
            self.send(
                {
                    "id": probe["id"],
                    "result": {
                        "resultType": "complete",
                        "supportedVersions": ["2026-07-28"],
                        "capabilities": {"tools": {}},
                        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "raw", "version": "0"}},
                    },
                }
            )


@contextlib.asynccontextmanager
async def raw_server(era: str, **client_options: Any) -> AsyncIterator[tuple[Client, RawServer]]:
    """A ``Client`` in ``era`` talking to a hand-driven server."""
    client_side, server_side = memory_pair()
    peer = RawServer(server_side)
    client_options.setdefault("request_timeout", 10.0)
    client = Client(client_side, era=era, **client_options)  # type: ignore[arg-type]
    handshake = asyncio.create_task(peer.serve_handshake(era))
    await client.__aenter__()
    await handshake
    try:
        yield client, peer
    finally:
        await client.aclose()
        await server_side.close()
