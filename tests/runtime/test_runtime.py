"""The runtime (issue #2): handler tasks, cancellation, timeouts, and the tables they leave behind.

Client and server meet in-process over ``memory_pair``. The server's transport is
wrapped so each test can assert what crossed the wire in both directions. Every
test runs under ``asyncio.run`` with an overall bound; waits are on events.
"""

from __future__ import annotations

import asyncio
import functools
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import pytest

from _serving import Wire, serving, settle
from backchannel.client import Client
from backchannel.protocol.events import ProgressReceived
from backchannel.runtime.connection import Connection
from backchannel.server import Context, Server
from backchannel.testing import run as kit_run
from backchannel.transports.memory import MemoryTransport, memory_pair
from backchannel.types.content import TextContent
from backchannel.types.errors import ConnectionClosed, RequestError, RequestTimeout, ToolError

BOUND = 10.0  # seconds: no test may take longer, whatever goes wrong
ERAS = ["handshake", "stateless"]


run = functools.partial(kit_run, timeout=BOUND)


@dataclass
class Probe:
    """What the server's handlers saw."""

    started: defaultdict[str, asyncio.Event] = field(default_factory=lambda: defaultdict(asyncio.Event))
    stopped: defaultdict[str, asyncio.Event] = field(default_factory=lambda: defaultdict(asyncio.Event))
    cancelled: set[str] = field(default_factory=set)
    running: int = 0
    peak: int = 0
    all_in: asyncio.Event = field(default_factory=asyncio.Event)


def make_server() -> tuple[Server, Probe]:
    server = Server("runtime-test")
    probe = Probe()

    async def block(key: str, ctx: Context) -> str:
        """Runs until cancelled."""
        probe.started[key].set()
        try:
            await ctx.report_progress(0.5)
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            probe.cancelled.add(key)
            raise
        finally:
            probe.stopped[key].set()
        return "unreachable"

    async def stubborn(key: str) -> str:
        """Swallows its cancellation and answers anyway."""
        probe.started[key].set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            probe.cancelled.add(key)
        probe.stopped[key].set()
        return "answered after the cancellation"

    async def rendezvous(n: int) -> str:
        """Returns only once ``n`` calls of it are running at the same time."""
        probe.running += 1
        probe.peak = max(probe.peak, probe.running)
        if probe.running >= n:
            probe.all_in.set()
        await probe.all_in.wait()
        probe.running -= 1
        return "met"

    def fails() -> str:
        raise ToolError("a reason the model should read")

    def crashes() -> str:
        raise RuntimeError("secret internal detail")

    for fn in (block, stubborn, rendezvous, fails, crashes):
        server.add_tool(fn)
    return server, probe


def assert_tables_empty(client: Client, connection: Connection) -> None:
    for side in (client.connection, connection):
        assert side.active_handlers == 0
        assert side.pending_requests == 0
        assert side.session.pending_inbound == 0
        assert side.session.pending_outbound == 0
        assert side.session.active_progress_tokens == 0


def text(result: Any) -> str:
    [content] = result.content
    assert isinstance(content, TextContent)
    return content.text


def no_progress(event: ProgressReceived) -> None:
    return None


# --------------------------------------------------------------------- timeouts


@pytest.mark.parametrize("era", ERAS)
def test_timeout_raises_and_cancels_on_the_wire(era: str) -> None:
    """LC-27, LC-28, LC-29: a per-request timeout; on expiry the request is cancelled on the wire."""
    server, probe = make_server()

    async def main() -> None:
        async with serving(server, era) as (client, connection, wire):
            with pytest.raises(RequestTimeout, match=r"tools/call got no answer within 0\.2 s"):
                await client.call_tool("block", {"key": "t"}, timeout=0.2)
            request_id = wire.request_id("block", "t")
            await probe.stopped["t"].wait()
            assert probe.cancelled == {"t"}  # CN-08: the handler's task was cancelled
            await settle(client)
            assert wire.cancellations() == [request_id]
            assert wire.answers_to(request_id) == []  # CN-10
            assert_tables_empty(client, connection)

    run(main)


def test_client_request_timeout_is_the_default() -> None:
    server, probe = make_server()

    async def main() -> None:
        async with serving(server, "handshake", request_timeout=0.2) as (client, _, wire):
            with pytest.raises(RequestTimeout):
                await client.call_tool("block", {"key": "d"})
            await probe.stopped["d"].wait()
            assert wire.cancellations() == [wire.request_id("block", "d")]

    run(main)


# ----------------------------------------------------------------- cancellation


@pytest.mark.parametrize("era", ERAS)
def test_cancelling_the_callers_task_cancels_on_the_wire(era: str) -> None:
    """CN-08, CN-10: the caller gives up; the server's handler stops and sends nothing."""
    server, probe = make_server()

    async def main() -> None:
        async with serving(server, era) as (client, connection, wire):
            task = asyncio.create_task(client.call_tool("block", {"key": "c"}))
            await probe.started["c"].wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await probe.stopped["c"].wait()
            assert probe.cancelled == {"c"}
            request_id = wire.request_id("block", "c")
            await settle(client)
            assert wire.cancellations() == [request_id]
            assert wire.answers_to(request_id) == []
            assert_tables_empty(client, connection)

    run(main)


def test_no_response_for_a_cancelled_request_even_when_the_handler_returns() -> None:
    """CN-10, CN-13: a handler that finishes after the cancellation has its answer dropped."""
    server, probe = make_server()

    async def main() -> None:
        async with serving(server, "handshake") as (client, connection, wire):
            task = asyncio.create_task(client.call_tool("stubborn", {"key": "s"}))
            await probe.started["s"].wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await probe.stopped["s"].wait()
            assert probe.cancelled == {"s"}
            await settle(client)
            request_id = wire.request_id("stubborn", "s")
            assert wire.cancellations() == [request_id]
            assert wire.answers_to(request_id) == []
            assert_tables_empty(client, connection)

    run(main)


def test_late_response_is_dropped() -> None:
    """CN-12: an answer that arrives after we cancelled is ignored; later requests get their own."""
    client_side, peer = memory_pair()
    got_call = asyncio.Event()

    async def fake_server(transport: MemoryTransport) -> None:
        # Answers a held tools/call only once its cancellation arrives: the worst moment.
        while (batch := await transport.receive()) is not None:
            for m in batch:
                method = m.get("method")
                if method == "initialize":
                    result = {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "fake", "version": "0"},
                    }
                    transport.write([{"jsonrpc": "2.0", "id": m["id"], "result": result}])
                elif method == "tools/call" and m["params"]["name"] == "hold":
                    got_call.set()
                elif method == "tools/call":
                    answer = {"content": [{"type": "text", "text": "fresh"}]}
                    transport.write([{"jsonrpc": "2.0", "id": m["id"], "result": answer}])
                elif method == "notifications/cancelled":
                    late = {"content": [{"type": "text", "text": "too late"}]}
                    late_id = m["params"]["requestId"]
                    transport.write(
                        [
                            {"jsonrpc": "2.0", "id": late_id, "result": late},
                            {"jsonrpc": "2.0", "id": late_id, "error": {"code": -1, "message": "and again"}},
                        ]
                    )
                elif method == "ping":
                    transport.write([{"jsonrpc": "2.0", "id": m["id"], "result": {}}])

    async def main() -> None:
        peer_task = asyncio.create_task(fake_server(peer))
        async with Client(client_side, era="handshake") as client:
            task = asyncio.create_task(client.call_tool("hold", {}))
            await got_call.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await client.ping()  # the late answers were read before this one
            assert text(await client.call_tool("next", {})) == "fresh"
            assert client.connection.pending_requests == 0
            assert client.session.pending_outbound == 0
        await peer_task

    run(main)


def test_tables_are_empty_after_200_cancelled_calls() -> None:
    """CN-09, PG-16: cancelled requests leave nothing behind, on either side.

    The calls are cancelled at four different moments: before the request is
    written, right after (request and cancellation reach the server together),
    once the handler runs, and by a timeout.
    """
    server, probe = make_server()

    async def main() -> None:
        async with serving(server, "handshake") as (client, connection, wire):
            for i in range(200):
                key = f"k{i}"
                mode = i % 4
                if mode == 3:
                    with pytest.raises(RequestTimeout):
                        await client.call_tool("block", {"key": key}, timeout=0.001, on_progress=no_progress)
                    continue
                task = asyncio.create_task(client.call_tool("block", {"key": key}, on_progress=no_progress))
                if mode == 1:
                    await asyncio.sleep(0)  # let the request reach the transport, no further
                elif mode == 2:
                    await probe.started[key].wait()
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
            await settle(client)
            assert_tables_empty(client, connection)
            # Every handler that started was cancelled; none answered.
            assert set(probe.started) == probe.cancelled
            assert {k for k, e in probe.stopped.items() if e.is_set()} == probe.cancelled
            calls = {m["id"] for m in wire.received if m.get("method") == "tools/call"}
            assert not [m for m in wire.written if m.get("id") in calls]

    run(main)


def test_request_and_its_cancellation_in_one_read() -> None:
    """CN-08, CN-09, CN-10: the cancellation arrives before the handler's task has run at all."""
    server, _ = make_server()

    async def main() -> None:
        client_side, server_side = memory_pair()
        wire = Wire(server_side)
        connection = server.connect(wire)
        runner = asyncio.create_task(connection.run())
        initialize = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        }
        client_side.write([{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize}])
        assert (await client_side.receive() or [{}])[0]["id"] == 1
        client_side.write([{"jsonrpc": "2.0", "method": "notifications/initialized"}])
        call = {"name": "block", "arguments": {"key": "r"}}
        cancel = {"requestId": 2, "reason": "changed my mind"}
        client_side.write(
            [
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call},
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel},
                {"jsonrpc": "2.0", "id": 3, "method": "ping"},
            ]
        )
        assert await client_side.receive() == [{"jsonrpc": "2.0", "id": 3, "result": {}}]
        client_side.write([{"jsonrpc": "2.0", "id": 4, "method": "ping"}])
        assert await client_side.receive() == [{"jsonrpc": "2.0", "id": 4, "result": {}}]
        assert wire.answers_to(2) == []
        assert connection.active_handlers == 0
        assert connection.session.pending_inbound == 0
        # The id is free again: a new request with it is served, not refused as a duplicate.
        client_side.write([{"jsonrpc": "2.0", "id": 2, "method": "ping"}])
        assert await client_side.receive() == [{"jsonrpc": "2.0", "id": 2, "result": {}}]
        await client_side.close()
        await runner

    run(main)


# ------------------------------------------------------------------ concurrency


@pytest.mark.parametrize("era", ERAS)
def test_32_calls_run_at_once(era: str) -> None:
    """Each inbound request runs in its own task: 32 calls that each wait for all 32 complete."""
    server, probe = make_server()

    async def main() -> None:
        async with serving(server, era) as (client, connection, _):
            results = await asyncio.gather(*(client.call_tool("rendezvous", {"n": 32}) for _ in range(32)))
            assert [text(r) for r in results] == ["met"] * 32
            assert probe.peak == 32
            assert_tables_empty(client, connection)

    run(main)


# ------------------------------------------------------- exceptions to the wire


def test_tool_error_and_crash_cross_the_wire_in_one_shape_each(caplog: pytest.LogCaptureFixture) -> None:
    server, _ = make_server()

    async def main() -> None:
        async with serving(server, "handshake") as (client, _, wire):
            failed = await client.call_tool("fails", {})
            assert failed.is_error is True
            assert text(failed) == "a reason the model should read"
            with pytest.raises(RequestError) as crashed:
                await client.call_tool("crashes", {})
            assert crashed.value.code == -32603
            assert "secret" not in crashed.value.message
            assert all("secret" not in str(m) for m in wire.written)

    run(main)
    assert "secret internal detail" in caplog.text  # the server's log has it


# -------------------------------------------------------------- connection loss


def test_connection_loss_fails_pending_requests_at_once() -> None:
    server, probe = make_server()

    async def main() -> None:
        async with serving(server, "handshake") as (client, connection, wire):
            pending = [asyncio.create_task(client.call_tool("block", {"key": f"p{i}"})) for i in range(3)]
            for i in range(3):
                await probe.started[f"p{i}"].wait()
            await wire.close()  # the server side goes away
            for task in pending:
                with pytest.raises(ConnectionClosed, match="Connection closed"):
                    await task
            for i in range(3):
                await probe.stopped[f"p{i}"].wait()  # and the server stopped its handlers
            with pytest.raises(ConnectionClosed):
                await client.ping()
            assert_tables_empty(client, connection)

    run(main)
