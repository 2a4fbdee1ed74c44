"""Every transport passes the same battery (``backchannel.testing.check_transport``), in both eras.

One test per (transport, era, check), so a failure names what broke. The kit's own
pieces (``connected`` over each transport, ``FakeClock``, ``Tap``) are checked here too.
"""

from __future__ import annotations

import functools

import pytest

from backchannel import Server
from backchannel.server.state import MemoryStore
from backchannel.testing import (
    KINDS,
    TRANSPORT_CHECKS,
    FakeClock,
    Tap,
    TransportKind,
    check_transport,
    connected,
    open_link,
    run,
)


@pytest.mark.parametrize("check", list(TRANSPORT_CHECKS))
@pytest.mark.parametrize("era", ["handshake", "stateless"])
@pytest.mark.parametrize("kind", KINDS)
def test_battery(kind: TransportKind, era: str, check: str) -> None:
    maker = functools.partial(open_link, transport=kind)
    run(lambda: check_transport(maker, eras=(era,), checks=(check,)), timeout=30)  # type: ignore[arg-type]


@pytest.mark.parametrize("era", ["handshake", "stateless", "auto"])
@pytest.mark.parametrize("kind", KINDS)
def test_connected_speaks_each_era_over_each_transport(kind: TransportKind, era: str) -> None:
    server = Server("kit", "1.0")

    @server.tool()
    def add(a: int, b: int) -> str:
        return str(a + b)

    async def main() -> None:
        async with connected(server, era, kind) as client:  # type: ignore[arg-type]
            assert client.era == ("stateless" if era == "auto" else era)
            result = await client.call_tool("add", {"a": 2, "b": 3})
            assert result.content[0].text == "5"  # type: ignore[union-attr]

    run(main, timeout=30)


def test_tap_records_both_directions() -> None:
    server = Server("kit", "1.0")
    server.add_tool(lambda text: text, name="echo")
    tap = Tap()

    async def main() -> None:
        async with connected(server, "handshake", wrap_server=tap.around) as client:
            await client.call_tool("echo", {"text": "hi"})

    run(main)
    (call,) = tap.tool_calls_received("echo")
    (answer,) = tap.responses_written(call["id"])
    assert answer["result"]["content"][0]["text"] == "hi"
    assert tap.notifications_received("notifications/initialized")


def test_the_server_end_cannot_be_wrapped_over_http() -> None:
    async def main() -> None:
        async with open_link(Server("kit"), "http", wrap_server=Tap().around):
            pass

    with pytest.raises(ValueError, match="inside the HTTP app"):
        run(main)


def test_fake_clock_expires_a_ttl_without_sleeping() -> None:
    clock = FakeClock()
    store = MemoryStore(clock=clock)

    async def main() -> None:
        await store.put("k", "v", ttl=60)
        clock.advance(59.9)
        assert await store.get("k") == "v"
        clock.advance(0.2)
        assert await store.get("k") is None

    run(main)
    with pytest.raises(ValueError):
        clock.advance(-1)
