"""Cancellation over the wire (issue #6; chapter 18.6), both eras: ``ctx.shield``,
``ctx.cancelled``, ignored cancellations, ``initialize``, and a thousand cancelled calls.

Timeouts, the caller's cancellation and late answers are covered in
``tests/runtime/test_runtime.py``; these tests add what a handler can do about a
cancellation and prove nothing is left behind. Each names its CHAPTER-FEATURES lines.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from _lifecycle_harness import ERAS, assert_tables_empty, run, serving, settle, tables, until

from backchannel.protocol.events import ProgressReceived
from backchannel.server import Context, Server
from backchannel.transports.memory import memory_pair
from backchannel.types.errors import RequestTimeout


def _cancel(request_id: Any, reason: str | None = "the user gave up") -> dict[str, Any]:
    params: dict[str, Any] = {"requestId": request_id}
    if reason is not None:
        params["reason"] = reason
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}


# ------------------------------------------------------------------- shielding


@pytest.mark.parametrize("era", ERAS)
def test_shielded_section_finishes_then_no_response_cn08_cn10_cn13(era: str) -> None:
    """CN-08, CN-10, CN-13 (chapter 18.6.2, "cannot be interrupted"): a cancellation during
    ``ctx.shield`` lets the section finish (the commit happens), ``ctx.cancelled`` turns true
    inside it, the caller is released at once, and no answer is ever sent."""
    server = Server("cancel")
    entered = asyncio.Event()
    release = asyncio.Event()
    flags: list[tuple[str, bool]] = []
    committed: list[str] = []
    after_shield: list[str] = []
    progress_refused: list[BaseException] = []

    @server.tool()
    async def transfer(ctx: Context) -> str:
        async def commit() -> str:
            flags.append(("before", ctx.cancelled))
            entered.set()
            await release.wait()
            flags.append(("after", ctx.cancelled))
            try:  # progress for a cancelled request is silently not sent
                await ctx.report_progress(2)
            except Exception as exc:  # pragma: no cover - would be the bug
                progress_refused.append(exc)
            committed.append("row 42")
            return "committed"

        await ctx.report_progress(1)
        outcome = await ctx.shield(commit())
        after_shield.append(outcome)  # never reached: the cancellation is honoured once shielded work is done
        return outcome

    async def main() -> None:
        seen: list[float] = []
        async with serving(server, era) as (client, connection, wire):
            task = asyncio.create_task(client.call_tool("transfer", on_progress=lambda e: seen.append(e.progress)))
            await entered.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert committed == []  # the caller was released before the server finished
            request_id = wire.call_id("transfer")
            await until(lambda: request_id in wire.cancellations())
            assert connection.active_handlers == 1  # still committing
            release.set()
            await until(lambda: connection.active_handlers == 0)
            await settle(client)
            assert committed == ["row 42"]
            assert flags == [("before", False), ("after", True)]
            assert after_shield == []
            assert progress_refused == []
            assert [m["params"]["progress"] for m in wire.notifications_written("notifications/progress")] == [1]
            assert wire.responses_written(request_id) == []
            assert_tables_empty(client, connection)

    run(main)


@pytest.mark.parametrize("era", ERAS)
def test_long_loop_checks_ctx_cancelled_and_stops_cn08_cn09(era: str) -> None:
    """CN-08, CN-09: a shielded loop polls ``ctx.cancelled``, stops cleanly, frees its resource."""
    server = Server("cancel")
    started = asyncio.Event()
    report: dict[str, Any] = {}

    @server.tool()
    async def scan(ctx: Context) -> str:
        async def loop() -> int:
            done = 0
            resource = report.setdefault("resource", {"open": True})
            try:
                while not ctx.cancelled:
                    done += 1
                    if done == 3:
                        started.set()
                    await asyncio.sleep(0.005)
            finally:
                resource["open"] = False
            report["stopped_after"] = done
            return done

        return str(await ctx.shield(loop()))

    async def main() -> None:
        async with serving(server, era) as (client, connection, wire):
            task = asyncio.create_task(client.call_tool("scan"))
            await started.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await until(lambda: "stopped_after" in report)
            await settle(client)
            assert report["stopped_after"] >= 3
            assert report["resource"] == {"open": False}
            assert wire.responses_written(wire.call_id("scan")) == []
            assert_tables_empty(client, connection)

    run(main)


@pytest.mark.parametrize("era", ERAS)
def test_ctx_cancelled_is_false_for_a_request_that_was_not_cancelled(era: str) -> None:
    server = Server("cancel")

    @server.tool()
    async def check(ctx: Context) -> bool:
        value = ctx.cancelled
        return await ctx.shield(asyncio.sleep(0, value))

    async def main() -> None:
        async with serving(server, era) as (client, _, _wire):
            result = await client.call_tool("check")
            assert result.structured_content == {"result": False}

    run(main)


def test_cancellation_reason_reaches_the_handler_cn07() -> None:
    """CN-07: the optional ``reason`` is available to the handler (its ``CancelledError``)."""
    server = Server("cancel")
    started = asyncio.Event()
    reasons: list[tuple[Any, ...]] = []

    @server.tool()
    async def wait(ctx: Context) -> str:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError as exc:
            reasons.append(exc.args)
            raise
        return "unreachable"

    async def main() -> None:
        client_side, server_side = memory_pair()
        serving_task = asyncio.create_task(server.serve(server_side))
        init = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        }
        client_side.write([{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}])
        await client_side.receive()
        client_side.write([{"jsonrpc": "2.0", "method": "notifications/initialized"}])
        client_side.write([{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "wait"}}])
        await started.wait()
        client_side.write([_cancel(2, "user pressed stop")])
        await until(lambda: bool(reasons))
        assert reasons == [("user pressed stop",)]
        await client_side.close()
        await serving_task

    run(main)


# ------------------------------------------------------ ignored cancellations


@pytest.mark.parametrize("era", ERAS)
def test_unknown_finished_and_malformed_cancellations_are_ignored_cn11_cn13_cn16(era: str) -> None:
    """CN-11, CN-13, CN-16: cancellations for unknown or finished requests, or malformed ones,
    change nothing: no error is sent, and the session goes on working."""
    server = Server("cancel")

    @server.tool()
    def echo(text: str) -> str:
        return text

    async def main() -> None:
        async with serving(server, era) as (client, connection, wire):
            await client.call_tool("echo", {"text": "one"})
            finished = wire.call_id("echo")
            written_before = len(wire.written)
            stray: list[dict[str, Any]] = [
                _cancel(finished),
                _cancel(10_000),
                _cancel("no-such-id"),
                _cancel(True),
                _cancel({"nested": 1}),
                _cancel(None),
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}},
                {"jsonrpc": "2.0", "method": "notifications/cancelled"},
            ]
            # Sent on the client's own transport, as a confused client would.
            client.transport.write(stray)  # type: ignore[arg-type]
            await settle(client)
            # Only the settle round trips' answers were written: no error for any cancellation.
            later = wire.written[written_before:]
            assert all("result" in m for m in later), later
            assert connection.session.pending_inbound == 0
            result = await client.call_tool("echo", {"text": "two"})
            assert result.content[0].text == "two"  # type: ignore[union-attr]
            assert_tables_empty(client, connection)

    run(main)


def test_initialize_cannot_be_cancelled_cn03() -> None:
    """CN-03: a cancellation of ``initialize`` (even in the same read) is ignored: it is answered."""
    server = Server("cancel")

    async def main() -> None:
        client_side, server_side = memory_pair()
        serving_task = asyncio.create_task(server.serve(server_side))
        init = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        }
        client_side.write([{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}, _cancel(1)])
        batch = await client_side.receive()
        assert batch is not None
        [answer] = [m for m in batch if m.get("id") == 1]
        assert answer["result"]["protocolVersion"] == "2025-11-25"
        client_side.write([{"jsonrpc": "2.0", "method": "notifications/initialized"}])
        client_side.write([{"jsonrpc": "2.0", "id": 2, "method": "ping"}])
        batch = await client_side.receive()
        assert batch == [{"jsonrpc": "2.0", "id": 2, "result": {}}]
        await client_side.close()
        await serving_task

    run(main)


# -------------------------------------------------------------------- no leaks


def _noop(event: ProgressReceived) -> None:
    return None


@pytest.mark.parametrize("era", ERAS)
def test_a_thousand_cancelled_calls_leave_the_tables_empty_cn09_pg16(era: str) -> None:
    """CN-09, PG-16: 1,000 calls with progress tokens, cancelled at five different moments
    (before the write, in the same read as the request, while the handler runs, inside a
    shielded section, by a timeout), leave no task, pending entry or token on either side."""
    server = Server("cancel")
    started: dict[str, asyncio.Event] = {}
    finished: set[str] = set()

    @server.tool()
    async def hold(key: str, shielded: bool, ctx: Context) -> str:
        await ctx.report_progress(0.5)
        started.setdefault(key, asyncio.Event()).set()
        try:
            if shielded:
                await ctx.shield(asyncio.sleep(0.001))
            await asyncio.Event().wait()
        finally:
            finished.add(key)
        return "unreachable"

    async def main() -> None:
        async with serving(server, era) as (client, connection, wire):
            await client.list_tools()
            baseline = len(asyncio.all_tasks())
            for i in range(1000):
                key = f"k{i}"
                mode = i % 5
                args = {"key": key, "shielded": mode == 3}
                if mode == 4:
                    with pytest.raises(RequestTimeout):
                        await client.call_tool("hold", args, timeout=0.001, on_progress=_noop)
                    continue
                task = asyncio.create_task(client.call_tool("hold", args, on_progress=_noop))
                if mode == 1:
                    await asyncio.sleep(0)  # the request is written, not yet read
                elif mode in (2, 3):
                    await started.setdefault(key, asyncio.Event()).wait()
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
            await until(lambda: connection.active_handlers == 0)
            await settle(client)
            assert_tables_empty(client, connection)
            assert tables(client, connection) == dict.fromkeys(tables(client, connection), 0)
            assert len(asyncio.all_tasks()) == baseline
            assert {k for k, e in started.items() if e.is_set()} <= finished
            ids = {m["id"] for m in wire.tool_calls_received("hold")}
            assert len(ids) == 800  # those cancelled before the write were never sent
            assert set(wire.cancellations()) == ids  # every one that was sent is cancelled on the wire
            assert not [m for m in wire.written if m.get("id") in ids]  # CN-10: not one answer

    run(main, timeout=20.0)
