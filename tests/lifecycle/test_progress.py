"""Progress over the wire (issue #6; chapter 18.5), both eras: ``ctx.report_progress``,
``ctx.stages``, the client's per-call callback and its progress-driven timeout.

The core's progress rules are unit-tested in ``tests/protocol/test_session.py``; these
tests check what a real ``Client`` and ``Server`` put on the wire. Each names the
CHAPTER-FEATURES lines it proves.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from _lifecycle_harness import ERAS, run, serving, settle, until

from backchannel import Client
from backchannel.protocol.events import ProgressReceived
from backchannel.server import Context, Server
from backchannel.transports.memory import MemoryTransport, memory_pair
from backchannel.types.errors import LocalProtocolError, RequestTimeout


def collect() -> tuple[list[ProgressReceived], Any]:
    seen: list[ProgressReceived] = []
    return seen, seen.append


def triples(events: list[ProgressReceived]) -> list[tuple[float, float | None, str | None]]:
    return [(e.progress, e.total, e.message) for e in events]


# ------------------------------------------------------------------ reporting


@pytest.mark.parametrize("era", ERAS)
def test_progress_carries_the_request_token_total_and_message_pg01_pg04_pg07(era: str) -> None:
    """PG-01, PG-04, PG-07: the server echoes the client's token; progress, total and message arrive."""
    server = Server("progress")

    @server.tool()
    async def analyze(ctx: Context) -> str:
        for i in (1, 2, 3):
            await ctx.report_progress(i * 50, total=150, message=f"file {i}/3")
        return "done"

    async def main() -> None:
        seen, on_progress = collect()
        async with serving(server, era) as (client, _, wire):
            await client.call_tool("analyze", on_progress=on_progress)
            token = wire.tool_calls_received("analyze")[0]["params"]["_meta"]["progressToken"]
            assert type(token) in (int, str)  # PG-01
            sent = wire.notifications_written("notifications/progress")
            assert [m["params"]["progressToken"] for m in sent] == [token] * 3
            assert [m["params"]["progress"] for m in sent] == [50, 100, 150]
            assert triples(seen) == [(50, 150, "file 1/3"), (100, 150, "file 2/3"), (150, 150, "file 3/3")]
            assert {e.token for e in seen} == {token}
            # PG-18: every progress notification was written before the answer.
            answer_at = wire.written.index(wire.responses_written(wire.call_id("analyze"))[0])
            assert all(wire.written.index(m) < answer_at for m in sent)

    run(main)


@pytest.mark.parametrize("era", ERAS)
def test_floats_and_unknown_total_pg06_pg12(era: str) -> None:
    """PG-06, PG-12: fractional progress and total; ``total`` left out when unknown."""
    server = Server("progress")

    @server.tool()
    async def stream(ctx: Context) -> str:
        await ctx.report_progress(0.25, total=1.5)
        await ctx.report_progress(0.5)  # streaming: the total is unknown
        await ctx.report_progress(1024.75, message="bytes")
        return "ok"

    async def main() -> None:
        seen, on_progress = collect()
        async with serving(server, era) as (client, _, wire):
            await client.call_tool("stream", on_progress=on_progress)
            params = [m["params"] for m in wire.notifications_written("notifications/progress")]
            assert [p["progress"] for p in params] == [0.25, 0.5, 1024.75]
            assert params[0]["total"] == 1.5
            assert "total" not in params[1] and "total" not in params[2]
            assert "message" not in params[0]
            assert triples(seen) == [(0.25, 1.5, None), (0.5, None, None), (1024.75, None, "bytes")]

    run(main)


@pytest.mark.parametrize("era", ERAS)
def test_report_progress_is_a_no_op_without_a_token_pg03_pg10(era: str) -> None:
    """PG-03, PG-10: no ``progressToken`` in the request, so nothing is sent and nothing fails."""
    server = Server("progress")

    @server.tool()
    async def work(ctx: Context) -> str:
        for i in range(5):
            await ctx.report_progress(i)
        await ctx.report_progress(0)  # would be a decrease, but there is no token: still a no-op
        await ctx.stages(["a", "b"]).report("b", 1.0)
        return "finished"

    async def main() -> None:
        async with serving(server, era) as (client, _, wire):
            result = await client.call_tool("work")
            assert not result.is_error
            assert "progressToken" not in (wire.tool_calls_received("work")[0]["params"].get("_meta") or {})
            assert wire.notifications_written("notifications/progress") == []

    run(main)


@pytest.mark.parametrize("era", ERAS)
def test_decreasing_or_repeated_progress_is_refused_locally_pg05(era: str) -> None:
    """PG-05: a value that does not increase raises ``LocalProtocolError`` and is not sent."""
    server = Server("progress")
    refused: list[str] = []

    @server.tool()
    async def wobbly(ctx: Context) -> str:
        await ctx.report_progress(5, total=10)
        for bad in (3, 5):
            try:
                await ctx.report_progress(bad, total=10)
            except LocalProtocolError as exc:
                refused.append(str(exc))
        await ctx.report_progress(6, total=10)
        return "ok"

    async def main() -> None:
        seen, on_progress = collect()
        async with serving(server, era) as (client, _, wire):
            await client.call_tool("wobbly", on_progress=on_progress)
            assert [m["params"]["progress"] for m in wire.notifications_written("notifications/progress")] == [5, 6]
            assert [e.progress for e in seen] == [5, 6]
            assert len(refused) == 2
            assert all("must increase" in message for message in refused)

    run(main)


@pytest.mark.parametrize("era", ERAS)
def test_progress_after_the_response_is_refused_pg08_pg09_pg18(era: str) -> None:
    """PG-08, PG-09, PG-18: a context kept past its answer cannot send progress for that token."""
    server = Server("progress")
    kept: list[Context] = []

    @server.tool()
    async def quick(ctx: Context) -> str:
        await ctx.report_progress(1)
        kept.append(ctx)
        return "answered"

    async def main() -> None:
        seen, on_progress = collect()
        async with serving(server, era) as (client, connection, wire):
            await client.call_tool("quick", on_progress=on_progress)
            with pytest.raises(LocalProtocolError, match="after its response"):
                await kept[0].report_progress(2)
            await settle(client)
            assert [m["params"]["progress"] for m in wire.notifications_written("notifications/progress")] == [1]
            assert [e.progress for e in seen] == [1]
            assert connection.session.active_progress_tokens == 0
            assert client.session.active_progress_tokens == 0  # PG-16

    run(main)


# --------------------------------------------------------------------- stages


@pytest.mark.parametrize("era", ERAS)
def test_stages_map_onto_one_increasing_total_pg05_pg07(era: str) -> None:
    """PG-05, PG-07 (chapter 18.5.3): stages share one total; the stage rides in ``message``."""
    server = Server("progress")

    @server.tool()
    async def pipeline(ctx: Context) -> str:
        stages = ctx.stages(["build", "test"])
        await stages.report("build", 0.5)
        await stages.report("build", 1.0, "build done")
        await stages.report("test", 0.0)  # the start of stage 2 is the end of stage 1: skipped, not sent
        await stages.report("test", 0.5, "tests 50%")
        await stages.report("test", 1.0, "tests done")
        return "ok"

    async def main() -> None:
        seen, on_progress = collect()
        async with serving(server, era) as (client, _, wire):
            await client.call_tool("pipeline", on_progress=on_progress)
            assert triples(seen) == [
                (25.0, 100.0, "Stage 1/2 (build)"),
                (50.0, 100.0, "Stage 1/2 (build): build done"),
                (75.0, 100.0, "Stage 2/2 (test): tests 50%"),
                (100.0, 100.0, "Stage 2/2 (test): tests done"),
            ]
            assert len(wire.notifications_written("notifications/progress")) == 4

    run(main)


def test_stage_weights_and_custom_total_pg06() -> None:
    """PG-06: weighted stages on a fractional total."""
    server = Server("progress")

    @server.tool()
    async def weighted(ctx: Context) -> str:
        stages = ctx.stages({"download": 3, "unpack": 1}, total=1.0)
        await stages.report("download", 1 / 3)
        await stages.report("download", 1.0)
        await stages.report("unpack", 0.5, "half")
        await stages.report("unpack", 1.0)
        return "ok"

    async def main() -> None:
        seen, on_progress = collect()
        async with serving(server) as (client, _, _wire):
            await client.call_tool("weighted", on_progress=on_progress)
            assert [e.progress for e in seen] == pytest.approx([0.25, 0.75, 0.875, 1.0])
            assert {e.total for e in seen} == {1.0}
            assert [e.message for e in seen] == [
                "Stage 1/2 (download)",
                "Stage 1/2 (download)",
                "Stage 2/2 (unpack): half",
                "Stage 2/2 (unpack)",
            ]

    run(main)


@pytest.mark.parametrize("era", ERAS)
def test_going_back_a_stage_raises_and_sends_nothing_pg05(era: str) -> None:
    """PG-05: the "percentage trap": restarting a stage, or an earlier one, is a ``ValueError``."""
    server = Server("progress")
    errors: list[str] = []

    @server.tool()
    async def confused(ctx: Context) -> str:
        stages = ctx.stages(["build", "test"])
        await stages.report("test", 0.5)
        for stage, fraction in (("build", 1.0), ("test", 0.25), ("deploy", 0.1), ("test", 1.5)):
            try:
                await stages.report(stage, fraction)
            except ValueError as exc:
                errors.append(str(exc))
        await stages.report("test", 1.0)
        return "ok"

    async def main() -> None:
        seen, on_progress = collect()
        async with serving(server, era) as (client, _, wire):
            await client.call_tool("confused", on_progress=on_progress)
            assert [m["params"]["progress"] for m in wire.notifications_written("notifications/progress")] == [
                75.0,
                100.0,
            ]
            assert [e.progress for e in seen] == [75.0, 100.0]
            assert len(errors) == 4
            assert "move progress back" in errors[0] and "move progress back" in errors[1]
            assert "unknown stage" in errors[2]
            assert "between 0 and 1" in errors[3]

    run(main)


def test_stages_need_at_least_one_positively_weighted_stage() -> None:
    server = Server("progress")
    problems: list[str] = []

    @server.tool()
    async def bad(ctx: Context) -> str:
        for spec in ([], {"a": 0}, {"a": 1, "b": -1}):
            try:
                ctx.stages(spec)
            except ValueError as exc:
                problems.append(str(exc))
        return "ok"

    async def main() -> None:
        async with serving(server) as (client, _, _wire):
            await client.call_tool("bad")
            assert len(problems) == 3

    run(main)


# --------------------------------------------------------------------- client


@pytest.mark.parametrize("era", ERAS)
def test_tokens_unique_among_active_requests_and_routed_per_call_pg02_pg16(era: str) -> None:
    """PG-02, PG-16: concurrent calls get distinct tokens; each callback sees only its own call."""
    server = Server("progress")
    running = 0
    all_in = asyncio.Event()
    n = 8

    @server.tool()
    async def numbered(key: int, ctx: Context) -> str:
        nonlocal running
        running += 1
        if running == n:
            all_in.set()
        await all_in.wait()  # every call is active at once
        for step in range(1, 4):
            await ctx.report_progress(key * 10 + step)
            await asyncio.sleep(0)
        return str(key)

    async def main() -> None:
        callbacks = [collect() for _ in range(n)]
        async with serving(server, era) as (client, connection, wire):
            await asyncio.gather(
                *(client.call_tool("numbered", {"key": k}, on_progress=callbacks[k][1]) for k in range(n))
            )
            tokens = [m["params"]["_meta"]["progressToken"] for m in wire.tool_calls_received("numbered")]
            assert len(set(tokens)) == n
            for key, (seen, _) in enumerate(callbacks):
                assert [e.progress for e in seen] == [key * 10 + 1, key * 10 + 2, key * 10 + 3]
                assert len({e.token for e in seen}) == 1
            assert client.session.active_progress_tokens == 0
            assert connection.session.active_progress_tokens == 0

    run(main)


def test_client_ignores_non_increasing_and_late_progress_pg05_pg18() -> None:
    """PG-05, PG-08, PG-18 (receiving side): a misbehaving server's progress is filtered."""
    client_side, peer = memory_pair()

    async def misbehaving(transport: MemoryTransport) -> None:
        while (batch := await transport.receive()) is not None:
            for m in batch:
                if m.get("method") == "initialize":
                    result = {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "x"},
                    }
                    transport.write([{"jsonrpc": "2.0", "id": m["id"], "result": result}])
                elif m.get("method") == "tools/call":
                    token = m["params"]["_meta"]["progressToken"]

                    def progress(value: float, tok: Any = token) -> dict[str, Any]:
                        return {
                            "jsonrpc": "2.0",
                            "method": "notifications/progress",
                            "params": {"progressToken": tok, "progress": value},
                        }

                    answer = {"jsonrpc": "2.0", "id": m["id"], "result": {"content": []}}
                    transport.write(
                        [
                            *(progress(v) for v in (1, 1, 0.5, 2)),
                            progress(3, "stranger"),
                            answer,
                            progress(9),
                        ]
                    )
                elif m.get("method") == "ping":
                    transport.write([{"jsonrpc": "2.0", "id": m["id"], "result": {}}])

    async def main() -> None:
        seen, on_progress = collect()
        peer_task = asyncio.create_task(misbehaving(peer))
        async with Client(client_side, era="handshake") as client:
            await client.call_tool("anything", on_progress=on_progress)
            await client.ping()  # the late progress has been read by now
            assert [e.progress for e in seen] == [1, 2]
            assert client.session.active_progress_tokens == 0
        await peer_task

    run(main)


@pytest.mark.parametrize("era", ERAS)
def test_progress_resets_the_timeout_but_max_timeout_ends_the_call_pg11(era: str) -> None:
    """PG-11: a slow but progressing call outlives ``timeout``; ``max_timeout`` still ends it,
    raising ``RequestTimeout`` and cancelling the request on the wire (CN-08, CN-10)."""
    server = Server("progress")
    stopped: list[str] = []

    @server.tool()
    async def ticking(ticks: int, ctx: Context) -> str:
        try:
            for i in range(1, ticks + 1):
                await asyncio.sleep(0.02)
                await ctx.report_progress(i)
        except asyncio.CancelledError:
            stopped.append("cancelled")
            raise
        return f"{ticks} ticks"

    async def main() -> None:
        async with serving(server, era) as (client, connection, wire):
            loop = asyncio.get_running_loop()
            # 30 ticks of 20 ms: ~0.6 s in all, three times the 0.2 s timeout, yet never 0.2 s silent.
            started = loop.time()
            result = await client.call_tool(
                "ticking", {"ticks": 30}, timeout=0.2, on_progress=lambda e: None, progress_resets_timeout=True
            )
            assert loop.time() - started > 0.2
            assert not result.is_error
            # Without the reset, the same call times out.
            with pytest.raises(RequestTimeout):
                await client.call_tool("ticking", {"ticks": 30}, timeout=0.2)
            await until(lambda: len(stopped) == 1)
            # A call that never ends: progress keeps it alive until max_timeout, then it is cancelled.
            seen, on_progress = collect()
            started = loop.time()
            with pytest.raises(RequestTimeout):
                await client.call_tool(
                    "ticking",
                    {"ticks": 10_000},
                    timeout=0.2,
                    on_progress=on_progress,
                    progress_resets_timeout=True,
                    max_timeout=0.45,
                )
            assert loop.time() - started >= 0.45 - 0.01
            assert len(seen) > 3  # it was progressing all along
            request_id = wire.call_id("ticking")
            await until(lambda: len(stopped) == 2)
            await settle(client)
            assert request_id in wire.cancellations()
            assert wire.responses_written(request_id) == []
            assert client.session.active_progress_tokens == 0
            assert connection.session.active_progress_tokens == 0

    run(main)


def test_progress_resets_timeout_without_a_callback_still_asks_for_progress_pg03() -> None:
    """PG-03: ``progress_resets_timeout`` alone puts a ``progressToken`` in the request (else no
    progress could ever extend the timeout). Regression: it used to need ``on_progress`` too."""
    server = Server("progress")

    @server.tool()
    async def ticking(ctx: Context) -> str:
        for i in range(1, 16):
            await asyncio.sleep(0.02)
            await ctx.report_progress(i)
        return "ok"

    async def main() -> None:
        async with serving(server) as (client, _, wire):
            result = await client.call_tool("ticking", timeout=0.1, progress_resets_timeout=True)
            assert not result.is_error
            assert "progressToken" in (wire.tool_calls_received("ticking")[0]["params"].get("_meta") or {})

    run(main)


def test_progress_heavy_work_is_not_slowed_by_its_notifications_pg11_pg17() -> None:
    """PG-11, PG-17: ``report_progress`` does not wait for the wire while the client keeps up.
    20,000 reports run with the handler giving the loop one turn per batch of 256 written
    (so that a cancellation is read, issue #19), never one per report."""
    server = Server("progress")
    count = 20_000
    yields_during_loop: list[int] = []

    @server.tool()
    async def crunch(ctx: Context) -> str:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        background = asyncio.create_task(ticker())
        await asyncio.sleep(0)
        before = ticks
        for i in range(1, count + 1):
            await ctx.report_progress(i, total=count)
        yields_during_loop.append(ticks - before)
        background.cancel()
        return "crunched"

    async def main() -> None:
        seen: list[float] = []
        async with serving(server) as (client, _, wire):
            await client.call_tool("crunch", on_progress=lambda e: seen.append(e.progress))
            [yields] = yields_during_loop
            assert yields <= count // 256 + 1
            assert len(seen) == count
            assert seen == sorted(set(seen))
            assert len(wire.notifications_written("notifications/progress")) == count

    run(main)


def test_a_failing_progress_callback_does_not_break_the_call(caplog: pytest.LogCaptureFixture) -> None:
    server = Server("progress")

    @server.tool()
    async def two(ctx: Context) -> str:
        await ctx.report_progress(1)
        await ctx.report_progress(2)
        return "ok"

    def broken(event: ProgressReceived) -> None:
        raise RuntimeError("callback bug")

    async def main() -> None:
        async with serving(server) as (client, _, _wire):
            result = await client.call_tool("two", on_progress=broken)
            assert not result.is_error
            await client.ping()

    run(main)
    assert "progress callback failed" in caplog.text
