"""How a request ended, on its spans and in the request metrics: ``isError``, JSON-RPC errors,
progress and cancellation events (issue #20; conventions ``docs/gen-ai/mcp.md`` v0.1.0:
``error.type`` = the JSON-RPC code or ``tool_error``, status ERROR with the error's message)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from _metrics_read import Readings
from _otel import Otel, SpanRecord, one_span, render_tree, spans_by_name

from backchannel import Context, Server, ToolError
from backchannel.testing import connected, within
from backchannel.types.errors import RequestError

ERAS = ["handshake", "stateless"]


def outcome_server(started: asyncio.Event | None = None) -> Server:
    server = Server("outcomes")

    @server.tool()
    def broken() -> str:
        raise ToolError("the disk is full")

    @server.tool()
    async def counting(ctx: Context) -> str:
        for step in range(1, 4):
            await ctx.report_progress(step, 3)
        return "counted"

    @server.tool()
    async def slow(ctx: Context) -> str:
        if started is not None:
            started.set()
        await asyncio.sleep(30)
        return "never"

    return server


@pytest.mark.parametrize("era", ERAS)
def test_an_is_error_result_is_a_tool_error_on_both_spans(otel: Otel, era: str) -> None:
    async def body() -> None:
        async with connected(outcome_server(), era) as client:
            otel.clear()
            result = await client.call_tool("broken", {})
            assert result.is_error
            await otel.wait_spans(lambda found: sent_and_served(found, "tools/call broken") == 2)

    asyncio.run(body())
    spans = [span for span in otel.spans() if span.kind != "INTERNAL"]
    for kind in ("CLIENT", "SERVER"):
        span = one_span(spans, "tools/call broken", kind=kind)
        assert span.attributes["error.type"] == "tool_error"
        assert "rpc.response.status_code" not in span.attributes  # the JSON-RPC call succeeded
        assert (span.status, span.description) == ("ERROR", "the disk is full")


@pytest.mark.parametrize("era", ERAS)
def test_a_json_rpc_error_carries_its_code_and_message(otel: Otel, era: str) -> None:
    async def body() -> None:
        async with connected(outcome_server(), era) as client:
            otel.clear()
            with pytest.raises(RequestError) as raised:
                await client.request("prompts/get", {"name": "missing"})
            assert raised.value.code == -32602
            await otel.wait_spans(lambda found: sent_and_served(found, "prompts/get missing") == 2)

    asyncio.run(body())
    spans = otel.spans()
    for kind in ("CLIENT", "SERVER"):
        span = one_span(spans, "prompts/get missing", kind=kind)
        assert span.attributes["gen_ai.prompt.name"] == "missing"
        assert span.attributes["error.type"] == span.attributes["rpc.response.status_code"] == "-32602"
        assert span.status == "ERROR" and span.description and "missing" in span.description


def test_the_request_metrics_keep_the_low_cardinality_attributes(otel: Otel) -> None:
    """``mcp.{server,client}.operation.duration``: one point per request, no request or session id;
    the in-flight counters are back at zero once the calls are answered."""

    async def body() -> None:
        async with connected(outcome_server(), "handshake") as client:
            otel.metric_points("mcp.server.operation.duration")  # drain the handshake's
            await client.call_tool("broken", {})
            await client.call_tool("broken", {})
            await otel.wait_spans(lambda found: sent_and_served(found, "tools/call broken") == 4)

    asyncio.run(body())
    points = Readings(otel).read().points
    for name in ("mcp.server.operation.duration", "mcp.client.operation.duration"):
        calls = [p for p in points[name] if p.attributes.get("gen_ai.tool.name") == "broken"]
        assert len(calls) == 1 and calls[0].count == 2, points[name]
        attributes = dict(calls[0].attributes)
        assert attributes["error.type"] == "tool_error"
        assert attributes["mcp.method.name"] == "tools/call"
        assert "jsonrpc.request.id" not in attributes and "mcp.session.id" not in attributes
        assert list(calls[0].explicit_bounds)[:3] == [0.01, 0.02, 0.05]
    for name in ("backchannel.server.requests.in_flight", "backchannel.client.requests.in_flight"):
        assert {p.attributes.get("gen_ai.tool.name"): p.value for p in points[name]}.get("broken") == 0


def test_the_in_flight_counts_are_the_requests_in_flight_then_zero(otel: Otel) -> None:
    """``backchannel.{server,client}.requests.in_flight`` (observable: the SDK reads our counts when
    it collects) say 2 while two calls are being served, and 0 once both are cancelled."""
    names = ("backchannel.server.requests.in_flight", "backchannel.client.requests.in_flight")

    def slow_in_flight() -> dict[str, Any]:
        points = Readings(otel).read().points
        return {
            name: [
                (dict(p.attributes), p.value)
                for p in points.get(name, [])
                if p.attributes.get("gen_ai.tool.name") == "slow"
            ]
            for name in names
        }

    during: dict[str, Any] = {}

    async def body() -> None:
        started = asyncio.Event()
        async with connected(outcome_server(started), "handshake") as client:
            calls = [asyncio.ensure_future(client.call_tool("slow", {})) for _ in range(2)]
            await asyncio.wait_for(started.wait(), 5)
            await within(lambda: _both_serving(otel), "both calls served")
            during.update(slow_in_flight())
            for call in calls:
                call.cancel()
            await asyncio.gather(*calls, return_exceptions=True)
            await otel.wait_spans(lambda found: sent_and_served(found, "tools/call slow") == 4)

    asyncio.run(body())
    attributes = {"mcp.method.name": "tools/call", "gen_ai.tool.name": "slow"}
    assert during == {name: [(attributes, 2)] for name in names}
    assert slow_in_flight() == {name: [(attributes, 0)] for name in names}


def _both_serving(otel: Otel) -> bool:
    points = Readings(otel).read().points
    served = points.get("backchannel.server.requests.in_flight", [])
    return any(p.attributes.get("gen_ai.tool.name") == "slow" and p.value == 2 for p in served)


@pytest.mark.parametrize("era", ERAS)
def test_progress_is_an_event_on_the_server_span_sent_and_on_the_client_span_received(otel: Otel, era: str) -> None:
    heard: list[float] = []

    async def body() -> None:
        async with connected(outcome_server(), era) as client:
            otel.clear()
            await client.call_tool("counting", {}, on_progress=lambda event: heard.append(event.progress))
            await otel.wait_spans(lambda found: sent_and_served(found, "tools/call counting") == 2)

    asyncio.run(body())
    assert heard == [1, 2, 3]
    spans = otel.spans()
    for kind in ("CLIENT", "SERVER"):
        span = one_span(spans, "tools/call counting", kind=kind)
        events = span.events_named("progress")
        assert [(e["mcp.progress.value"], e["mcp.progress.total"]) for e in events] == [(1, 3), (2, 3), (3, 3)]


@pytest.mark.parametrize("era", ERAS)
def test_a_cancelled_call_ends_both_spans_cancelled_with_the_event(otel: Otel, era: str) -> None:
    """The client's span records the cancellation it sent, the server's the one it received;
    both end with ``error.type=cancelled`` (docs/observability.md says why)."""

    async def body() -> None:
        started = asyncio.Event()
        async with connected(outcome_server(started), era) as client:
            otel.clear()
            call = asyncio.ensure_future(client.call_tool("slow", {}))
            await asyncio.wait_for(started.wait(), 5)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            await otel.wait_spans(lambda found: sent_and_served(found, "tools/call slow") == 2)

    asyncio.run(body())
    spans = otel.spans()
    for kind in ("CLIENT", "SERVER"):
        span = one_span(spans, "tools/call slow", kind=kind)
        assert span.attributes["error.type"] == "cancelled", render_tree(spans)
        assert span.status == "ERROR"
        assert span.events_named("cancelled") == [{"mcp.cancel.reason": "the caller stopped waiting"}]


def sent_and_served(spans: list[SpanRecord], name: str) -> int:
    """The CLIENT and SERVER spans named ``name`` (a stateless-era operation adds an INTERNAL one)."""
    return len([span for span in spans_by_name(spans, name) if span.kind in ("CLIENT", "SERVER")])
