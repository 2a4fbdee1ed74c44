"""When ``Client.http`` falls back to the HTTP+SSE transport, and when it must not.

The guide (2025-11-25 ``basic/transports.mdx`` §Backwards Compatibility): only a POST of
``initialize`` refused with 400, 404 or 405 leads to ``GET`` of the URL, and only "an SSE stream"
whose first event is ``endpoint`` makes the client use the old transport. Anything else leaves
the POST's own error standing. The servers here are small ASGI apps that misbehave in one way
each (served with uvicorn on 127.0.0.1) and record every request they get; the last tests use
our own server.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from _old_wire import run
from old_friends_server import build

from backchannel import Client
from backchannel.testing import serve_on_loopback
from backchannel.transports.http.client import HttpClientTransport
from backchannel.types.errors import ConnectionClosed, RequestError


class Refusing:
    """Refuses every POST with ``status``; answers GET with ``stream`` (SSE text) or 404."""

    def __init__(self, status: int, stream: str | None = None) -> None:
        self.status = status
        self.stream = stream
        self.seen: list[tuple[str, str]] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        self.seen.append((scope["method"], scope["path"]))
        if scope["method"] == "GET" and self.stream is not None:
            headers = [(b"content-type", b"text/event-stream")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": self.stream.encode(), "more_body": True})
            while (await receive())["type"] != "http.disconnect":
                pass
            return
        status = self.status if scope["method"] == "POST" else 404
        body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": f"no ({status})"}})
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body.encode()})


async def _connect(url: str) -> BaseException | None:
    client = Client.http(url, era="handshake", request_timeout=10)
    try:
        await client.__aenter__()
    except Exception as exc:
        return exc
    await client.aclose()
    return None


@pytest.mark.parametrize("status", [401, 403, 406, 415, 500])
def test_no_fallback_after_other_statuses(status: int) -> None:
    app = Refusing(status, stream="event: endpoint\ndata: /messages\n\n")

    async def body() -> BaseException | None:
        async with serve_on_loopback(app, lifespan="off") as base:
            return await _connect(f"{base}/mcp")

    error = run(body)
    assert isinstance(error, RequestError) and error.message == f"no ({status})"
    assert app.seen == [("POST", "/mcp")]  # no GET: the refusal was not the guide's signal


@pytest.mark.parametrize(
    ("stream", "why"),
    [
        (None, "GET answers 404"),
        ("event: message\ndata: {}\n\n", "the first event is not endpoint"),
        ("event: endpoint\ndata: http://example.com/messages\n\n", "the endpoint is on another origin"),
    ],
)
def test_no_fallback_without_an_endpoint_on_our_origin(stream: str | None, why: str) -> None:
    app = Refusing(404, stream=stream)

    async def body() -> BaseException | None:
        async with serve_on_loopback(app, lifespan="off") as base:
            return await _connect(f"{base}/mcp")

    error = run(body)
    assert isinstance(error, RequestError) and error.message == "no (404)", why
    assert app.seen == [("POST", "/mcp"), ("GET", "/mcp")], why  # nothing was posted anywhere else


@pytest.mark.parametrize("status", [400, 404, 405])
def test_the_guide_s_statuses_lead_to_the_old_transport(status: int) -> None:
    """The refusal of ``initialize`` is the signal; the old server answers on its stream."""
    server = build()

    async def body() -> tuple[bool, str]:
        old = server.http_app(legacy_sse=True)

        async def front(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] == "http" and scope["method"] == "POST" and scope["path"] == "/sse":
                await Refusing(status)(scope, receive, send)
            else:
                await old(scope, receive, send)

        async with (
            serve_on_loopback(front, lifespan="off") as base,
            Client.http(f"{base}/sse", era="handshake", request_timeout=10) as client,
        ):
            assert isinstance(client.transport, HttpClientTransport)
            result = await client.call_tool("echo", {"text": "old"})
            return client.transport.legacy is not None, result.content[0].text  # type: ignore[union-attr]

    assert run(body) == (True, "old")


def test_a_streamable_http_endpoint_is_not_taken_for_an_old_one() -> None:
    async def body() -> bool:
        async with (
            serve_on_loopback(build().http_app(legacy_sse=True)) as base,
            Client.http(f"{base}/mcp", era="handshake") as client,
        ):
            assert isinstance(client.transport, HttpClientTransport)
            await client.call_tool("echo", {"text": "new"})
            return client.transport.legacy is None

    assert run(body) is True


def test_when_the_old_stream_ends_pending_calls_fail_with_connection_closed() -> None:
    server = build()
    started = asyncio.Event()

    @server.tool()
    async def wait_forever() -> str:
        started.set()
        await asyncio.Event().wait()
        return "never"

    async def body() -> BaseException:
        app = server.http_app(legacy_sse=True)
        assert app.legacy_sse is not None
        async with (
            serve_on_loopback(app) as base,
            Client.http(f"{base}/sse", era="handshake", request_timeout=None) as client,
        ):
            call = asyncio.ensure_future(client.call_tool("wait_forever"))
            await started.wait()
            await app.legacy_sse.aclose()  # the server ends the session: its stream ends
            try:
                await call
            except Exception as exc:
                return exc
            raise AssertionError("the call should have failed")

    failure = run(body)
    assert isinstance(failure, ConnectionClosed)
    assert "closed the HTTP+SSE stream" in failure.message
