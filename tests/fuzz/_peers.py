"""Raw peers over the in-memory transport, for the wrong-type property tests.

``RawClient`` speaks to a real ``Server`` in hand-written dicts and answers the
server's own questions through a callback; ``RawServer`` does the same to a real
``Client``. Every wait is bounded.
"""

from __future__ import annotations

__all__ = ["RawClient", "RawServer", "bounded", "connected_client", "set_path"]

import asyncio
import itertools
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from backchannel import Client, Server
from backchannel.transports.memory import MemoryTransport, memory_pair

T = TypeVar("T")
WAIT = 10.0  # seconds: a bound on every wait, never a pause
Respond = Callable[[dict[str, Any]], dict[str, Any] | None]


def bounded(make: Callable[[], Awaitable[T]], timeout: float = WAIT) -> T:
    async def run() -> T:
        async with asyncio.timeout(timeout):
            return await make()

    return asyncio.run(run())


def set_path(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    """``value`` with the place at ``path`` replaced by ``new`` (``value`` itself is changed)."""
    if not path:
        return new
    node = value
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = new
    return value


class RawClient:
    """A hand-written client of ``server``: requests in, every message the server wrote kept."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.side, self._server_side = memory_pair()
        self._ids = itertools.count(1)
        self.seen: list[dict[str, Any]] = []
        self._serving: asyncio.Task[None] | None = None

    async def __aenter__(self) -> RawClient:
        self._serving = asyncio.get_running_loop().create_task(self.server.serve(self._server_side))
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.side.close()
        assert self._serving is not None
        await self._serving

    def new_id(self) -> int:
        return next(self._ids)

    def write(self, *messages: Any) -> None:
        self.side.write(list(messages))

    async def answers(self, request_id: Any, respond: Respond | None = None) -> list[dict[str, Any]]:
        """Every response with ``request_id``, read until the first one and a ping behind it.

        The server's own requests met on the way are answered with ``respond(request)``
        (None: an empty result). A second answer to the same id would arrive before the
        ping's, so it is caught too."""
        found: list[dict[str, Any]] = []
        ping: int | None = None
        while True:
            batch = await self.side.receive()
            assert batch is not None, "the server closed the connection"
            for item in batch:
                assert isinstance(item, dict), item
                self.seen.append(item)
                if "method" in item and "id" in item:
                    body = respond(item) if respond is not None else {}
                    self.write({"jsonrpc": "2.0", "id": item["id"], "result": body})
                elif "method" not in item and item.get("id") == request_id and type(item["id"]) is type(request_id):
                    found.append(item)
                    if ping is None:
                        ping = self.new_id()
                        self.write({"jsonrpc": "2.0", "id": ping, "method": "ping"})
                elif ping is not None and item.get("id") == ping:
                    return found

    async def request(self, method: str, params: Any = None, respond: Respond | None = None) -> dict[str, Any]:
        """One request; its only answer (fails on none or on two)."""
        request_id = self.new_id()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.write(message)
        found = await self.answers(request_id, respond)
        assert len(found) == 1, f"{len(found)} answers to {message}: {found}"
        return found[0]

    async def initialize(self, capabilities: dict[str, Any]) -> None:
        answer = await self.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": capabilities,
                "clientInfo": {"name": "raw", "version": "1"},
            },
        )
        assert "result" in answer, answer
        self.write({"jsonrpc": "2.0", "method": "notifications/initialized"})


class RawServer:
    """A hand-written server in front of a real ``Client``: answers ``initialize``, then
    sends whatever the test says and reads the client's answers."""

    def __init__(self) -> None:
        self.client_side, self.side = memory_pair()
        self._ids = itertools.count(1000)
        self._pending: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self.requests: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.on_request: Callable[[dict[str, Any]], dict[str, Any]] | None = None
        self._reader: asyncio.Task[None] | None = None
        #: The stateless era: answer ``server/discover`` (the client then speaks that era).
        self.modern = False
        self.problems: list[str] = []

    @property
    def transport(self) -> MemoryTransport:
        return self.client_side

    def start(self) -> None:
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        while (batch := await self.side.receive()) is not None:
            for item in batch:
                if "method" in item and "id" in item:
                    self._answer(item)
                elif "method" not in item:
                    waiter = self._pending.pop(item.get("id"), None)
                    if waiter is not None and not waiter.done():
                        waiter.set_result(item)
                    elif waiter is None:
                        self.problems.append(f"an answer to nothing we asked: {item}")

    def _answer(self, request: dict[str, Any]) -> None:
        method = request["method"]
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": request["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "raw", "version": "1"},
            }
        elif method == "server/discover" and self.modern:
            result = {
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
                "resultType": "complete",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "raw", "version": "1"}},
            }
        elif method == "server/discover":
            self.side.write([{"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "no"}}])
            return
        elif self.on_request is not None:
            result = self.on_request(request)
        else:
            result = {}
        self.side.write([{"jsonrpc": "2.0", "id": request["id"], "result": result}])

    async def ask(self, method: str, params: Any) -> dict[str, Any]:
        """Send the client a request; its answer (the whole response message)."""
        request_id = next(self._ids)
        waiter: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = waiter
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.side.write([message])
        return await waiter

    def notify(self, method: str, params: Any) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.side.write([message])

    async def stop(self) -> None:
        await self.side.close()
        if self._reader is not None:
            self._reader.cancel()


async def connected_client(raw: RawServer, **options: Any) -> Client:
    raw.start()
    client = Client(raw.transport, era="stateless" if raw.modern else "handshake", **options)
    await client.__aenter__()
    return client
