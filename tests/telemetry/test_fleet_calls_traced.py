"""Trace context between the workers of a fleet, in one process (``MemoryHub``): what one worker
hands another keeps its trace (issue #20, "On many workers, the forwarded messages keep their
context"; docs/observability.md, "HTTP and fleets").

- A fleet call (``state/calls.py``: a URL flow's page or step, asked of the flow's owner) carries
  the caller's context, and the worker that serves it does so in a SERVER span that is its child.
- The client's messages a worker forwards to another (its answer to the other worker's
  elicitation, its notifications) keep their ``_meta`` whole, trace context included, as the
  shared state carries them between workers.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import httpx2
from _otel import Otel, one_span, render_tree

from backchannel.state.calls import Calls
from backchannel.state.memory import MemoryHub, MemoryState
from backchannel.testing import run, serve_on_loopback, within

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fleet"))  # the fleet tests' harness

from _fleet import INITIALIZE, RoundRobin, Worker, fleet_server, post, session_headers

TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def test_a_fleet_call_is_served_in_a_child_span_of_the_callers_context(otel: Otel) -> None:
    hub = MemoryHub()
    asking, owning = MemoryState(hub), MemoryState(hub)
    seen: list[Any] = []

    async def page(request: Any) -> dict[str, Any]:
        from opentelemetry import trace

        seen.append(trace.get_current_span().get_span_context())
        return {"status": 200, "echo": request}

    async def body() -> None:
        from opentelemetry import trace

        caller, owner = Calls(asking), Calls(owning)
        owner.handle("url.page", page)
        await caller.start()
        await owner.start()
        try:
            with trace.get_tracer("test").start_as_current_span("tools/call connect", kind=trace.SpanKind.SERVER):
                answer = await caller.call(owning.worker_id, "url.page", {"path": "/elicit/x"})
            assert answer == {"status": 200, "echo": {"path": "/elicit/x"}}
        finally:
            caller.stop()
            owner.stop()

    run(body)
    spans = otel.spans()
    asked = one_span(spans, "tools/call connect")
    served = one_span(spans, "url.page", kind="SERVER")
    assert (served.trace_id, served.parent_id) == (asked.trace_id, asked.span_id), render_tree(spans)
    assert served.attributes["backchannel.fleet.operation"] == "url.page"
    assert served.attributes["backchannel.fleet.caller"] == asking.worker_id
    # The handler ran inside that span: what it does (a page's own spans, logs) joins the trace.
    assert [(c.trace_id, c.span_id) for c in seen] == [(served.trace_id, served.span_id)]


def test_a_fleet_call_made_outside_any_trace_makes_no_span(otel: Otel) -> None:
    hub = MemoryHub()
    asking, owning = MemoryState(hub), MemoryState(hub)

    async def body() -> None:
        caller, owner = Calls(asking), Calls(owning)

        async def step(args: Any) -> str:
            return "done"

        owner.handle("url.step", step)
        await caller.start()
        await owner.start()
        try:
            assert await caller.call(owning.worker_id, "url.step", {}) == "done"
        finally:
            caller.stop()
            owner.stop()

    run(body)
    assert otel.spans() == []  # no orphan trace for work that belongs to none


def test_the_client_messages_a_worker_forwards_keep_their_meta(otel: Otel) -> None:
    """Its answer to another worker's elicitation and its notifications, as they cross workers."""
    hub = MemoryHub()
    meta = {"traceparent": TRACEPARENT, "tracestate": "rojo=00f067aa0ba902b7", "example.com/x": 1}

    async def body() -> None:
        states = [MemoryState(hub), MemoryState(hub)]
        apps = [fleet_server(Worker(f"w{i}"), state=state).http_app() for i, state in enumerate(states)]
        crossing: list[dict[str, Any]] = []
        watcher = MemoryState(hub)  # a third party on the same channels: what travels between workers
        async with serve_on_loopback(RoundRobin(apps)) as base, httpx2.AsyncClient(timeout=10) as http:
            url = base + "/mcp"
            session = (await post(http, url, None, INITIALIZE)).headers["mcp-session-id"]  # on w0
            for state in states:
                watcher.listen(f"worker:{state.worker_id}", lambda data: crossing.append(json.loads(data)))
            watcher.listen(f"session:{{{session}}}", lambda data: crossing.append(json.loads(data)))
            await post(http, url, session, {"jsonrpc": "2.0", "method": "notifications/initialized"})  # w1
            call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ask", "arguments": {}}}
            async with http.stream(
                "POST", url, content=json.dumps(call), headers=session_headers(session)
            ) as stream:  # on w0, which asks
                lines = stream.aiter_lines()
                asked = None
                async for line in lines:
                    if line.startswith("data: ") and '"elicitation/create"' in line:
                        asked = json.loads(line[6:])
                        break
                assert asked is not None
                answer = {
                    "jsonrpc": "2.0",
                    "id": asked["id"],
                    "result": {"action": "accept", "content": {"name": "ada"}, "_meta": meta},
                }
                assert (await post(http, url, session, answer)).status_code == 202  # on w1: forwarded to w0
                async for line in lines:
                    if line.startswith("data: ") and '"id":1' in line.replace(" ", ""):
                        assert "accept:ada@w0" in line
                        break
            note = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed", "params": {"_meta": meta}}
            assert (await post(http, url, session, note)).status_code == 202  # on w1: told to w0
            await within(lambda: len([m for m in crossing if m.get("k") in ("answer", "note")]) >= 2)

        answers = [m["m"] for m in crossing if m.get("k") == "answer"]
        notes = [m["m"] for m in crossing if m.get("k") == "note"]
        assert [a["result"]["_meta"] for a in answers] == [meta]
        assert [n["params"]["_meta"] for n in notes] == [meta]

    run(body)
