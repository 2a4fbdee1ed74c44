"""The span tree of a tool call that elicits, over Streamable HTTP, in both eras (issue #20, "Proven
by": "the span tree and attributes of a tool call that elicits, in both eras and over both
transports, and a trace that continues from a client span through our server and back").

Our client and our server share this process and its in-memory exporter; the server runs under
uvicorn on a loopback port, so every message crosses a real HTTP connection. What is checked:

- one trace from the client's span, through the server's span (parented on the ``_meta``
  context), to the client's answer: in the handshake era through the server's own
  ``elicitation/create`` CLIENT span; in the stateless era through each MRTR round;
- the HTTP attributes on both sides (``network.transport=tcp``, ``network.protocol.name=http``;
  ``mcp.session.id`` in the handshake era only; ``server.address``/``server.port`` on the client,
  ``client.address`` on the server);
- our client sends the ``_meta`` context as W3C headers too, and our server links that HTTP
  context (the same span here) as the conventions ask.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from _otel import Otel, SpanRecord, one_span, parent_of, render_tree, spans_by_name

from backchannel import Client, Context, Server
from backchannel.testing import run, serve_on_loopback

NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}}


def _server() -> Server:
    server = Server("traced-http")

    @server.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Your name?", NAME_FORM)
        return f"{answer.action}:{(answer.data or {}).get('name', '')}"

    return server


class Recorder:
    """The app, with every POST's W3C headers and ``_meta`` trace context written down."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.posts: list[tuple[str | None, str | None]] = []  # (traceparent header, _meta traceparent)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        header = dict(scope["headers"]).get(b"traceparent")
        entry = len(self.posts)
        self.posts.append((header.decode() if header else None, None))

        async def reading() -> Any:
            message = await receive()
            body = message.get("body") or b""
            if body:
                sent = json.loads(body)
                meta = (sent.get("params") or {}).get("_meta") or {}
                self.posts[entry] = (self.posts[entry][0], meta.get("traceparent"))
            return message

        await self.app(scope, reading, send)


def _person(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "ada"}}


def _tool_call(era: str, otel: Otel) -> tuple[list[SpanRecord], Recorder, int, str | None]:
    recorder = Recorder(_server().http_app())
    session: str | None = None
    port = 0

    async def body() -> None:
        nonlocal session, port
        async with serve_on_loopback(recorder) as base:
            port = int(base.rsplit(":", 1)[1])
            async with Client.http(base + "/mcp", era=era, elicitation=_person) as client:
                otel.clear()
                recorder.posts.clear()
                result = await client.call_tool("ask", {})
                assert result.content[0].text == "accept:ada"  # type: ignore[union-attr]
                session = getattr(client.transport, "session_id", None)
                await otel.wait_spans(lambda spans: len([s for s in spans if s.kind == "SERVER"]) >= 2)

    run(body)
    return otel.spans(), recorder, port, session


def _check_http_attributes(span: SpanRecord, side: str, port: int, session: str | None) -> None:
    assert span.attributes["network.transport"] == "tcp", span
    assert span.attributes["network.protocol.name"] == "http", span
    assert span.attributes["network.protocol.version"] == "1.1", span  # the client's: its first answer's
    if side == "client":
        assert (span.attributes["server.address"], span.attributes["server.port"]) == ("127.0.0.1", port)
    else:
        assert span.attributes["client.address"] == "127.0.0.1"
    if session is None:
        assert "mcp.session.id" not in span.attributes, span
    else:
        assert span.attributes["mcp.session.id"] == session, span


def _check_w3c_headers(recorder: Recorder, spans: list[SpanRecord]) -> None:
    requests = [(header, meta) for header, meta in recorder.posts if meta is not None]
    assert requests and all(header == meta for header, meta in requests), recorder.posts
    for served in (s for s in spans if s.kind == "SERVER" and s.name == "tools/call ask"):
        # The HTTP context (the same span as ``_meta``'s here) is linked, as the conventions ask.
        assert served.links == ((served.trace_id, served.parent_id),), render_tree(spans)


def test_handshake_era_tool_call_that_elicits_is_one_trace_over_http(otel: Otel) -> None:
    spans, recorder, port, session = _tool_call("handshake", otel)
    tree = render_tree(spans)
    assert session
    call = one_span(spans, "tools/call ask", kind="CLIENT")
    served = one_span(spans, "tools/call ask", kind="SERVER")
    asked = one_span(spans, "elicitation/create", kind="CLIENT")
    answered = one_span(spans, "elicitation/create", kind="SERVER")
    assert call.parent_id is None
    assert parent_of(spans, served) == call, tree
    assert parent_of(spans, asked) == served, tree
    assert parent_of(spans, answered) == asked, tree
    assert {span.trace_id for span in spans} == {call.trace_id}, tree
    for span in (call, answered):
        _check_http_attributes(span, "client", port, session)
    for span in (served, asked):
        _check_http_attributes(span, "server", port, session)
    _check_w3c_headers(recorder, spans)


def test_stateless_era_tool_call_that_elicits_is_one_trace_over_http(otel: Otel) -> None:
    spans, recorder, port, _ = _tool_call("stateless", otel)
    tree = render_tree(spans)
    rounds = sorted((s for s in spans if s.name == "tools/call ask" and s.kind == "CLIENT"), key=lambda s: s.start_time)
    served = sorted((s for s in spans if s.name == "tools/call ask" and s.kind == "SERVER"), key=lambda s: s.start_time)
    answered = one_span(spans, "elicitation/create")
    assert len(rounds) == len(served) == 2, tree  # the first round asks, the retry carries the answer
    assert [parent_of(spans, s) for s in served] == rounds, tree
    assert rounds[0].end_time <= answered.start_time and answered.end_time <= rounds[1].start_time
    assert {span.trace_id for span in spans} == {rounds[0].trace_id}, tree
    for span in rounds:
        _check_http_attributes(span, "client", port, None)
    for span in served:
        _check_http_attributes(span, "server", port, None)
    _check_w3c_headers(recorder, spans)


def test_the_initialize_spans_name_the_session_it_opened(otel: Otel) -> None:
    """The conventions' Streamable HTTP ``initialize`` example: the client's span, too, carries the
    ``mcp.session.id`` that only its answer brought, and the HTTP version (from that answer)."""
    port = 0
    session: str | None = None

    async def body() -> None:
        nonlocal port, session
        async with serve_on_loopback(_server().http_app()) as base:
            port = int(base.rsplit(":", 1)[1])
            async with Client.http(base + "/mcp", era="handshake") as client:
                session = getattr(client.transport, "session_id", None)
            await otel.wait_spans(lambda spans: len(spans_by_name(spans, "initialize")) == 2)

    otel.clear()
    run(body)
    spans = otel.spans()
    assert session
    _check_http_attributes(one_span(spans, "initialize", kind="CLIENT"), "client", port, session)
    _check_http_attributes(one_span(spans, "initialize", kind="SERVER"), "server", port, session)
    assert {s.attributes["mcp.protocol.version"] for s in spans_by_name(spans, "initialize")} == {"2025-11-25"}


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_an_outer_http_span_is_the_ambient_context_rather_than_the_headers(era: str, otel: Otel) -> None:
    """An ASGI instrumentation that made its own HTTP span current wins: that span is linked."""
    from opentelemetry import trace

    inner = _server().http_app()

    async def instrumented(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await inner(scope, receive, send)
            return
        with trace.get_tracer("asgi").start_as_current_span(f"HTTP {scope['method']}", kind=trace.SpanKind.SERVER):
            await inner(scope, receive, send)

    async def body() -> None:
        async with (
            serve_on_loopback(instrumented) as base,
            Client.http(base + "/mcp", era=era, elicitation=_person) as client,
        ):
            otel.clear()
            await client.call_tool("ask", {})
            await otel.wait_spans(lambda spans: any(s.name == "tools/call ask" and s.kind == "SERVER" for s in spans))

    run(body)
    spans = otel.spans()
    served = next(s for s in spans if s.name == "tools/call ask" and s.kind == "SERVER")
    http = parent_of(spans, next(s for s in spans if s.name == "HTTP POST"))  # the HTTP span's own parent
    assert http is None or http.kind == "CLIENT"  # (no instrumented HTTP client here: a root)
    (link,) = served.links
    linked = next(s for s in spans if (s.trace_id, s.span_id) == link)
    assert linked.name == "HTTP POST", render_tree(spans)
    assert parent_of(spans, served) is not None and parent_of(spans, served).kind == "CLIENT"  # type: ignore[union-attr]
