"""OpenTelemetry log records (docs/observability.md, "Logs"): ``ctx.log`` and the stdlib bridge
(``ClientLogHandler``) emit one record per message, redacted as the client gets it, with the
RFC 5424 level mapped to a severity, the logger's name, and the trace and span of the tool call
that logged it; also when the client asked for no log messages; and the bridge leaves a record
to OpenTelemetry's own ``LoggingHandler`` when one is on the logger's way up.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from _otel import Otel, one_span
from opentelemetry._logs import SeverityNumber
from opentelemetry.sdk._logs import LoggingHandler

from backchannel import Context, Server
from backchannel.server.log_handler import ClientLogHandler
from backchannel.telemetry.logs import LOGGER_NAME
from backchannel.testing import connected, run

SECRET = "hunter2"
BRIDGED = "test.telemetry.bridge"


@pytest.fixture
def bridge() -> Iterator[logging.Logger]:
    """A stdlib logger forwarded to the client by ``ClientLogHandler`` (and not beyond this test)."""
    logger = logging.getLogger(BRIDGED)
    handler = ClientLogHandler()
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    yield logger
    for attached in list(logger.handlers):
        logger.removeHandler(attached)
    logger.propagate = True


def logging_server(bridge: logging.Logger | None = None) -> Server:
    server = Server("logs")

    @server.tool()
    async def sign_in(ctx: Context) -> str:
        await ctx.warning({"message": f"signing in with password={SECRET}"}, logger="auth")
        await ctx.debug("a detail the client did not ask for")
        return "in"

    @server.tool()
    def bridged() -> str:
        assert bridge is not None
        bridge.info("connecting with password=%s", SECRET)
        return "done"

    return server


def records(otel: Otel) -> list[Any]:
    return [data.log_record for data in otel.logs()]


def test_ctx_log_emits_a_redacted_record_in_the_tool_calls_span(otel: Otel) -> None:
    sent: list[Any] = []

    async def body() -> None:
        async with connected(logging_server(), "handshake", on_log=sent.append) as client:
            await client.call_tool("sign_in")
        spans = await otel.wait_spans(lambda found: any(span.name == "tools/call sign_in" for span in found))
        call = one_span(spans, "tools/call sign_in", kind="SERVER")
        warning, debug = records(otel)

        assert SECRET not in str(warning.body) and "password=[REDACTED]" in warning.body["message"]
        assert [message["data"] for message in sent] == [warning.body]  # the very text the client got
        assert (warning.severity_number, warning.severity_text) == (SeverityNumber.WARN, "warning")
        assert warning.attributes[LOGGER_NAME] == "auth"
        assert (warning.trace_id, warning.span_id) == (call.trace_id, call.span_id)

        # Below the client's level ("info" by default): not sent to the client, still the operator's.
        assert (debug.severity_number, debug.body) == (SeverityNumber.DEBUG, "a detail the client did not ask for")
        assert (debug.trace_id, debug.span_id) == (call.trace_id, call.span_id)

    run(body)


def test_the_stdlib_bridge_emits_one_redacted_record(otel: Otel, bridge: logging.Logger) -> None:
    async def body() -> None:
        async with connected(logging_server(bridge), "handshake") as client:
            await client.call_tool("bridged")
        spans = await otel.wait_spans(lambda found: any(span.name == "tools/call bridged" for span in found))
        call = one_span(spans, "tools/call bridged", kind="SERVER")
        (record,) = records(otel)
        assert record.body == "connecting with password=[REDACTED]"
        assert (record.severity_number, record.attributes[LOGGER_NAME]) == (SeverityNumber.INFO, BRIDGED)
        assert (record.trace_id, record.span_id) == (call.trace_id, call.span_id)

    run(body)


def test_a_record_opentelemetrys_own_handler_emits_is_not_emitted_twice(otel: Otel, bridge: logging.Logger) -> None:
    # The operator's own bridge, on a parent the record propagates to: it emits the record.
    parent = logging.getLogger(BRIDGED.rsplit(".", 1)[0])
    theirs = LoggingHandler(logger_provider=otel.logger_provider)
    parent.addHandler(theirs)
    bridge.propagate = True
    child = logging.getLogger(f"{BRIDGED}.db")

    async def body() -> None:
        async with connected(logging_server(child), "handshake") as client:
            await client.call_tool("bridged")

    try:
        child.addHandler(ClientLogHandler())
        run(body)
    finally:
        parent.removeHandler(theirs)
        for attached in list(child.handlers):
            child.removeHandler(attached)
    (record,) = records(otel)  # theirs: one record, not two
    assert record.body == f"connecting with password={SECRET}"  # as the operator's handler chose to log it
