"""A request through middleware starts in the read loop's turn (issue #30, "one middleware layer per
call: at most 3 µs"): a plain synchronous tool behind a pass-through middleware is answered there,
as without middleware, with no task of its own; what waits goes on in a task of its own, as a
handler always did: it sees its context after the wait, the peer's cancellation reaches it where
it waits, and what one call's middleware set in a context variable is not seen by the next.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import gc
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from backchannel import Context, Server
from backchannel.server.middleware import Call, CallNext
from backchannel.testing import Tap, connected, run, within
from backchannel.types.errors import InvalidParams, RequestError
from server._server_harness import RawPeer

ERAS = ("handshake", "stateless")
BOUND = 10.0


def bounded(test: Callable[..., Awaitable[None]]) -> Callable[..., None]:
    """The async test as a plain one, in a loop of its own, within ``BOUND`` seconds."""

    @functools.wraps(test)
    def running(*args: Any, **kwargs: Any) -> None:
        run(test(*args, **kwargs), BOUND)

    return running


SEEN: contextvars.ContextVar[Any] = contextvars.ContextVar("seen", default=None)


async def passthrough(call: Call, call_next: CallNext) -> Any:
    return await call_next(call)


def echo_server(*layers: Any) -> Server:
    server = Server("read-turn")

    @server.tool(structured_output=False)
    def echo(text: str) -> str:
        return text

    for layer in layers:
        server.add_middleware(layer)
    return server


class TasksMade:
    """Counts the tasks the running loop makes while counting."""

    def __init__(self) -> None:
        self.count = 0

    def __enter__(self) -> TasksMade:
        loop = asyncio.get_running_loop()
        self._loop, self._before = loop, loop.get_task_factory()

        def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
            self.count += 1
            return asyncio.Task(coro, loop=loop, **kwargs)

        loop.set_task_factory(factory)  # type: ignore[arg-type]
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.set_task_factory(self._before)


def text_of(result: Any) -> str:
    return str(result.content[0].text)


async def tasks_for_echoes(server: Server, era: str, calls: int) -> int:
    async with connected(server, era) as client:
        await client.call_tool("echo", {"text": "warm"})
        with TasksMade() as made:
            for i in range(calls):
                assert text_of(await client.call_tool("echo", {"text": f"e{i}"})) == f"e{i}"
        return made.count


@pytest.mark.parametrize("era", ERAS)
@bounded
async def test_a_pass_through_middleware_adds_no_task_to_a_plain_call(era: str) -> None:
    plain = await tasks_for_echoes(echo_server(), era, 20)
    through = await tasks_for_echoes(echo_server(passthrough, passthrough), era, 20)
    assert through == plain  # (before: one more task per call, the handler's)


@pytest.mark.parametrize("era", ERAS)
@bounded
async def test_what_a_middleware_sets_in_a_context_variable_stays_with_its_call(era: str) -> None:
    before: list[Any] = []

    async def marking(call: Call, call_next: CallNext) -> Any:
        before.append(SEEN.get())
        SEEN.set(call.request_id)  # never reset: a leak would show in the next call
        return await call_next(call)

    server = echo_server(marking)

    @server.tool(structured_output=False)
    def marked() -> str:
        return str(SEEN.get())

    async with connected(server, era) as client:
        for _ in range(3):
            assert text_of(await client.call_tool("marked", {})) != "None"  # the tool sees its call's mark
            await client.call_tool("echo", {"text": "x"})
    assert before and all(mark is None for mark in before)
    assert SEEN.get() is None


@pytest.mark.parametrize("era", ERAS)
@bounded
async def test_a_middleware_that_waits_before_passing_on_is_answered(era: str) -> None:
    async def waiting(call: Call, call_next: CallNext) -> Any:
        await asyncio.sleep(0)  # a bare yield
        ready = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().call_soon(ready.set_result, None)
        await ready  # a future
        return await call_next(call)

    async with connected(echo_server(waiting), era) as client:
        results = await asyncio.gather(*(client.call_tool("echo", {"text": f"w{i}"}) for i in range(5)))
    assert [text_of(result) for result in results] == [f"w{i}" for i in range(5)]


@pytest.mark.parametrize("era", ERAS)
@bounded
async def test_an_async_tool_behind_middleware_sees_its_context_after_waiting(era: str) -> None:
    server = echo_server(passthrough)

    @server.tool(structured_output=False)
    async def later(ctx: Context) -> str:
        await asyncio.sleep(0)
        return f"{Context.current() is ctx}:{ctx.request_id}"

    async with connected(server, era) as client:
        assert text_of(await client.call_tool("later", {})).startswith("True:")


@pytest.mark.parametrize("era", ERAS)
@bounded
async def test_a_middleware_s_refusal_in_the_read_turn_is_the_call_s_error(era: str) -> None:
    async def refusing(call: Call, call_next: CallNext) -> Any:
        if call.method == "tools/call" and call.params.get("name") == "echo":
            raise InvalidParams("echo is closed today")
        return await call_next(call)

    async with connected(echo_server(refusing), era) as client:
        with pytest.raises(RequestError) as refused:
            await client.call_tool("echo", {"text": "x"})
        assert refused.value.code == -32602 and "echo is closed today" in refused.value.message


@bounded
async def test_the_peer_s_cancellation_reaches_a_tool_that_waits_behind_middleware() -> None:
    server = echo_server(passthrough)
    started, cancelled = asyncio.Event(), asyncio.Event()

    @server.tool(structured_output=False)
    async def wait_forever() -> str:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    tap = Tap()
    async with connected(server, "handshake", wrap_client=tap.around) as client:
        call = asyncio.create_task(client.call_tool("wait_forever", {}))
        await started.wait()
        call.cancel()
        await cancelled.wait()  # the handler was cancelled where it waited
        assert text_of(await client.call_tool("echo", {"text": "after"})) == "after"
    asked = next(m["id"] for m in tap.written if m.get("params", {}).get("name") == "wait_forever")
    assert any(m.get("method") == "notifications/cancelled" for m in tap.written)
    assert not [m for m in tap.received if m.get("id") == asked]  # no answer after the cancellation


@pytest.mark.parametrize("through", ["middleware", "none"])
@bounded
async def test_a_request_cancelled_in_its_own_batch_leaves_nothing_running_or_unawaited(through: str) -> None:
    """The request and its cancellation in one read: its task is cancelled before its first step.
    A chain the read loop started is closed where it waits (its ``finally`` runs then), and no
    coroutine is left never awaited (before, each such request left one: a RuntimeWarning)."""
    gate, closed = asyncio.Event(), []

    async def waiting(call: Call, call_next: CallNext) -> Any:
        try:
            if call.params.get("name") == "slow":
                await gate.wait()
            return await call_next(call)
        finally:
            closed.append(call.request_id)

    server = echo_server(waiting) if through == "middleware" else echo_server()

    @server.tool(structured_output=False)
    async def slow() -> str:
        await gate.wait()
        return "late"

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        async with RawPeer(server) as peer:
            await peer.initialize()
            call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "slow", "arguments": {}}}
            cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
            peer.client_side.write([call, cancel])
            if through == "middleware":
                await within(lambda: 7 in closed, "the chain closed where it waited")
            assert "late" not in str(await peer.send("tools/call", {"name": "echo", "arguments": {"text": "next"}}))
            assert not [m for m in peer.seen if m.get("id") == 7]  # no answer to the cancelled request
        gc.collect()
    assert not [w for w in caught if "never awaited" in str(w.message)], [str(w.message) for w in caught]
