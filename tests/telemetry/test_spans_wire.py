"""Trace context on the wire (``params._meta``, SEP-414; 2026-07-28 ``basic/index.mdx``, "OpenTelemetry
trace context"), over stdio to a real server process, and nothing at all when telemetry is off."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _otel import Otel, SpanRecord, one_span, parent_of, read_span_file, render_tree, spans_by_name

from backchannel import Client, Server
from backchannel.testing import Tap, connected

HERE = Path(__file__).resolve().parent
TRACE_KEYS = {"traceparent", "tracestate", "baggage"}

#: Run in a fresh interpreter (this process has an SDK once any telemetry test ran): serve an echo
#: tool over the memory transport with the server's wire tapped, and print what it read.
_UNTRACED_CALL = """
import asyncio, json, sys
if sys.argv[1] == "api-imported":
    import opentelemetry.trace, opentelemetry.metrics  # the API alone, no SDK: still off
from backchannel import Server
from backchannel.testing import Tap, connected

server = Server("plain")

@server.tool()
def echo(text: str) -> str:
    return text

async def main():
    tap = Tap()
    async with connected(server, sys.argv[2], wrap_server=tap.around) as client:
        for _ in range(3):
            await client.call_tool("echo", {"text": "hi"})
    print(json.dumps({
        "received": tap.received,
        "otel_modules": sorted(m for m in sys.modules if m.startswith("opentelemetry")),
    }))

asyncio.run(main())
"""


def untraced_call(mode: str, era: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _UNTRACED_CALL, mode, era], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_without_an_sdk_nothing_imports_opentelemetry_and_the_wire_is_unchanged(era: str) -> None:
    """Design rule 1: no ``opentelemetry`` import by backchannel, no ``_meta`` key added by our client."""
    seen = untraced_call("plain", era)
    assert seen["otel_modules"] == []
    requests = [message for message in seen["received"] if isinstance(message, dict) and "method" in message]
    assert [m["method"] for m in requests if m["method"] == "tools/call"] == ["tools/call"] * 3
    for message in requests:
        assert not TRACE_KEYS & set((message.get("params") or {}).get("_meta", {})), message


def test_with_the_api_imported_but_no_sdk_telemetry_stays_off() -> None:
    """The API's proxy providers are not an SDK: still no context on the wire."""
    seen = untraced_call("api-imported", "handshake")
    assert "opentelemetry.trace" in seen["otel_modules"]
    assert "opentelemetry.sdk" not in seen["otel_modules"]
    requests = [message for message in seen["received"] if isinstance(message, dict) and "method" in message]
    # Without this the loop below would pass on an empty capture.
    assert [m["method"] for m in requests if m["method"] == "tools/call"] == ["tools/call"] * 3
    for message in requests:
        assert not TRACE_KEYS & set((message.get("params") or {}).get("_meta", {})), message


def test_importing_the_server_and_client_imports_no_opentelemetry() -> None:
    code = (
        "import backchannel, backchannel.server, backchannel.client, backchannel.telemetry.spans, sys;"
        "assert not any(m.startswith('opentelemetry') for m in sys.modules), sorted(sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr


def test_the_request_carries_the_client_spans_context_and_the_callers_params_stay_as_they_were(otel: Otel) -> None:
    server = Server("echoing")

    @server.tool()
    def echo(text: str) -> str:
        return text

    params = {"name": "echo", "arguments": {"text": "hi"}, "_meta": {"dev.example/mine": 1}}
    before = copy.deepcopy(params)
    tap = Tap()

    async def body() -> None:
        async with connected(server, "handshake", wrap_server=tap.around) as client:
            otel.clear()
            await client.request("tools/call", params)
            await otel.wait_spans(lambda found: len(spans_by_name(found, "tools/call echo")) == 2)

    asyncio.run(body())
    assert params == before  # not a key added, at any depth
    [received] = tap.requests_received("tools/call")
    meta = received["params"]["_meta"]
    call = one_span(otel.spans(), "tools/call echo", kind="CLIENT")
    version, trace_id, parent_id, flags = meta["traceparent"].split("-")
    assert (version, trace_id, parent_id) == ("00", f"{call.trace_id:032x}", f"{call.span_id:016x}")
    assert int(flags, 16) & 1  # sampled
    assert meta["dev.example/mine"] == 1


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_over_stdio_a_server_process_continues_our_trace(otel: Otel, tmp_path: Path, era: str) -> None:
    """A real stdio server with its own SDK (a file exporter): its spans join our client's trace,
    both sides say ``network.transport=pipe``, and (handshake era) the server's elicitation
    CLIENT span is the parent of our client's SERVER span that answered it."""
    spans_file = tmp_path / "server-spans.jsonl"
    env = {**os.environ, "SPANS_FILE": str(spans_file)}

    async def body() -> None:
        client = Client.stdio(
            sys.executable,
            [str(HERE / "spans_stdio_server.py")],
            env=env,
            era=era,
            elicitation=lambda params: {"action": "accept", "content": {"name": "Ada"}},
        )
        async with client:
            otel.clear()
            result = await client.call_tool("ask", {})
            assert result.content[0].text == "accept:{'name': 'Ada'}"  # type: ignore[union-attr]

    asyncio.run(body())  # the client waits for the server process to exit: its spans are written
    ours = otel.spans()
    theirs = read_span_file(spans_file)
    calls = [span for span in spans_by_name(ours, "tools/call ask") if span.kind == "CLIENT"]
    served = [span for span in spans_by_name(theirs, "tools/call ask") if span.kind == "SERVER"]
    assert len(calls) == len(served) == (1 if era == "handshake" else 2), render_tree([*ours, *theirs])
    for call, serving in zip(calls, served, strict=True):
        assert (serving.trace_id, serving.parent_id) == (call.trace_id, call.span_id)
        assert call.attributes["network.transport"] == serving.attributes["network.transport"] == "pipe"
    if era == "handshake":
        asked = one_span(theirs, "elicitation/create", kind="CLIENT")
        answered = one_span(ours, "elicitation/create", kind="SERVER")
        assert parent_of(theirs, asked) == served[0]
        assert (answered.trace_id, answered.parent_id) == (asked.trace_id, asked.span_id)
        assert answered.attributes["network.transport"] == "pipe"
    else:
        operation = one_span(ours, "tools/call ask", kind="INTERNAL")
        assert all(parent_of(ours, call) == operation for call in calls)
        assert isinstance(operation, SpanRecord)
