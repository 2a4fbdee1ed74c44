"""The deadlines of our requests share one loop timer per connection (``runtime/clocks.py``).

LC-27, LC-28: a request with a timeout fails with ``RequestTimeout`` when it passes, and is
cancelled on the wire. With one timer set for the earliest deadline, what could go wrong is
the order: a later request with an earlier deadline, a timer that fires for a request already
answered, a deadline pushed out by progress, a clock stopped while a person answers. Each test
waits on the outcome with a bound, never on time passing alone.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

import pytest

from backchannel import Server
from backchannel import testing as kit
from backchannel.runtime.clocks import TIMED_OUT, RequestClocks
from backchannel.server import Context
from backchannel.types.errors import RequestTimeout

run = functools.partial(kit.run, timeout=10.0)


def _blocking_server() -> tuple[Server, dict[str, asyncio.Event]]:
    server = Server("clocks")
    gates: dict[str, asyncio.Event] = {}

    @server.tool()
    async def block(key: str) -> str:
        """Wait until the test opens the gate ``key``."""
        await gates.setdefault(key, asyncio.Event()).wait()
        return key

    @server.tool()
    async def tick(key: str, ticks: int, ctx: Context) -> str:
        """Report progress every 20 ms, ``ticks`` times, then answer."""
        for i in range(1, ticks + 1):
            await asyncio.sleep(0.02)
            await ctx.report_progress(i, ticks)
        return key

    return server, gates


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_a_later_request_with_an_earlier_deadline_times_out_first(era: str) -> None:
    """LC-27: a long timeout set the shared timer first; a short one made later still strikes on time."""
    server, gates = _blocking_server()

    async def main() -> None:
        async with kit.connected(server, era) as client:  # type: ignore[arg-type]
            slow = asyncio.ensure_future(client.call_tool("block", {"key": "slow"}, timeout=30))
            await kit.within(lambda: "slow" in gates, "the slow call to start")
            with pytest.raises(RequestTimeout):
                await asyncio.wait_for(client.call_tool("block", {"key": "fast"}, timeout=0.1), 5)
            assert not slow.done()  # its own deadline is far away
            gates["slow"].set()
            assert (await asyncio.wait_for(slow, 5)).content[0].text == "slow"  # type: ignore[union-attr]

    run(main)


def test_the_timer_fires_for_an_answered_request_and_is_set_again_for_the_next() -> None:
    """LC-27: the earliest deadline belonged to a request answered long before; the timer that
    fires for it for nothing must be set again, for the request still waiting."""
    server, gates = _blocking_server()

    async def main() -> None:
        async with kit.connected(server, "handshake") as client:
            gates["quick"] = asyncio.Event()
            gates["quick"].set()
            assert (await client.call_tool("block", {"key": "quick"}, timeout=0.05)).content[0].text == "quick"  # type: ignore[union-attr]
            with pytest.raises(RequestTimeout):
                await asyncio.wait_for(client.call_tool("block", {"key": "waits"}, timeout=0.2), 5)

    run(main)


def test_progress_pushes_the_deadline_out_past_the_shared_timer() -> None:
    """PG-11: progress moves a deadline later than the timer is set for; the timer then fires
    early, finds the request not due, and is set again: the call ends with its answer."""
    server, _ = _blocking_server()

    async def main() -> None:
        async with kit.connected(server, "handshake") as client:
            result = await client.call_tool(
                "tick", {"key": "ticked", "ticks": 15}, timeout=0.1, progress_resets_timeout=True
            )
            assert result.content[0].text == "ticked"  # type: ignore[union-attr]

    run(main)


def test_an_answer_that_came_first_wins_and_a_paused_clock_does_not_strike() -> None:
    """The clocks alone: a waiter already answered keeps its answer when its deadline passes;
    a paused clock lets its deadline go by and strikes only after it resumes with what was left."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        clocks = RequestClocks()
        answered: asyncio.Future[Any] = loop.create_future()
        paused: asyncio.Future[Any] = loop.create_future()
        now = loop.time()
        clocks.track(1, now + 0.02, answered)
        clocks.track(2, now + 0.05, paused)
        answered.set_result({"ok": True})
        with clocks.paused():
            await asyncio.sleep(0.1)  # both deadlines pass while paused: time passing is the point
            assert not paused.done()
        assert answered.result() == {"ok": True}
        assert await asyncio.wait_for(paused, 5) is TIMED_OUT  # resumed with 0.05 s left

    run(main)
