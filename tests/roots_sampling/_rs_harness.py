"""In-process plumbing for the roots and sampling tests (issue #5): a ``Client`` and a
``Server`` joined by ``memory_pair``, with the server's side of the wire recorded."""

from __future__ import annotations

__all__ = ["ERAS", "RawServer", "Wire", "connect", "raw_server", "run", "serving", "settle", "text_of"]

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from backchannel import Client, Server
from backchannel.runtime.connection import Connection
from backchannel.testing import Tap, connected, run
from backchannel.transports.memory import MemoryTransport, memory_pair

ERAS = ("handshake", "stateless")


class Wire(Tap):
    """The server's end, recorded; what the kit's ``Tap`` does not ask."""

    def answer_to(self, request_id: int | str) -> dict[str, Any]:
        """The server's one answer to the client's request ``request_id``."""
        found = self.responses_written(request_id)
        assert len(found) == 1, found
        return found[0]


@contextlib.asynccontextmanager
async def serving(server: Server, era: str = "handshake", **client_options: Any) -> AsyncIterator[tuple[Client, Wire]]:
    """A ``Client`` in ``era`` connected to ``server``; yields (client, wire)."""
    wire = Wire()
    client_options.setdefault("request_timeout", 30.0)
    async with connected(server, era, wrap_server=wire.around, **client_options) as client:  # type: ignore[arg-type]
        yield client, wire


async def connect(
    server: Server, era: str = "handshake", **client_options: Any
) -> tuple[Client, Wire, Connection, Callable[[], Awaitable[None]]]:
    """A connected ``Client`` without a ``with`` block (for tests that hold several at once,
    or end one mid-test); ``await close()`` ends it. The server's ``Connection`` is made here,
    not by ``Server.serve``, so the test can reach it."""
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
        if era == "handshake":
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
