"""The official TypeScript SDK client (@modelcontextprotocol/sdk 1.32.2) and our server's spans.

The TypeScript SDK injects no trace context: its ``dist`` has no OpenTelemetry code and never names
``traceparent`` (checked below, so a release that starts to will show up here). A TypeScript caller
that wants its trace continued puts the W3C context in the request's ``_meta`` itself (2026-07-28
``basic/index.mdx`` "OpenTelemetry trace context"); ``callTool`` sends it as given
(``peers/ts_traced_client.mjs``). Our server, in this process on 127.0.0.1, must parent its SERVER
span on that context, and must start a trace of its own for the call that carries none.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from _otel import Otel, SpanRecord, render_tree, spans_by_name
from peers.traced_server import our_server

from backchannel.testing import run, serve_on_loopback
from peers.paths import NODE22, NODE_MODULES, SYSTEM_NODE

pytestmark = pytest.mark.interop

TS_SDK = NODE_MODULES / "@modelcontextprotocol" / "sdk"
CLIENT = Path(__file__).resolve().parent / "peers" / "ts_traced_client.mjs"
NODE = str(NODE22) if NODE22.is_file() else SYSTEM_NODE
if not (TS_SDK / "package.json").is_file() or NODE is None:
    pytest.skip("the npm peers (tests/peers/install.sh) or node are not installed", allow_module_level=True)

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"
TRACESTATE = "vendor=opaque"


def test_the_typescript_sdk_injects_no_trace_context_itself() -> None:
    names = ("traceparent", "opentelemetry", "@opentelemetry")
    found = [
        (path.relative_to(TS_SDK), name)
        for path in (TS_SDK / "dist").rglob("*.js")
        for name in names
        if name in path.read_text(encoding="utf-8", errors="replace")
    ]
    assert json.loads((TS_SDK / "package.json").read_text())["version"] == "1.32.2"
    assert found == []


def test_a_typescript_client_s_traceparent_in_meta_is_continued_by_our_server(otel: Otel) -> None:
    async def body() -> tuple[dict[str, Any], list[SpanRecord]]:
        async with serve_on_loopback(our_server().http_app()) as base:
            node = await asyncio.create_subprocess_exec(
                NODE,
                str(CLIENT),
                f"{base}/mcp",
                TRACEPARENT,
                TRACESTATE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            async with asyncio.timeout(60):
                out, err = await node.communicate()
            assert node.returncode == 0, err.decode()
            spans = await otel.wait_spans(lambda spans: len(spans_by_name(spans, "tools/call echo")) == 2)
        return json.loads(out), spans

    said, spans = run(body)
    assert [r["content"][0]["text"] for r in said["results"]] == ["traced", "untraced"]
    traced, untraced = (s for s in spans_by_name(spans, "tools/call echo") if s.kind == "SERVER")
    tree = render_tree(spans)
    # The first call carried the context: our span continues the TypeScript caller's trace.
    assert f"{traced.trace_id:032x}" == TRACE_ID, tree
    assert f"{traced.parent_id:016x}" == PARENT_ID, tree
    # The second carried none, and the SDK added none: a trace of its own, no remote parent.
    assert f"{untraced.trace_id:032x}" != TRACE_ID, tree
    assert untraced.parent_id is None, tree
