"""In-process plumbing for the server API tests: a client whose transport records
what crosses the wire, and a raw peer that speaks JSON-RPC dicts by hand."""

from __future__ import annotations

__all__ = ["ERAS", "MODERN", "RawPeer", "Recorder", "connected", "error_of", "result_of", "run"]

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator
from typing import Any

from backchannel import Client, Server
from backchannel import testing as kit
from backchannel.transports.base import Transport
from backchannel.transports.memory import memory_pair
from backchannel.types import meta as M

ERAS = ("handshake", "stateless")
MODERN = "2026-07-28"
run = kit.run


class Recorder(kit.Tap):
    """The client's end, recorded: what the client received, and a way to wait for it."""

    def around(self, inner: Transport) -> Recorder:
        super().around(inner)
        self._arrived = asyncio.Event()
        return self

    async def receive(self) -> list[Any] | None:
        batch = await super().receive()
        if batch:
            self._arrived.set()
        return batch

    def results(self) -> list[dict[str, Any]]:
        return [m["result"] for m in self.received if "result" in m]

    async def wait_for(self, method: str, count: int = 1) -> list[dict[str, Any]]:
        """The notifications ``method`` received, once there are ``count`` of them."""
        while len(found := self.notifications_received(method)) < count:
            self._arrived.clear()
            await self._arrived.wait()
        return found


@contextlib.asynccontextmanager
async def connected(
    server: Server,
    era: str = "handshake",
    *,
    capabilities: dict[str, Any] | None = None,
    name: str = "tester",
    **options: Any,
) -> AsyncIterator[tuple[Client, Recorder]]:
    """A ``Client`` in ``era`` on the kit's memory link, the client's end recorded;
    ``capabilities`` are added to what the client declares (before the handshake, which
    is why this is not ``testing.connected``)."""
    recorder = Recorder()
    async with kit.open_link(server, wrap_client=recorder.around) as link:
        client = Client(link.transport, era=era, name=name, version="9.9", **options)  # type: ignore[arg-type]
        client.capabilities.update(capabilities or {})
        async with client:
            yield client, recorder


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
