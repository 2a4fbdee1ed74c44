"""W3C trace context in HTTP headers (issue #20: "Over HTTP, the W3C headers work too"), on a real
uvicorn server, with raw POSTs (httpx2) whose headers and bodies the test writes itself.

The MCP conventions (``docs/gen-ai/mcp.md``, "Context propagation"): the server parents its span
on the context in ``params._meta``, and links the ambient context (here, the HTTP request's
``traceparent``); with no context in ``_meta``, the ambient context is the parent. Both eras: a
stateless-era POST is its own request, a handshake-era POST feeds its session.
"""

from __future__ import annotations

import sys
from pathlib import Path

import httpx2
from _otel import Otel, SpanRecord, one_span, render_tree

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "http"))  # the HTTP tests' raw-message helpers

from _http_harness import call, initialize_body, legacy_headers, make_server, modern, modern_headers

from backchannel.testing import run, serve_on_loopback

#: The HTTP request's context (W3C Trace Context's own example) and another one, in ``_meta``.
HEADER_TRACE, HEADER_SPAN = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
HEADER = f"00-{HEADER_TRACE}-{HEADER_SPAN}-01"
META_TRACE, META_SPAN = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
META = f"00-{META_TRACE}-{META_SPAN}-01"


def _ids(span: SpanRecord) -> tuple[str, str | None]:
    parent = None if span.parent_id is None else f"{span.parent_id:016x}"
    return f"{span.trace_id:032x}", parent


def _links(span: SpanRecord) -> list[tuple[str, str]]:
    return [(f"{trace:032x}", f"{span_id:016x}") for trace, span_id in span.links]


def test_stateless_post_the_header_is_the_parent_without_meta_context_and_a_link_with_it(otel: Otel) -> None:
    async def body() -> None:
        async with serve_on_loopback(make_server().http_app()) as base, httpx2.AsyncClient(timeout=10) as http:
            bare = modern(call("echo", {"text": "a"}, request_id="bare"))
            response = await http.post(base + "/mcp", json=bare, headers=modern_headers(bare, traceparent=HEADER))
            assert response.status_code == 200, response.text
            both = modern(call("echo", {"text": "b"}, request_id="both"), traceparent=META)
            response = await http.post(base + "/mcp", json=both, headers=modern_headers(both, traceparent=HEADER))
            assert response.status_code == 200, response.text

    run(body)
    spans = otel.spans()
    bare, both = (s for s in spans if s.name == "tools/call echo" and s.kind == "SERVER")
    assert (bare.attributes["jsonrpc.request.id"], both.attributes["jsonrpc.request.id"]) == ("bare", "both")
    assert _ids(bare) == (HEADER_TRACE, HEADER_SPAN), render_tree(spans)
    assert _links(bare) == []  # the parent already: nothing more to link
    assert _ids(both) == (META_TRACE, META_SPAN), render_tree(spans)
    assert _links(both) == [(HEADER_TRACE, HEADER_SPAN)]
    for span in (bare, both):  # each stateless-era POST is its own connection: HTTP, no session
        assert span.attributes["network.transport"] == "tcp"
        assert span.attributes["network.protocol.name"] == "http"
        assert span.attributes["network.protocol.version"] == "1.1"
        assert span.attributes["client.address"] == "127.0.0.1"
        assert "mcp.session.id" not in span.attributes


def test_handshake_posts_the_header_is_the_parent_without_meta_context_and_a_link_with_it(otel: Otel) -> None:
    session_id = ""

    async def body() -> None:
        nonlocal session_id
        async with serve_on_loopback(make_server().http_app()) as base, httpx2.AsyncClient(timeout=10) as http:
            url = base + "/mcp"
            opened = await http.post(url, json=initialize_body(), headers=legacy_headers(traceparent=HEADER))
            assert opened.status_code == 200, opened.text
            session_id = opened.headers["mcp-session-id"]
            done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            assert (await http.post(url, json=done, headers=legacy_headers(session_id))).status_code == 202
            bare = call("echo", {"text": "a"}, request_id="bare")
            response = await http.post(url, json=bare, headers=legacy_headers(session_id, traceparent=HEADER))
            assert response.status_code == 200, response.text
            both = call("echo", {"text": "b"}, request_id="both", traceparent=META)
            response = await http.post(url, json=both, headers=legacy_headers(session_id, traceparent=HEADER))
            assert response.status_code == 200, response.text

    run(body)
    spans = otel.spans()
    initialize = one_span(spans, "initialize", kind="SERVER")
    bare, both = (s for s in spans if s.name == "tools/call echo" and s.kind == "SERVER")
    assert _ids(initialize) == (HEADER_TRACE, HEADER_SPAN), render_tree(spans)
    assert _ids(bare) == (HEADER_TRACE, HEADER_SPAN), render_tree(spans)
    assert _ids(both) == (META_TRACE, META_SPAN), render_tree(spans)
    assert _links(both) == [(HEADER_TRACE, HEADER_SPAN)]
    for span in (initialize, bare, both):
        assert span.attributes["mcp.session.id"] == session_id
        assert span.attributes["network.transport"] == "tcp"
        assert span.attributes["network.protocol.name"] == "http"


def test_a_post_without_trace_headers_or_meta_starts_its_own_trace(otel: Otel) -> None:
    async def body() -> None:
        async with serve_on_loopback(make_server().http_app()) as base, httpx2.AsyncClient(timeout=10) as http:
            message = modern(call("echo", {"text": "a"}))
            response = await http.post(base + "/mcp", json=message, headers=modern_headers(message))
            assert response.status_code == 200, response.text

    run(body)
    span = one_span(otel.spans(), "tools/call echo", kind="SERVER")
    assert span.parent_id is None and span.links == ()
