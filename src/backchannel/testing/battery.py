"""``check_transport``: the checks every ``Transport`` must pass, after trio's
``check_one_way_stream``.

A transport is checked from the client's end, against a real ``Server`` at the other:
``maker(server)`` is an async context manager yielding a ``Link`` (see ``open_link``),
whose ``transport`` reaches ``server`` once started. Each check gets a fresh server and
link, in each era, and speaks raw JSON-RPC through ``write``/``receive``/``drain``/``close``
only, so what it asserts is what the interface promises::

    from backchannel.testing import check_transport, open_link, run

    def test_my_transport() -> None:
        run(lambda: check_transport(my_maker), timeout=60)

``TRANSPORT_CHECKS`` lists the checks by name, to run them one test each.
"""

from __future__ import annotations

__all__ = ["BIG_MESSAGE_BYTES", "ERAS", "TRANSPORT_CHECKS", "LinkMaker", "battery_server", "check_transport"]

import asyncio
import contextlib
import itertools
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from ..protocol.events import CancelIntent, Outgoing, RequestId
from ..server import Server
from ..transports.base import Transport
from ..types import meta as M
from ..types.errors import ConnectionClosed
from ..types.versions import LATEST_HANDSHAKE, LATEST_STATELESS, Era
from .links import Link, start_transport

ERAS: tuple[Era, ...] = ("handshake", "stateless")
LinkMaker = Callable[[Server], AbstractAsyncContextManager[Link]]
#: The size of the one big message: well past any pipe or socket buffer, under the 4 MiB limits.
BIG_MESSAGE_BYTES = 1 << 20
_BOUND = 5.0  # seconds any one step may take


class _Probe:
    """What the battery server's tools saw."""

    def __init__(self) -> None:
        self.order: list[int] = []
        self.hanging = asyncio.Event()
        self.cancelled = asyncio.Event()


def battery_server() -> tuple[Server, _Probe]:
    """The server every check talks to: ``record(n)`` (notes the order calls arrive in),
    ``echo(text)``, and ``hang`` (waits until cancelled)."""
    server = Server("transport-battery", "1.0")
    probe = _Probe()

    @server.tool()
    async def record(n: int) -> str:
        probe.order.append(n)  # before any await: the order in which the calls arrived
        return str(n)

    @server.tool()
    async def echo(text: str) -> str:
        return text

    @server.tool()
    async def hang() -> str:
        probe.hanging.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            probe.cancelled.set()
            raise
        return "unreachable"

    return server, probe


class _Peer:
    """A client written by hand on ``transport``: the handshake of ``era``, then requests."""

    def __init__(self, transport: Transport, era: Era) -> None:
        self.transport = transport
        self.era = era
        self._ids = itertools.count(1)
        self._answers: dict[RequestId, dict[str, Any]] = {}

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """A request message with a fresh id (and, in the stateless era, its envelope)."""
        params = dict(params or {})
        if self.era == "stateless":
            params["_meta"] = {
                M.PROTOCOL_VERSION: LATEST_STATELESS,
                M.CLIENT_CAPABILITIES: {},
                M.CLIENT_INFO: {"name": "battery", "version": "1"},
            }
        return {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params}

    def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        return self.request("tools/call", {"name": tool, "arguments": arguments})

    async def answer(self, request_id: RequestId) -> dict[str, Any]:
        """The response to ``request_id``; responses to others are kept for later."""
        async with asyncio.timeout(_BOUND):
            while request_id not in self._answers:
                batch = await self.transport.receive()
                assert batch is not None, f"the transport ended before answering request {request_id!r}"
                for item in batch:
                    assert isinstance(item, dict), f"undecodable input from the server: {item!r}"
                    if "method" not in item and "id" in item:
                        assert item["id"] not in self._answers, f"request {item['id']!r} answered twice"
                        self._answers[item["id"]] = item
        return self._answers.pop(request_id)

    async def handshake(self) -> None:
        if self.era == "stateless":
            return  # every request carries its own envelope
        init = self.request(
            "initialize",
            {
                "protocolVersion": LATEST_HANDSHAKE,
                "capabilities": {},
                "clientInfo": {"name": "battery", "version": "1"},
            },
        )
        self.transport.write([init])
        answer = await self.answer(init["id"])
        assert "result" in answer, f"initialize failed: {answer}"
        self.transport.write([{"jsonrpc": "2.0", "method": "notifications/initialized"}])


def _text(answer: dict[str, Any]) -> str:
    assert "result" in answer, f"expected a result, got {answer}"
    return "".join(block.get("text", "") for block in answer["result"]["content"])


# ---------------------------------------------------------------------------- the checks


async def check_order(peer: _Peer, probe: _Probe, link: Link) -> None:
    """Messages written one by one reach the server in the order written; each is answered once."""
    calls = [peer.call("record", n=n) for n in range(20)]
    for call in calls:
        peer.transport.write([call])
    answers = [await peer.answer(call["id"]) for call in calls]
    assert [_text(a) for a in answers] == [str(n) for n in range(20)]
    assert probe.order == list(range(20)), f"the server received them as {probe.order}"


async def check_batch(peer: _Peer, probe: _Probe, link: Link) -> None:
    """Several messages in one ``write`` all arrive, in order."""
    calls = [peer.call("record", n=n) for n in range(5)]
    peer.transport.write(list[Outgoing](calls))
    assert [_text(await peer.answer(call["id"])) for call in calls] == [str(n) for n in range(5)]
    assert probe.order == list(range(5))


async def check_big_message(peer: _Peer, probe: _Probe, link: Link) -> None:
    """A message far bigger than any buffer crosses whole both ways; ``drain`` returns."""
    text = "x" * BIG_MESSAGE_BYTES
    call = peer.call("echo", text=text)
    peer.transport.write([call])
    async with asyncio.timeout(_BOUND):
        await peer.transport.drain()
    assert _text(await peer.answer(call["id"])) == text


async def check_cancellation(peer: _Peer, probe: _Probe, link: Link) -> None:
    """A ``CancelIntent`` reaches the server however the transport expresses it (a
    notification, or closing the response); the connection goes on serving."""
    call = peer.call("hang")
    peer.transport.write([call])
    async with asyncio.timeout(_BOUND):
        await probe.hanging.wait()
    peer.transport.write([CancelIntent(request_id=call["id"], reason="the battery gave up")])
    async with asyncio.timeout(_BOUND):
        await probe.cancelled.wait()
    after = peer.call("echo", text="still here")
    peer.transport.write([after])
    assert _text(await peer.answer(after["id"])) == "still here"


async def check_close_near(peer: _Peer, probe: _Probe, link: Link) -> None:
    """After ``close``: ``receive`` reports the end (None), ``write`` raises ``ConnectionClosed``,
    and a second ``close`` is harmless."""
    call = peer.call("echo", text="before")
    peer.transport.write([call])
    assert _text(await peer.answer(call["id"])) == "before"
    await peer.transport.close()
    async with asyncio.timeout(_BOUND):
        while (batch := await peer.transport.receive()) is not None:
            assert isinstance(batch, list)
        assert await peer.transport.receive() is None, "receive must keep reporting the end"
    try:
        peer.transport.write([peer.call("echo", text="after")])
    except ConnectionClosed:
        pass
    else:
        raise AssertionError("write after close must raise ConnectionClosed")
    await peer.transport.close()


async def check_close_far(peer: _Peer, probe: _Probe, link: Link) -> None:
    """When the server's side ends, the client's end learns it within a bound: ``receive``
    returns None or raises ``ConnectionClosed`` (``TransportBroken``), at the latest once
    it tries to write (a write may raise ``ConnectionClosed`` itself)."""
    call = peer.call("echo", text="before")
    peer.transport.write([call])
    assert _text(await peer.answer(call["id"])) == "before"
    await link.stop_server()
    with contextlib.suppress(ConnectionClosed):
        peer.transport.write([peer.call("echo", text="anyone there?")])
    async with asyncio.timeout(_BOUND):
        try:
            while await peer.transport.receive() is not None:
                pass  # an error answer for the last request may come first
        except ConnectionClosed:
            pass
    await peer.transport.close()


Check = Callable[[_Peer, _Probe, Link], Awaitable[None]]
TRANSPORT_CHECKS: dict[str, Check] = {
    "order": check_order,
    "batch": check_batch,
    "big_message": check_big_message,
    "cancellation": check_cancellation,
    "close_near": check_close_near,
    "close_far": check_close_far,
}


async def check_transport(
    maker: LinkMaker, *, eras: tuple[Era, ...] = ERAS, checks: tuple[str, ...] = tuple(TRANSPORT_CHECKS)
) -> None:
    """Run ``checks`` (all by default) in each of ``eras`` over fresh links from ``maker``;
    the first failure raises ``AssertionError`` naming the check and the era."""
    for era in eras:
        for name in checks:
            server, probe = battery_server()
            try:
                async with maker(server) as link:
                    await start_transport(link.transport)
                    peer = _Peer(link.transport, era)
                    await peer.handshake()
                    await TRANSPORT_CHECKS[name](peer, probe, link)
            except (AssertionError, TimeoutError) as exc:
                raise AssertionError(f"transport check {name!r} ({era} era) failed: {exc}") from exc
