"""Parallel sub-task progress (issue #18, chapter 18.9 Q4): ``ctx.progress_parts`` folds
concurrent parts into one stream. On the wire, through a real ``Client``: it only increases
(PG-05), ends at the total, carries the total only once no more parts can join, and its
messages name the part that moved.
"""

from __future__ import annotations

import asyncio
import itertools
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backchannel import Context, Server
from backchannel.progress.parts import ProgressParts
from backchannel.protocol.events import ProgressReceived
from backchannel.testing import Tap, connected, run
from backchannel.types.content import TextContent
from backchannel.types.versions import Era

ERAS: tuple[Era, ...] = ("handshake", "stateless")


def fan_out_server() -> Server:
    """``fan_out(plan)`` runs each part in a task of its own; the tasks take turns in the
    plan's order (the interleaving), adding parts as they first move unless declared."""
    server = Server("parts")

    @server.tool()
    async def fan_out(ctx: Context, plan: dict[str, Any]) -> str:
        names = [f"p{index}" for index in range(len(plan["weights"]))]
        weights = dict(zip(names, plan["weights"], strict=True))
        steps = plan["steps"]
        turns = [asyncio.Event() for _ in range(len(steps) + 1)]
        async with ctx.progress_parts(weights if plan["declared"] else None, total=plan["total"]) as parts:

            def before(step: int) -> None:
                if step == plan["close_at"]:
                    for name in names:
                        if name not in parts:
                            parts.add(name, weights[name])
                    parts.all_added()

            async def run_part(index: int) -> None:
                name = names[index]
                for step in (i for i, (owner, *_) in enumerate(steps) if owner == index):
                    await turns[step].wait()
                    before(step)
                    part = parts[name] if name in parts else parts.add(name, weights[name])
                    _, kind, amount, of = steps[step]
                    if not part.finished:
                        if kind == "advance":
                            await part.advance(amount, of=of)
                        elif kind == "update":
                            await part.update(amount, of=of)
                        else:
                            await part.finish()
                    turns[step + 1].set()

            turns[0].set()
            async with asyncio.TaskGroup() as group:
                for index in range(len(names)):
                    group.create_task(run_part(index))
            before(len(steps))
        return "done"

    return server


async def call(server: Server, era: Era, plan: dict[str, Any]) -> tuple[list[dict[str, Any]], list[ProgressReceived]]:
    """The progress params the server wrote, and the progress the client's callback saw."""
    tap = Tap()
    seen: list[ProgressReceived] = []
    async with connected(server, era, wrap_server=tap.around) as client:
        result = await client.call_tool("fan_out", {"plan": plan}, on_progress=seen.append)
        assert not result.is_error, result
    return [m["params"] for m in tap.notifications_written("notifications/progress")], seen


@st.composite
def plans(draw: st.DrawFn) -> dict[str, Any]:
    count = draw(st.integers(1, 4))
    weights = draw(st.lists(st.sampled_from([0.5, 1, 2, 3]), min_size=count, max_size=count))
    step = st.tuples(
        st.integers(0, count - 1),
        st.sampled_from(["advance", "update", "finish"]),
        st.integers(0, 40),
        st.one_of(st.none(), st.integers(1, 60)),
    )
    steps = [list(s) for s in draw(st.lists(step, max_size=24))]
    declared = draw(st.booleans())
    close_at = None if declared else draw(st.one_of(st.none(), st.integers(0, len(steps))))
    total = draw(st.sampled_from([1, 100, 7.5]))
    return {"weights": weights, "steps": steps, "declared": declared, "close_at": close_at, "total": total}


SERVER = fan_out_server()


@pytest.mark.parametrize("era", ERAS)
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=plans())
def test_any_interleaving_only_increases_and_ends_at_the_total(era: Era, plan: dict[str, Any]) -> None:
    """Whatever the parts, weights, sizes (known, unknown, revised) and interleaving, the
    values the server writes strictly increase, stay within the total and end exactly at it;
    the total appears once no more parts can join and stays; the client sees every one."""
    sent, seen = run(call(SERVER, era, plan))
    values = [p["progress"] for p in sent]
    assert values, "the end of the block always reports the total"
    assert all(a < b for a, b in itertools.pairwise(values)), values
    assert all(0 <= v <= plan["total"] for v in values)
    assert values[-1] == plan["total"] and sent[-1]["total"] == plan["total"]
    with_total = [("total" in p) for p in sent]
    assert with_total == sorted(with_total)  # once the total is known it stays
    assert all(p["total"] == plan["total"] for p in sent if "total" in p)
    if plan["declared"]:
        assert all(with_total)
    assert [(e.progress, e.total, e.message) for e in seen] == [
        (p["progress"], p.get("total"), p.get("message")) for p in sent
    ]
    names = {f"p{i}" for i in range(len(plan["weights"]))}
    for p in sent[:-1]:
        assert p["message"].split(" ")[0].rstrip(":") in names, p
    assert sent[-1]["message"].startswith(("all ", *(f"{name} " for name in names)))


# ------------------------------------------------------------------ what it reads like


@pytest.mark.parametrize("era", ERAS)
def test_weights_fold_into_one_scale_and_messages_name_the_part(era: Era) -> None:
    server = Server("parts")

    @server.tool()
    async def build(ctx: Context) -> str:
        async with ctx.progress_parts({"download": 3, "index": 1}) as parts:
            download, index = parts["download"], parts["index"]
            await download.advance(50, of=100)  # half of three quarters
            await index.update(1, of=2, message="parsing")
            await download.finish()
        return "built"

    async def main() -> None:
        seen: list[ProgressReceived] = []
        async with connected(server, era) as client:
            await client.call_tool("build", on_progress=seen.append)
        assert [(e.progress, e.total, e.message) for e in seen] == [
            (37.5, 100, "download 50/100"),
            (50.0, 100, "index: parsing"),
            (87.5, 100, "download done (1 of 2 parts)"),
            (100.0, 100, "all 2 parts done"),
        ]

    run(main)


@pytest.mark.parametrize("era", ERAS)
def test_the_total_is_sent_once_no_more_parts_can_join(era: Era) -> None:
    """Parts join while others run: no ``total`` until ``all_added()``; a joining part holds
    the stream (the estimate fell) instead of sending a smaller value."""
    server = Server("parts")

    @server.tool()
    async def crawl(ctx: Context) -> str:
        async with ctx.progress_parts(total=10) as parts:
            first = parts.add("a")
            await first.finish()
            second = parts.add("b")
            await second.advance(1, of=10)  # the estimate fell from 1/2 to 11/30: held
            await second.advance(8)
            parts.all_added()
            await second.advance(1)
        return "crawled"

    async def main() -> None:
        tap = Tap()
        async with connected(server, era, wrap_server=tap.around) as client:
            await client.call_tool("crawl", on_progress=lambda _: None)
        sent = [m["params"] for m in tap.notifications_written("notifications/progress")]
        assert [("total" in p, p["message"]) for p in sent] == [
            (False, "a done (1 of 1 part so far)"),
            (False, "b 9/10"),
            (True, "b done (2 of 2 parts)"),
        ]
        assert sent[0]["progress"] == 5  # one part of an unknown number, counted as one of two
        assert sent[0]["progress"] < sent[1]["progress"] < sent[2]["progress"] == 10

    run(main)


def test_a_part_of_unknown_size_keeps_moving_until_its_size_is_known() -> None:
    """Without a size, each update moves the part a tenth of the way to half done; the real
    fraction takes over when the size arrives."""

    async def main() -> None:
        reporter = Reporter()
        download = ProgressParts(reporter, ["download"], total=100)["download"]
        for _ in range(3):
            await download.advance(1024)
        await download.advance(1024, of=16384)
        await download.advance(12288)
        assert reporter.sent == [
            (pytest.approx(5.0), 100, "download 1024"),
            (pytest.approx(9.5), 100, "download 2048"),
            (pytest.approx(13.55), 100, "download 3072"),
            (25.0, 100, "download 4096/16384"),
            (100.0, 100, "download done (1 of 1 part)"),
        ]

    run(main)


def test_a_part_bigger_than_it_looked_holds_the_stream_then_moves_on() -> None:
    """A size that makes the part smaller than estimated does not move the stream back:
    nothing is sent until the part passes where the stream stood, and then the rest of the
    part fills the rest of the scale."""

    async def main() -> None:
        reporter = Reporter()
        download = ProgressParts(reporter, ["download"], total=100)["download"]
        await download.advance(10)
        await download.advance(10)  # 9.5 of 100, estimated
        await download.update(20, of=1000)  # really 2%: held
        await download.update(510)  # half of what was left after 2%, from 9.5
        await download.update(1000)
        values = [value for value, _, _ in reporter.sent]
        assert values == [pytest.approx(5.0), pytest.approx(9.5), pytest.approx(9.5 + 90.5 * 0.5), 100.0]
        assert reporter.sent[2][2] == "download 510/1000"

    run(main)


def test_leaving_the_block_with_an_error_sends_no_total() -> None:
    async def main() -> None:
        reporter = Reporter()
        with pytest.raises(RuntimeError):
            async with ProgressParts(reporter, ["a", "b"], total=10) as parts:
                await parts["a"].finish()
                raise RuntimeError("b failed")
        assert [v for v, _, _ in reporter.sent] == [5]
        with pytest.raises(ValueError, match="ended"):
            await parts["b"].advance()

    run(main)


def test_a_reporter_that_yields_cannot_let_a_smaller_value_overtake() -> None:
    """Computing a value and sending it happen under one lock: with a reporter that takes
    longer for the first value, the second still comes after it."""

    class Slow(Reporter):
        async def report_progress(
            self, progress: float, total: float | None = None, message: str | None = None
        ) -> None:
            for _ in range(5 if not self.sent and progress < 50 else 0):
                await asyncio.sleep(0)
            await super().report_progress(progress, total, message)

    async def main() -> None:
        reporter = Slow()
        parts = ProgressParts(reporter, ["a", "b"], total=100)
        await asyncio.gather(parts["a"].advance(1, of=2), parts["b"].finish())
        assert [v for v, _, _ in reporter.sent] == [25, 75]

    run(main)


@pytest.mark.parametrize(
    ("misuse", "problem"),
    [
        (lambda parts: parts.add("a"), "all parts were added"),
        (lambda parts: ProgressParts(Reporter(), ["x"]).add("x"), "all parts were added"),
        (lambda parts: ProgressParts(Reporter()).add("x", weight=0), "weight must be more than 0"),
        (lambda parts: ProgressParts(Reporter(), total=math.inf), "total must be a finite number"),
        (lambda parts: parts["a"].update(-1), "done must be a finite number, 0 or more"),
        (lambda parts: parts["a"].advance(True), "by must be a finite number"),
        (lambda parts: parts["a"].advance(1, of=0), "of must be more than 0"),
        (lambda parts: parts["a"].update(math.nan), "done must be a finite number"),
    ],
)
def test_misuse_is_a_value_error_that_says_what_to_fix(misuse: Any, problem: str) -> None:
    async def main() -> None:
        parts = ProgressParts(Reporter(), ["a"])
        with pytest.raises(ValueError, match=problem):
            outcome = misuse(parts)
            if asyncio.iscoroutine(outcome):
                await outcome
        fresh = ProgressParts(Reporter())
        fresh.add("a")
        with pytest.raises(ValueError, match="there is a part named 'a' already"):
            fresh.add("a")
        await parts["a"].finish()
        await parts["a"].finish()  # again: nothing happens
        with pytest.raises(ValueError, match="is finished"):
            await parts["a"].advance()

    run(main)


def test_without_a_progress_token_nothing_is_sent_and_nothing_fails() -> None:
    server = fan_out_server()
    plan = {"weights": [1, 2], "steps": [[0, "advance", 3, 4], [1, "finish", 0, None]], "declared": True}

    async def main() -> None:
        tap = Tap()
        async with connected(server, "handshake", wrap_server=tap.around) as client:
            result = await client.call_tool("fan_out", {"plan": {**plan, "close_at": None, "total": 100}})
        assert result.content == [TextContent(text="done")]
        assert tap.notifications_written("notifications/progress") == []

    run(main)


class Reporter:
    """Keeps what a ``ProgressParts`` sends (the values, totals and messages), in order."""

    def __init__(self) -> None:
        self.sent: list[tuple[float, float | None, str | None]] = []

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        self.sent.append((progress, total, message))
