"""Messages between workers, on both implementations: a publish reaches every worker
listening at that moment (and says how many), in order, on the event loop; ``stop``
ends a listener; a listener that fails does not cost the others their message."""

from __future__ import annotations

import asyncio
import logging

import pytest
from _state_backends import Backend, Inbox

from backchannel.testing import run


def test_a_publish_nobody_hears_counts_zero(backend: Backend) -> None:
    async def body() -> None:
        async with backend.new() as a:
            assert await a.publish("nobody", b"lost") == 0

    run(body)


def test_every_listening_worker_gets_each_message_in_order(backend: Backend) -> None:
    async def body() -> None:
        async with backend.new() as a, backend.new() as b, backend.new() as c:
            heard_a, heard_b = Inbox(), Inbox()
            a.listen("work", heard_a)
            b.listen("work", heard_b)
            c.listen("elsewhere", Inbox())
            await a.listening("work")
            await b.listening("work")
            sent = [f"m{n}".encode() for n in range(50)]
            counts = [await c.publish("work", message) for message in sent]
            assert counts == [2] * 50  # two workers listen on "work"; c only elsewhere
            assert await heard_a.wait_for(50) == sent
            assert await heard_b.wait_for(50) == sent

    run(body)


def test_several_listeners_in_one_worker_count_as_one_worker(backend: Backend) -> None:
    async def body() -> None:
        async with backend.new() as a, backend.new() as b:
            first, second = Inbox(), Inbox()
            a.listen("ch", first)
            stop_second = a.listen("ch", second)
            await a.listening("ch")
            assert await b.publish("ch", b"1") == 1
            assert await first.wait_for(1) == [b"1"] and await second.wait_for(1) == [b"1"]
            stop_second()
            stop_second()  # idempotent
            assert await b.publish("ch", b"2") == 1  # the first listener still holds the subscription
            assert await first.wait_for(2) == [b"1", b"2"]
            assert second.messages == [b"1"]

    run(body)


def test_stop_ends_delivery_and_the_count_drops(backend: Backend) -> None:
    async def body() -> None:
        async with backend.new() as a, backend.new() as b:
            heard = Inbox()
            stop = a.listen("ch", heard)
            await a.listening("ch")
            assert await b.publish("ch", b"before") == 1
            await heard.wait_for(1)
            stop()
            # Redis unsubscribes in the subscriber task: the count reaches 0 within a bound.
            async with asyncio.timeout(3):
                while await b.publish("ch", b"after") != 0:
                    pass
            with pytest.raises(ValueError, match="listen"):
                await a.listening("ch")
            # listening again on the same channel works (subscribe after unsubscribe)
            again = Inbox()
            a.listen("ch", again)
            await a.listening("ch")
            assert await b.publish("ch", b"again") == 1
            assert await again.wait_for(1) == [b"again"]
            assert heard.messages == [b"before"]

    run(body)


def test_a_failing_listener_costs_the_others_nothing(backend: Backend, caplog: pytest.LogCaptureFixture) -> None:
    def broken(message: bytes) -> None:
        raise RuntimeError("listener bug")

    async def body() -> None:
        async with backend.new() as a, backend.new() as b:
            heard = Inbox()
            a.listen("ch", broken)
            a.listen("ch", heard)
            await a.listening("ch")
            await b.publish("ch", b"1")
            await b.publish("ch", b"2")
            assert await heard.wait_for(2) == [b"1", b"2"]

    with caplog.at_level(logging.ERROR, logger="backchannel.state"):
        run(body)
    assert "listener failed" in caplog.text and "listener bug" in caplog.text


def test_a_worker_hears_its_own_publish(backend: Backend) -> None:
    async def body() -> None:
        async with backend.new() as a:
            heard = Inbox()
            a.listen("self", heard)
            await a.listening("self")
            assert await a.publish("self", b"\x00binary\xff") == 1
            assert await heard.wait_for(1) == [b"\x00binary\xff"]

    run(body)
