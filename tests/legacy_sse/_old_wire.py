"""A raw client of the HTTP+SSE transport (2024-11-05), for tests that read the wire.

``old_wire(base)`` opens ``GET base/sse``, reads the ``endpoint`` event, and yields an ``OldWire``:
``post(message)`` sends one message to the endpoint and returns the HTTP response; ``message()``
waits (bounded) for the next ``message`` event and returns its JSON. The stream is read by a
plain line parser of its own, not by backchannel's SSE decoder, so these tests check our
server against the format itself.
"""

from __future__ import annotations

__all__ = ["INITIALIZED", "OldWire", "initialize", "old_wire", "run"]

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import httpx2

INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
WAIT = 10.0
#: Seconds a whole test body may take.
TIMEOUT = 30.0
T = TypeVar("T")


def run(body: Callable[[], Awaitable[T]]) -> T:
    """``asyncio.run`` of ``body()``, bounded by ``TIMEOUT``."""

    async def bounded() -> T:
        async with asyncio.timeout(TIMEOUT):
            return await body()

    return asyncio.run(bounded())


def initialize(version: str, capabilities: dict[str, Any] | None = None, request_id: int = 1) -> dict[str, Any]:
    params = {
        "protocolVersion": version,
        "capabilities": capabilities or {},
        "clientInfo": {"name": "old", "version": "1"},
    }
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


class OldWire:
    def __init__(self, http: httpx2.AsyncClient, base: str, response: httpx2.Response) -> None:
        self.http = http
        self.base = base
        self.response = response
        self.events: asyncio.Queue[tuple[str, str] | None] = asyncio.Queue()
        self.endpoint = ""
        self.endpoint_data = ""

    async def read(self) -> None:
        event, data = "message", []
        try:
            async for line in self.response.aiter_lines():
                if line == "":
                    if data:
                        await self.events.put((event, "\n".join(data)))
                    event, data = "message", []
                elif line.startswith(":"):
                    continue
                else:
                    field, _, value = line.partition(":")
                    value = value.removeprefix(" ")
                    if field == "event":
                        event = value
                    elif field == "data":
                        data.append(value)
        finally:
            await self.events.put(None)

    async def event(self, timeout: float = WAIT) -> tuple[str, str] | None:
        """The next event (type, data); None once the stream has ended."""
        async with asyncio.timeout(timeout):
            return await self.events.get()

    async def message(self, timeout: float = WAIT) -> dict[str, Any]:
        item = await self.event(timeout)
        assert item is not None, "the stream ended"
        kind, data = item
        assert kind == "message", item
        decoded: dict[str, Any] = json.loads(data)
        return decoded

    async def until(self, done: Callable[[dict[str, Any]], bool], timeout: float = WAIT) -> list[dict[str, Any]]:
        """Every message up to and including the first that ``done`` accepts."""
        seen: list[dict[str, Any]] = []
        async with asyncio.timeout(timeout):
            while not seen or not done(seen[-1]):
                seen.append(await self.message(timeout))
        return seen

    async def answer(self, request_id: int, timeout: float = WAIT) -> dict[str, Any]:
        """The answer to our request ``request_id`` (what came before it is skipped)."""
        messages = await self.until(lambda m: m.get("id") == request_id and "method" not in m, timeout)
        return messages[-1]

    async def post(self, message: Any, **headers: str) -> httpx2.Response:
        sent = {"content-type": "application/json", **headers}
        body = message if isinstance(message, bytes) else json.dumps(message).encode()
        return await self.http.post(self.endpoint, content=body, headers=sent)

    async def start(self, version: str, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        """``initialize`` (answered on the stream) and ``initialized``; the initialize result."""
        assert (await self.post(initialize(version, capabilities))).status_code == 202
        result = (await self.answer(1))["result"]
        assert (await self.post(INITIALIZED)).status_code == 202
        assert isinstance(result, dict)
        return result


@contextlib.asynccontextmanager
async def old_wire(base: str, headers: dict[str, str] | None = None) -> AsyncIterator[OldWire]:
    """An open HTTP+SSE stream at ``base``/sse whose endpoint event has been read."""
    async with (
        httpx2.AsyncClient(timeout=httpx2.Timeout(10, read=None), headers=headers) as http,
        http.stream("GET", f"{base}/sse", headers={"accept": "text/event-stream"}) as response,
    ):
        assert response.status_code == 200, response.status_code
        wire = OldWire(http, base, response)
        reader = asyncio.get_running_loop().create_task(wire.read())
        try:
            first = await wire.event()
            assert first is not None and first[0] == "endpoint", first
            wire.endpoint_data = first[1]
            wire.endpoint = base + first[1]
            yield wire
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
