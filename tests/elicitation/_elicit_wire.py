"""In-process plumbing for the elicitation wire tests.

``session(server, era, ...)`` connects a real ``Client`` to ``server`` over a memory
pair whose server end is a ``Tap``: every message each side sends is kept, as it
crossed the wire (JSON-encoded and decoded), so tests assert on the wire itself.
``RawPeer`` (from the server tests) speaks hand-written JSON-RPC for what a
well-behaved client never sends.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from backchannel import Client, Server
from backchannel.protocol.events import Outgoing
from backchannel.transports.base import Transport, wire_messages
from backchannel.transports.memory import MemoryTransport, memory_pair

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from _server_harness import MODERN, RawPeer, error_of, result_of

from backchannel.testing import run as kit_run

__all__ = ["ERAS", "MODERN", "RawPeer", "Tap", "error_of", "result_of", "run", "session"]

T = TypeVar("T")
ERAS = ("legacy", "modern")


run = kit_run


def _copy(message: Any) -> Any:
    return msgspec.json.decode(msgspec.json.encode(message))


class Tap(Transport):
    """The server end of a memory pair, recording both directions."""

    def __init__(self, inner: MemoryTransport) -> None:
        self.inner = inner
        #: What the client sent (as the server received it), in order.
        self.inbound: list[dict[str, Any]] = []
        #: What the server sent, in order.
        self.outbound: list[dict[str, Any]] = []

    async def receive(self) -> list[Any] | None:
        batch = await self.inner.receive()
        if batch:
            self.inbound.extend(_copy(item) for item in batch if isinstance(item, dict))
        return batch

    def write(self, items: list[Outgoing]) -> None:
        self.outbound.extend(_copy(message) for message in wire_messages(items))
        self.inner.write(items)

    async def drain(self) -> None:
        await self.inner.drain()

    async def close(self) -> None:
        await self.inner.close()

    # ------------------------------------------------------------------ queries

    def server_requests(self, method: str = "elicitation/create") -> list[dict[str, Any]]:
        """Requests the server sent (handshake era)."""
        return [m for m in self.outbound if m.get("method") == method and "id" in m]

    def client_requests(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.inbound if m.get("method") == method and "id" in m]

    def server_notifications(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.outbound if m.get("method") == method and "id" not in m]

    def client_response_to(self, request_id: Any) -> dict[str, Any]:
        """The client's answer to the server's request ``request_id``."""
        found = [m for m in self.inbound if m.get("id") == request_id and "method" not in m]
        assert len(found) == 1, f"expected one answer to {request_id!r}, got {found}"
        return found[0]

    def server_response_to(self, request_id: Any) -> dict[str, Any]:
        """The server's answer to the client's request ``request_id``."""
        found = [m for m in self.outbound if m.get("id") == request_id and "method" not in m]
        assert len(found) == 1, f"expected one answer to {request_id!r}, got {found}"
        return found[0]


@contextlib.asynccontextmanager
async def session(server: Server, era: str = "legacy", **options: Any) -> AsyncIterator[tuple[Client, Tap]]:
    """A ``Client`` in ``era`` talking to ``server``; ``options`` go to ``Client``."""
    client_side, server_side = memory_pair()
    tap = Tap(server_side)
    serving = asyncio.create_task(server.serve(tap))
    client = Client(client_side, era=era, name="tester", version="9.9", **options)  # type: ignore[arg-type]
    try:
        async with client:
            yield client, tap
    finally:
        await server_side.close()
        await serving


def raw_answers(client: Client, answers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Make ``client`` a misbehaving one: each server question gets the next of ``answers``
    exactly as given (no validation, no defaults). Returns the params it was asked with."""
    asked: list[dict[str, Any]] = []
    queue = list(answers)

    async def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return queue.pop(0)

    client.inputs.answer = answer  # type: ignore[method-assign]
    return asked
