"""``backchannel.log.dropped`` (docs/observability.md, "Metrics"): log messages for the client that
the per-connection rate limit dropped, by ``backchannel.log.drop_reason``. A message below the
client's level is not a drop (the client asked not to get it) and is not counted.
"""

from __future__ import annotations

from _metrics_read import Readings
from _otel import Otel

from backchannel import Context, Server
from backchannel.server.options import LogOptions
from backchannel.telemetry.metrics import LOGS_DROPPED
from backchannel.testing import connected, run

BURST = 3
SENT = 10


def chatty_server() -> Server:
    # Barely any refill: the burst passes, the rest of a quick loop is dropped.
    server = Server("chatty", logs=LogOptions(level="info", rate=0.001, burst=BURST))

    @server.tool()
    async def chatter(ctx: Context) -> str:
        for n in range(SENT):
            await ctx.info(f"line {n}")
        for n in range(SENT):
            await ctx.debug(f"detail {n}")  # below the client's level: not sent, not dropped
        return "done"

    return server


def test_messages_the_rate_limit_drops_are_counted_with_their_reason(otel: Otel) -> None:
    received: list[object] = []

    async def body() -> None:
        async with connected(chatty_server(), "handshake", on_log=received.append) as client:
            await client.call_tool("chatter")
        readings = Readings(otel).read()
        dropped = readings.of(LOGS_DROPPED)
        assert {tuple(point.attributes.items()) for point in dropped} == {
            (("backchannel.log.drop_reason", "rate_limit"),)
        }
        assert readings.total(LOGS_DROPPED) == SENT - BURST
        assert len(received) == BURST  # what was not dropped reached the client

    run(body)
