"""One trace across backchannel and the official Python SDK (mcp 2.3.0), both ways, both eras,
over Streamable HTTP and stdio.

2026-07-28 ``basic/index.mdx`` "OpenTelemetry trace context": the ``_meta`` keys ``traceparent``,
``tracestate`` and ``baggage`` carry W3C trace context, per the OpenTelemetry semantic conventions for
MCP. mcp 2.3.0 follows them on its own: its dispatcher opens a CLIENT span ``MCP send {method} {name}``
around every request it sends and injects the current context into that request's ``_meta``
(``mcp/shared/jsonrpc_dispatcher.py``, ``mcp/shared/_otel.py``); its server's default middleware opens
a SERVER span ``{method} {name}`` parented on the context it extracts from ``_meta``
(``mcp/server/_otel.py``).

Over HTTP both sides run in this process (uvicorn on 127.0.0.1 in this event loop), so every span of
both SDKs reaches the same in-memory exporter (``tests/telemetry/_otel.py``); the server's tasks were
started before the test's root span existed, and neither SDK sends W3C headers (no HTTP instrumentation
is installed), so the context crosses only as ``_meta``. Over stdio the client spawns the server
(``peers/traced_server.py``), which writes its spans to a file read back here. Our span for the call is
``tools/call echo``, the conventions' name, which the official server's span also has; the official
client's span has its own name.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from _otel import Otel, SpanRecord, one_span, parent_of, read_span_file, render_tree
from opentelemetry import trace
from peers.traced_server import our_server

from backchannel import Client
from backchannel.testing import run, serve_on_loopback

pytestmark = pytest.mark.interop

mcp = pytest.importorskip("mcp", reason="the official Python SDK (mcp==2.3.0) is not installed")

PEER = Path(__file__).resolve().parent / "peers" / "traced_server.py"
#: Their client's span for ``tools/call`` of ``echo`` (``jsonrpc_dispatcher.py``).
THEIR_CLIENT_SPAN = "MCP send tools/call echo"
#: The conventions' span name, which our spans and their server's span both use.
CALL_SPAN = "tools/call echo"


def their_server() -> Any:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("their-traced")

    @server.tool()
    def echo(text: str) -> str:
        """Answer the text back."""
        return text

    return server


def has(name: str, kind: str) -> Any:
    def check(spans: list[SpanRecord]) -> bool:
        return any(span.name == name and span.kind == kind for span in spans)

    return check


def assert_child(spans: list[SpanRecord], child: SpanRecord, parent: SpanRecord) -> None:
    tree = render_tree(spans)
    assert child.trace_id == parent.trace_id, f"{child.name} is in another trace than {parent.name}:\n{tree}"
    assert child.parent_id == parent.span_id, f"{child.name} is not a child of {parent.name}:\n{tree}"


def assert_descendant(spans: list[SpanRecord], span: SpanRecord, ancestor: SpanRecord) -> None:
    """``span`` is under ``ancestor`` through spans of this process (in the stateless era our client
    wraps an operation's rounds in an INTERNAL span, parent of each round's CLIENT span)."""
    up: SpanRecord | None = span
    while up is not None and up.span_id != ancestor.span_id:
        up = parent_of(spans, up)
    assert up is not None, f"{span.name} is not under {ancestor.name}:\n{render_tree(spans)}"


@pytest.mark.parametrize("transport", ["http", "stdio"])
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_the_official_client_s_trace_continues_in_our_server(
    otel: Otel, mode: str, transport: str, tmp_path: Path
) -> None:
    from mcp.client.client import Client as TheirClient
    from mcp.client.stdio import StdioServerParameters

    tracer = trace.get_tracer("interop-test")
    span_file = tmp_path / "server-spans.jsonl"

    async def call(target: Any) -> None:
        with tracer.start_as_current_span("caller"):
            async with TheirClient(target, mode=mode) as client:
                result = await client.call_tool("echo", {"text": "hi"})
                assert client.protocol_version == ("2025-11-25" if mode == "legacy" else mode)
        assert not result.is_error

    async def body() -> list[SpanRecord]:
        if transport == "stdio":
            child = [str(PEER), "ours", str(span_file)]
            await call(StdioServerParameters(command=sys.executable, args=child, env=dict(os.environ)))
            return otel.spans() + read_span_file(span_file)  # the child has exited: its file is whole
        async with serve_on_loopback(our_server().http_app()) as base:
            await call(f"{base}/mcp")
            return await otel.wait_spans(has(CALL_SPAN, "SERVER"))

    spans = run(body)
    caller = one_span(spans, "caller")
    theirs = one_span(spans, THEIR_CLIENT_SPAN, kind="CLIENT")
    ours = one_span(spans, CALL_SPAN, kind="SERVER")
    assert_child(spans, theirs, caller)
    assert_child(spans, ours, theirs)
    assert ours.attributes["mcp.method.name"] == "tools/call"
    assert ours.attributes["gen_ai.tool.name"] == "echo"


@pytest.mark.parametrize("transport", ["http", "stdio"])
@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_our_client_s_trace_continues_in_the_official_server(
    otel: Otel, era: str, transport: str, tmp_path: Path
) -> None:
    tracer = trace.get_tracer("interop-test")
    span_file = tmp_path / "server-spans.jsonl"

    async def call(client: Client) -> None:
        with tracer.start_as_current_span("caller"):
            async with client:
                result = await client.call_tool("echo", {"text": "hi"})
                assert client.era == era
        assert not result.is_error

    async def body() -> list[SpanRecord]:
        if transport == "stdio":
            child = [str(PEER), "theirs", str(span_file)]
            await call(Client.stdio(sys.executable, child, era=era, request_timeout=20))
            return otel.spans() + read_span_file(span_file)
        async with serve_on_loopback(their_server().streamable_http_app()) as base:
            await call(Client.http(f"{base}/mcp", era=era, request_timeout=20))
            return await otel.wait_spans(has(CALL_SPAN, "SERVER"))

    spans = run(body)
    caller = one_span(spans, "caller")
    ours = one_span(spans, CALL_SPAN, kind="CLIENT")
    theirs = one_span(spans, CALL_SPAN, kind="SERVER")
    assert_descendant(spans, ours, caller)
    assert_child(spans, theirs, ours)
    assert theirs.attributes["mcp.method.name"] == "tools/call"
