"""A ``Client`` and the server's own ``Connection``, joined in memory, the server's side recorded.

For the tests that read the runtime's tables (``tests/lifecycle``, ``tests/runtime``).
Not ``backchannel.testing.connected``: those tests need the server's ``Connection``, which
``Server.serve`` keeps to itself, so it is made here with ``server.connect``. Test modules
anywhere under ``tests/`` import this as ``_serving`` (pytest's ``pythonpath`` in
pyproject.toml puts ``tests/`` on ``sys.path``).
"""

from __future__ import annotations

__all__ = ["Wire", "serving", "settle"]

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from backchannel import Client, Server
from backchannel.runtime.connection import Connection
from backchannel.testing import Tap
from backchannel.transports.memory import memory_pair


class Wire(Tap):
    """The server's end, recorded; the questions these tests ask that the kit's ``Tap`` does not answer."""

    def call_id(self, tool: str, index: int = -1) -> int | str:
        """The id of the ``index``-th ``tools/call`` of ``tool`` the server read."""
        request_id: int | str = self.tool_calls_received(tool)[index]["id"]
        return request_id

    def request_id(self, tool: str, key: str) -> int | str:
        """The id the client gave to ``tools/call`` of ``tool`` with the argument ``key``."""
        for message in self.tool_calls_received(tool):
            if (message["params"].get("arguments") or {}).get("key") == key:
                request_id: int | str = message["id"]
                return request_id
        raise AssertionError(f"the server never received tools/call {tool} {key}")

    def cancellations(self) -> list[int | str]:
        """The request ids of every ``notifications/cancelled`` the server read, in order."""
        return [m["params"]["requestId"] for m in self.notifications_received("notifications/cancelled")]

    def answers_to(self, request_id: int | str) -> list[dict[str, Any]]:
        """What the server wrote in answer to ``request_id`` (result or error)."""
        return self.responses_written(request_id)


@contextlib.asynccontextmanager
async def serving(
    server: Server, era: str = "handshake", *, record: bool = True, **client_options: Any
) -> AsyncIterator[tuple[Client, Connection, Wire]]:
    """A ``Client`` in ``era`` connected to ``server``; yields (client, server connection, wire).
    ``record=False`` keeps no copy of the traffic; ``client_options`` go to ``Client``
    (``request_timeout`` is 30 seconds unless given)."""
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
