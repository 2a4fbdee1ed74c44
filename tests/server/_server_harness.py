"""In-process plumbing for the server API tests: a client whose transport records
what crosses the wire, and a raw peer that speaks JSON-RPC dicts by hand."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator
from typing import Any, TypeVar

from backchannel import Client, Server
from backchannel.protocol.events import Outgoing
from backchannel.testing import run as kit_run
from backchannel.transports.base import Transport
from backchannel.transports.memory import MemoryTransport, memory_pair
from backchannel.types import meta as M

T = TypeVar("T")
ERAS = ("legacy", "modern")
MODERN = "2026-07-28"


run = kit_run


class Recorder(Transport):
    """Wraps the client side of a memory pair; keeps every dict the client receives."""

    def __init__(self, inner: MemoryTransport) -> None:
        self.inner = inner
        self.received: list[dict[str, Any]] = []
        self._arrived = asyncio.Event()

    async def receive(self) -> list[Any] | None:
        batch = await self.inner.receive()
        if batch:
            self.received.extend(item for item in batch if isinstance(item, dict))
            self._arrived.set()
        return batch

    def write(self, items: list[Outgoing]) -> None:
        self.inner.write(items)

    async def drain(self) -> None:
        await self.inner.drain()

    async def close(self) -> None:
        await self.inner.close()

    def notifications(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.received if m.get("method") == method and "id" not in m]

    def results(self) -> list[dict[str, Any]]:
        return [m["result"] for m in self.received if "result" in m]

    async def wait_for(self, method: str, count: int = 1) -> list[dict[str, Any]]:
        while len(found := self.notifications(method)) < count:
            self._arrived.clear()
            await self._arrived.wait()
        return found


@contextlib.asynccontextmanager
async def connected(
    server: Server,
    era: str = "legacy",
    *,
    capabilities: dict[str, Any] | None = None,
    name: str = "tester",
    **options: Any,
) -> AsyncIterator[tuple[Client, Recorder]]:
    """A ``Client`` in ``era`` talking to ``server`` over a recorded memory pair."""
    client_side, server_side = memory_pair()
    recorder = Recorder(client_side)
    serving = asyncio.create_task(server.serve(server_side))
    client = Client(recorder, era=era, name=name, version="9.9", **options)  # type: ignore[arg-type]
    client.capabilities.update(capabilities or {})
    try:
        async with client:
            yield client, recorder
    finally:
        await server_side.close()
        await serving


class RawPeer:
    """A client written by hand: sends dicts, returns the response dict for each id."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.client_side, self.server_side = memory_pair()
        self.seen: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self._serving: asyncio.Task[None] | None = None

    async def __aenter__(self) -> RawPeer:
        self._serving = asyncio.create_task(self.server.serve(self.server_side))
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.client_side.close()
        assert self._serving is not None
        await self._serving

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """One request; the whole response message (``result`` or ``error``)."""
        request_id = next(self._ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.client_side.write([message])
        while True:
            batch = await self.client_side.receive()
            assert batch is not None, "the server closed the connection"
            self.seen.extend(batch)
            for item in batch:
                if item.get("id") == request_id and "method" not in item:
                    return item  # type: ignore[no-any-return]

    async def modern(self, method: str, params: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
        """A stateless-era request: the ``_meta`` envelope added, plus ``meta`` keys."""
        envelope = {M.PROTOCOL_VERSION: MODERN, M.CLIENT_CAPABILITIES: {}, **meta}
        return await self.send(method, {**(params or {}), "_meta": envelope})

    async def initialize(self, version: str = "2025-11-25") -> dict[str, Any]:
        answer = await self.send(
            "initialize",
            {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
        )
        self.client_side.write([{"jsonrpc": "2.0", "method": "notifications/initialized"}])
        return answer


def error_of(response: dict[str, Any]) -> dict[str, Any]:
    assert "error" in response, f"expected an error, got {response}"
    return response["error"]  # type: ignore[no-any-return]


def result_of(response: dict[str, Any]) -> dict[str, Any]:
    assert "result" in response, f"expected a result, got {response}"
    return response["result"]  # type: ignore[no-any-return]
