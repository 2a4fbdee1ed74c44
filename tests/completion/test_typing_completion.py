"""The terminal client's completion as a person types (CP-12: clients SHOULD debounce; CP-13: cache).

A field the server completes asks it only once typing has paused (``DEBOUNCE``), keeps at most one
``completion/complete`` in flight, and cancels on the wire the one a keystroke made stale. Time is
a fake clock here, so what is asserted is counted, never timed: requests on the wire, cancellations
on the wire, completers running at once on the server. ``benchmarks/completion_burst.py`` serves
the server and types through the real question (prompt_toolkit reading a pipe as its keyboard).
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from _completion_harness import ERAS, connected, run

from backchannel.testing import Tap
from backchannel.testing import connected as kit_connected
from backchannel.ui.completion import DEBOUNCE, TypingCompleter, server_fetch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import completion_burst as bench


class ManualTime:
    """A clock that moves only when the test says, and a ``sleep`` that waits on it."""

    def __init__(self) -> None:
        self.now = 1_000.0
        self._sleepers: list[tuple[float, asyncio.Future[None]]] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        entry = (self.now + seconds, asyncio.get_running_loop().create_future())
        self._sleepers.append(entry)
        try:
            await entry[1]
        finally:
            self._sleepers.remove(entry)

    async def advance(self, seconds: float) -> None:
        self.now += seconds
        for deadline, future in list(self._sleepers):
            if deadline <= self.now and not future.done():
                future.set_result(None)
        for _ in range(20):  # let what woke, and what it set going over the in-memory wire, run
            await asyncio.sleep(0)


async def until(condition: Callable[[], bool], what: str, bound: float = 10.0) -> None:
    deadline = time.monotonic() + bound
    while not condition():
        assert time.monotonic() < deadline, f"no {what} within {bound} s"
        await asyncio.sleep(0.001)


def completions_asked(tap: Tap) -> list[str]:
    return [message["params"]["argument"]["value"] for message in tap.requests_received("completion/complete")]


@pytest.mark.parametrize("era", ERAS)
def test_keystrokes_within_the_debounce_cost_one_request(era: str) -> None:
    """CP-12: asked on every keystroke (as a completer would be), the server hears only the last."""
    clock, tap = ManualTime(), Tap()

    async def body() -> None:
        async with kit_connected(bench.make_server(), era, wrap_server=tap.around) as client:  # type: ignore[arg-type]
            fetch = server_fetch(client, {"type": "ref/prompt", "name": "pick"}, "language", {})
            assert fetch is not None
            typing = TypingCompleter(fetch, clock=clock, sleep=clock.sleep)
            asked = []
            for text in ("p", "py", "pyt", "pyth"):
                typing.typed(text)
                asked.append(asyncio.ensure_future(typing(text)))
                await clock.advance(DEBOUNCE / 3)
            await clock.advance(DEBOUNCE)
            answers = await asyncio.gather(*asked)
            assert answers == [[], [], [], ["python"]]
            assert completions_asked(tap) == ["pyth"]
            assert await typing("pyth") == ["python"]  # CP-13: asked again, answered from the last answer
            assert completions_asked(tap) == ["pyth"]
            assert (typing.sent, typing.cancelled, typing.max_in_flight) == (1, 0, 1)

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_a_request_typed_over_is_cancelled_on_the_wire_before_the_next_is_sent(era: str) -> None:
    clock, tap = ManualTime(), Tap()

    async def body() -> None:
        server = bench.make_server(hold=["py"])  # its completer for "py" ends only when cancelled
        async with kit_connected(server, era, wrap_server=tap.around) as client:  # type: ignore[arg-type]
            fetch = server_fetch(client, {"type": "ref/prompt", "name": "pick"}, "language", {})
            assert fetch is not None
            typing = TypingCompleter(fetch, clock=clock, sleep=clock.sleep)
            typing.typed("py")
            stale = asyncio.ensure_future(typing("py"))
            await clock.advance(DEBOUNCE)
            await until(lambda: completions_asked(tap) == ["py"], "request for 'py'")
            typing.typed("pyt")
            fresh = asyncio.ensure_future(typing("pyt"))
            assert await stale == []
            await until(lambda: len(tap.notifications_received("notifications/cancelled")) == 1, "cancellation")
            [stale_request] = tap.requests_received("completion/complete")
            [cancel] = tap.notifications_received("notifications/cancelled")
            assert cancel["params"]["requestId"] == stale_request["id"]
            assert completions_asked(tap) == ["py"]  # the next waits for the pause
            await clock.advance(DEBOUNCE)
            assert await fresh == ["python", "pytorch", "pytest"]
            assert completions_asked(tap) == ["py", "pyt"]
            # The cancellation crossed the wire before the next request did.
            order = [m.get("method") for m in tap.received if m.get("method") != "notifications/initialized"]
            assert order[-3:] == ["completion/complete", "notifications/cancelled", "completion/complete"]
            assert (typing.sent, typing.cancelled, typing.max_in_flight) == (2, 1, 1)
            stats = (await client.call_tool("stats", {})).structured_content
            assert stats == {"received": 2, "cancelled": 1, "running": 0, "max_running": 1}

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_over_http_the_stale_request_ends_on_the_server_too(era: str, tmp_path: Path) -> None:
    """Streamable HTTP on a loopback socket: the handshake era sends ``notifications/cancelled``,
    the stateless era closes the request's stream; either way the server's completer is cancelled.
    (Not asserted here: one at a time on the server. Over HTTP the cancellation and the next
    request travel on different connections, so the server may start the next first.)"""
    clock, log = ManualTime(), tmp_path / "completions.log"

    def logged() -> list[str]:
        return log.read_text().splitlines() if log.exists() else []

    async def body() -> None:
        server = bench.make_server(log=log, hold=["py"])
        async with kit_connected(server, era, transport="http") as client:  # type: ignore[arg-type]
            fetch = server_fetch(client, {"type": "ref/prompt", "name": "pick"}, "language", {})
            assert fetch is not None
            typing = TypingCompleter(fetch, clock=clock, sleep=clock.sleep)
            stale = asyncio.ensure_future(typing("py"))
            await until(lambda: "start py 1" in logged(), "the server running 'py'")
            typing.typed("pyt")
            assert await stale == []
            fresh = asyncio.ensure_future(typing("pyt"))
            await clock.advance(DEBOUNCE)
            assert await fresh == ["python", "pytorch", "pytest"]
            await until(lambda: "cancelled py" in logged(), "the server cancelling 'py'")
            assert (typing.sent, typing.cancelled, typing.max_in_flight) == (2, 1, 1)

    run(body)


def test_the_next_request_waits_for_the_stale_one_to_finish_however_long_that_takes() -> None:
    """Tab alone (no debounce to wait out) right after a stale request: a transport may take a few
    steps to finish a cancelled request (an HTTP stream closing), and until it has, the next one
    is not sent."""
    clock = ManualTime()

    async def body() -> None:
        async with connected(bench.make_server(hold=["py"]), "handshake") as client:
            fetch = server_fetch(client, {"type": "ref/prompt", "name": "pick"}, "language", {})
            assert fetch is not None

            async def slow_to_finish(text: str) -> list[str]:
                try:
                    return await fetch(text)
                except asyncio.CancelledError:
                    for _ in range(5):
                        await asyncio.sleep(0)
                    raise

            typing = TypingCompleter(slow_to_finish, clock=clock, sleep=clock.sleep)
            stale = asyncio.ensure_future(typing("py"))
            await until(lambda: typing.in_flight == 1, "request for 'py'")
            assert await typing("pyt") == ["python", "pytorch", "pytest"]
            assert await stale == []
            assert (typing.sent, typing.cancelled, typing.max_in_flight) == (2, 1, 1)

    run(body)


# ---------------------------------------------------- through the terminal's question (prompt_toolkit)


@pytest.mark.parametrize("era", ERAS)
def test_a_burst_of_keystrokes_in_the_terminal_costs_one_request(era: str) -> None:
    """The benchmark's burst, 40 keystrokes 30 ms apart on a fake clock: one request, never two in flight."""
    clock = ManualTime()

    async def body() -> None:
        async with connected(bench.make_server(), era) as client:
            plan = bench.burst_plan(40, 0.03, DEBOUNCE)
            counts = await bench.type_plan(client, plan, clock=clock, sleep=clock.sleep, pause=clock.advance)
        assert counts == bench.Counts(
            keystrokes=40,
            sent=1,
            cancelled=0,
            max_in_flight=1,
            server_received=1,
            server_cancelled=0,
            server_max_running=1,
        )

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_pauses_in_the_terminal_cost_one_request_each_and_a_stale_one_is_cancelled(era: str) -> None:
    """The benchmark's hesitant typist: a pause after every 5th of 40 keystrokes. The server holds
    each answer but the last until it is cancelled, so 7 requests are typed over: 7 cancelled."""
    clock = ManualTime()
    text = bench.TEXT[:40]

    async def body() -> None:
        held = [text[:n] for n in range(5, 40, 5)]
        async with connected(bench.make_server(hold=held), era) as client:
            plan = bench.hesitant_plan(40, 0.03, DEBOUNCE)
            counts = await bench.type_plan(client, plan, clock=clock, sleep=clock.sleep, pause=clock.advance)
        assert counts == bench.Counts(
            keystrokes=40,
            sent=8,
            cancelled=7,
            max_in_flight=1,
            server_received=8,
            server_cancelled=7,
            server_max_running=1,
        )

    run(body)
