"""The span tree of a tool call that elicits, both eras, over the memory transport (issue #20).

Conventions: open-telemetry/semantic-conventions-genai ``docs/gen-ai/mcp.md`` v0.1.0 (span names
``{mcp.method.name} {target}``, CLIENT for the sender, SERVER for the receiver, the receiver
parents its span on the context in ``params._meta``). The client and the server share this
process's SDK (tests/telemetry/_otel.py), so one exporter sees both sides.
"""

from __future__ import annotations

import asyncio
from typing import Any

from _otel import Otel, SpanRecord, children_of, one_span, parent_of, render_tree, spans_by_name
from opentelemetry import trace
from typing_extensions import TypedDict

from backchannel import Context, Server
from backchannel.testing import connected

FORM = {"action": "accept", "content": {"name": "Ada"}}


class Name(TypedDict):
    name: str


def asking_server() -> Server:
    server = Server("asking")

    @server.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Your name?", Name)
        return f"{answer.action}:{answer.data}"

    return server


def answer(params: dict[str, Any]) -> dict[str, Any]:
    return FORM


def one_trace(spans: list[SpanRecord]) -> int:
    traces = {span.trace_id for span in spans}
    assert len(traces) == 1, render_tree(spans)
    return traces.pop()


def test_handshake_era_elicitation_is_a_client_span_under_the_tool_call_and_the_answer_a_server_one(otel: Otel) -> None:
    """Client span -> server span -> the server's elicitation CLIENT span -> the client's SERVER span."""

    async def body() -> None:
        async with connected(asking_server(), "handshake", elicitation=answer) as client:
            otel.clear()
            result = await client.call_tool("ask", {})
            assert result.content[0].text == "accept:{'name': 'Ada'}"  # type: ignore[union-attr]
            await otel.wait_spans(lambda found: len(spans_by_name(found, "tools/call ask")) == 2)

    asyncio.run(body())
    spans = otel.spans()
    call = one_span(spans, "tools/call ask", kind="CLIENT")
    served = one_span(spans, "tools/call ask", kind="SERVER")
    asked = one_span(spans, "elicitation/create", kind="CLIENT")
    answered = one_span(spans, "elicitation/create", kind="SERVER")
    assert parent_of(spans, served) == call
    assert parent_of(spans, asked) == served
    assert parent_of(spans, answered) == asked
    assert call.parent_id is None  # nothing was current in the test
    one_trace([call, served, asked, answered])

    for span in (call, served):
        assert span.attributes["mcp.method.name"] == "tools/call"
        assert span.attributes["gen_ai.tool.name"] == "ask"
        assert span.attributes["gen_ai.operation.name"] == "execute_tool"
        assert span.attributes["mcp.protocol.version"] == "2025-11-25"
        assert span.attributes["jsonrpc.request.id"] == "2"  # initialize was 1
        assert span.status == "UNSET" and "error.type" not in span.attributes
    for span in (asked, answered):
        assert span.attributes["mcp.method.name"] == "elicitation/create"
        assert "gen_ai.operation.name" not in span.attributes
    # The person's time is inside the elicitation spans, which are inside the tool call's.
    assert served.start_time <= asked.start_time <= answered.start_time
    assert answered.end_time <= asked.end_time <= served.end_time <= call.end_time


def test_stateless_era_rounds_are_one_trace_under_an_operation_span(otel: Otel) -> None:
    """2026-07-28 MRTR: INTERNAL ``tools/call ask`` -> each round's CLIENT span (-> SERVER), and the
    client's answer to the input request an INTERNAL ``elicitation/create`` span between the rounds."""

    async def body() -> None:
        async with connected(asking_server(), "stateless", elicitation=answer) as client:
            otel.clear()
            result = await client.call_tool("ask", {})
            assert result.content[0].text == "accept:{'name': 'Ada'}"  # type: ignore[union-attr]

    asyncio.run(body())
    spans = otel.spans()
    operation = one_span(spans, "tools/call ask", kind="INTERNAL")
    rounds = [span for span in children_of(spans, operation) if span.kind == "CLIENT"]
    answers = [span for span in children_of(spans, operation) if span.kind == "INTERNAL"]
    assert [span.name for span in rounds] == ["tools/call ask", "tools/call ask"], render_tree(spans)
    assert [span.name for span in answers] == ["elicitation/create"]
    assert rounds[0].end_time <= answers[0].start_time <= answers[0].end_time <= rounds[1].start_time
    for sent in rounds:
        served = one_child(spans, sent)
        assert served.kind == "SERVER" and served.name == "tools/call ask"
        assert served.attributes["mcp.protocol.version"] == "2026-07-28"
        assert served.attributes["jsonrpc.request.id"] == sent.attributes["jsonrpc.request.id"]
    assert rounds[0].attributes["jsonrpc.request.id"] != rounds[1].attributes["jsonrpc.request.id"]
    assert operation.attributes["gen_ai.tool.name"] == "ask"
    one_trace([span for span in spans if span.name != "server/discover"])


def test_a_trace_continues_from_the_callers_span_through_our_server_and_back(otel: Otel) -> None:
    """The caller's own span is the root: our client span, the server's spans and the client's
    answer all carry its trace id, each parented on the one before."""
    tracer = trace.get_tracer("test")

    async def body() -> None:
        async with connected(asking_server(), "handshake", elicitation=answer) as client:
            otel.clear()
            with tracer.start_as_current_span("the agent's turn"):
                await client.call_tool("ask", {})
            await otel.wait_spans(lambda found: len(spans_by_name(found, "tools/call ask")) == 2)

    asyncio.run(body())
    spans = otel.spans()
    root = one_span(spans, "the agent's turn")
    call = one_span(spans, "tools/call ask", kind="CLIENT")
    answered = one_span(spans, "elicitation/create", kind="SERVER")
    assert parent_of(spans, call) == root
    chain = [answered]
    while chain[-1] is not root:
        up = parent_of(spans, chain[-1])
        assert up is not None, render_tree(spans)
        chain.append(up)
    assert [(span.name, span.kind) for span in reversed(chain)] == [
        ("the agent's turn", "INTERNAL"),
        ("tools/call ask", "CLIENT"),
        ("tools/call ask", "SERVER"),
        ("elicitation/create", "CLIENT"),
        ("elicitation/create", "SERVER"),
    ]
    assert {span.trace_id for span in chain} == {root.trace_id}


def one_child(spans: list[SpanRecord], parent: SpanRecord) -> SpanRecord:
    found = children_of(spans, parent)
    assert len(found) == 1, render_tree(spans)
    return found[0]


def test_the_server_span_links_the_ambient_context_when_meta_carries_one(otel: Otel) -> None:
    """Conventions: parent on the ``_meta`` context, and link the ambient one. Here the ambient
    context is the span current when the connection started (its read loop inherits it)."""
    tracer = trace.get_tracer("test")

    async def body() -> None:
        with tracer.start_as_current_span("the transport's"):
            async with connected(asking_server(), "handshake", elicitation=answer) as client:
                otel.clear()
                with tracer.start_as_current_span("the caller's"):
                    await client.call_tool("ask", {})
                await otel.wait_spans(lambda found: len(spans_by_name(found, "tools/call ask")) == 2)

    asyncio.run(body())
    spans = otel.spans()
    call = one_span(spans, "tools/call ask", kind="CLIENT")
    served = one_span(spans, "tools/call ask", kind="SERVER")
    assert served.parent_id == call.span_id
    outer = one_span(spans, "the transport's")
    assert served.links == ((outer.trace_id, outer.span_id),)
    assert call.links == ()  # a client span has no ambient context to link
