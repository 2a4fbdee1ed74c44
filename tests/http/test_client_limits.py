"""One client's share of the handshake era: sessions, event streams, their ends (issue #26, items 6, 7).

On the wire against ``run_http``'s server, with clients at several loopback addresses
(127.0.0.1, 127.0.0.2, ...: a client is its address when it is not authenticated):

- a client that opens GET streams up to its share is refused the next one (429, its own
  reason, ``Retry-After`` when its oldest stream ends), while another client still opens its
  stream and is served; past the server's cap on streams (kept under the connection cap) a GET is
  503 while requests are still answered;
- every SSE response ends at its lifetime with a ``retry`` field; a request's stream goes on and
  is resumed with ``Last-Event-ID``, as after any break; our client and the official Python SDK's
  open their GET stream again after each lifetime, past any count of reconnections, and still
  hear what the server sends there;
- a client that opens sessions and never finishes their handshakes holds at most its share (429,
  naming its share), another client still gets a session, the unfinished sessions end after the
  handshake timeout, and ``Retry-After`` is when that really happens (the retry succeeds then, not
  before); a principal's share is its own, whatever its address.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import warnings
from collections.abc import AsyncIterator
from typing import Any

import httpx2 as httpx
import pytest
from _http_harness import (
    Probe,
    assert_jsonrpc_error,
    call,
    events_of,
    initialize_body,
    legacy_headers,
    make_server,
    on_our_server,
    open_session,
    run,
    wait_until,
)

from backchannel import Client, Server
from backchannel.client import ResourceUpdated
from backchannel.http_host.app import HttpApp
from backchannel.http_host.authenticator import BearerTokens
from backchannel.http_host.client_limits import client_of
from backchannel.testing import serve_on_loopback
from backchannel.types.errors import INTERNAL_ERROR, INVALID_REQUEST, RATE_LIMITED

RETRY_MS = 250


@contextlib.asynccontextmanager
async def client_at(port: int, address: str, **headers: str) -> AsyncIterator[httpx.AsyncClient]:
    """A client whose connections come from ``address`` (any of 127.0.0.0/8 reaches the server)."""
    transport = httpx.AsyncHTTPTransport(local_address=address)
    async with httpx.AsyncClient(
        transport=transport, base_url=f"http://127.0.0.1:{port}", timeout=5, headers=headers
    ) as client:
        yield client


async def open_get(client: httpx.AsyncClient, session_id: str, **extra: str) -> httpx.Response:
    """A GET stream (left open to read) or, when refused, the whole refusal."""
    response = await client.send(
        client.build_request("GET", "/mcp", headers=legacy_headers(session_id, **extra)), stream=True
    )
    if response.status_code != 200:
        await response.aread()
    return response


async def serving(held: contextlib.AsyncExitStack, response: httpx.Response) -> bool:
    """Whether ``response`` is a stream the server is serving (its opening came); it is kept
    open, and read no further, until ``held`` closes."""
    held.push_async_callback(response.aclose)
    if response.status_code != 200:
        return False
    chunks = response.aiter_bytes()  # kept: a reader dropped half-way closes the stream when collected
    held.push_async_callback(chunks.aclose)  # type: ignore[attr-defined]
    async with asyncio.timeout(5):
        return bool(await anext(chunks))


async def to_the_end(response: httpx.Response, bound: float = 5.0) -> bytes:
    """Everything the server sends until it ends the response."""
    body = bytearray()
    async with asyncio.timeout(bound):
        async for chunk in response.aiter_bytes():
            body += chunk
    return bytes(body)


def assert_refused_429(response: httpx.Response) -> dict[str, Any]:
    error = assert_jsonrpc_error(response, 429, RATE_LIMITED)
    wait = int(response.headers["retry-after"])
    assert error["data"]["retryAfterMs"] == wait * 1000
    assert "mcp-session-id" not in response.headers
    return error


# --------------------------------------------------------------------------- event streams (item 6)


def test_a_client_past_its_share_of_streams_is_refused_while_another_is_served() -> None:
    async def body() -> None:
        app = make_server().http_app(max_streams_per_client=3, retry_ms=RETRY_MS)
        async with (
            on_our_server(app) as (port, _),
            contextlib.AsyncExitStack() as held,
            client_at(port, "127.0.0.1") as greedy,
            client_at(port, "127.0.0.2") as other,
        ):
            streams = []
            for _ in range(3):
                session_id = await open_session(greedy)
                stream = await open_get(greedy, session_id)
                assert await serving(held, stream)
                streams.append(stream)
            extra = await open_get(greedy, await open_session(greedy))
            error = assert_refused_429(extra)
            assert "this client (address 127.0.0.1) has 3 event streams open" in error["message"]
            # Retry-After: when its oldest stream reaches its lifetime (600 s by default).
            assert 590 <= int(extra.headers["retry-after"]) <= 600
            # Another client still opens its stream and is served.
            session_id = await open_session(other)
            mine = await open_get(other, session_id)
            assert await serving(held, mine)
            echoed = await other.post("/mcp", json=call("echo", {"text": "hi"}), headers=legacy_headers(session_id))
            assert echoed.status_code == 200 and echoed.json()["result"]["content"][0]["text"] == "hi"
            # The greedy client's share frees as one of its streams ends.
            await streams[0].aclose()
            await wait_until(lambda: len(app.streams.by_client[("address", "127.0.0.1")]) == 2)
            again = await open_get(greedy, await open_session(greedy))
            assert await serving(held, again)

    run(body)


def test_past_the_servers_cap_on_streams_a_get_is_503_and_requests_are_still_served() -> None:
    # The cap keeps connections for requests: 4 streams on a server of 6 connections.
    async def body() -> None:
        app = make_server().http_app(max_streams=4, max_streams_per_client=2)
        async with on_our_server(app, max_connections=6) as (port, _), contextlib.AsyncExitStack() as held:
            for address in ("127.0.0.1", "127.0.0.1", "127.0.0.2", "127.0.0.2"):
                client = await held.enter_async_context(client_at(port, address))
                stream = await open_get(client, await open_session(client))
                assert await serving(held, stream)
            late = await held.enter_async_context(client_at(port, "127.0.0.3"))
            session_id = await open_session(late)
            refused = await open_get(late, session_id)
            error = assert_jsonrpc_error(refused, 503, INTERNAL_ERROR)
            assert "limit of 4 open event streams" in error["message"] and int(refused.headers["retry-after"]) >= 590
            answered = await late.post("/mcp", json=call("echo", {"text": "x"}), headers=legacy_headers(session_id))
            assert answered.status_code == 200

    run(body)


def test_a_stream_past_its_lifetime_ends_with_a_retry_and_is_resumed_with_last_event_id() -> None:
    async def body() -> None:
        probe = Probe()
        app = make_server(probe).http_app(stream_lifetime=0.5, retry_ms=RETRY_MS)
        async with on_our_server(app) as (port, _), client_at(port, "127.0.0.1") as client:
            session_id = await open_session(client)
            # The session's GET stream ends at its lifetime, saying when to come back.
            get = await open_get(client, session_id)
            assert get.status_code == 200
            ended = await to_the_end(get)
            assert ended.endswith(f"retry: {RETRY_MS}\n\n".encode())
            # Opened again with its Last-Event-ID: a new GET stream (one of another id; nothing replayed).
            get_id = events_of(ended)[0].event_id
            assert get_id is not None
            again = await open_get(client, session_id, **{"last-event-id": get_id})
            assert again.status_code == 200
            assert events_of(await to_the_end(again))[0].event_id not in (None, get_id)
            # A request's stream ends at its lifetime too, while its tool still runs...
            post = await client.send(
                client.build_request(
                    "POST",
                    "/mcp",
                    json=call("gated", request_id=7, progressToken="p"),
                    headers=legacy_headers(session_id),
                ),
                stream=True,
            )
            cut = await to_the_end(post)
            assert cut.endswith(f"retry: {RETRY_MS}\n\n".encode())
            assert cut.startswith(b"id: ") and f"retry: {RETRY_MS}\n".encode() in cut.partition(b"\n\n")[0]
            assert not probe.release.is_set()
            last_id = events_of(cut)[-1].event_id  # the last event id the client saw (progress 1/3)
            # ...and goes on: resumed with Last-Event-ID, it brings the rest and the answer.
            await probe.started.wait()
            probe.release.set()
            assert last_id is not None and last_id.endswith("_1")
            resumed = await open_get(client, session_id, **{"last-event-id": last_id})
            assert resumed.status_code == 200
            rest = [event for event in events_of(await to_the_end(resumed)) if event.data]
            assert '"gated done"' in rest[-1].data and '"id":7' in rest[-1].data.replace(" ", "")
            assert not app.streams.by_client and not app.streams.gets

    run(body)


def test_our_clients_get_stream_outlives_many_lifetimes() -> None:
    # Each GET stream opens with a new event id: a client that gives up after some reconnections
    # without news (ours: max_reconnects, 5) sees every reconnection make progress.
    async def body() -> None:
        server = Server("lifetimes")
        server.add_resource("res://w", lambda: "w")
        app = server.http_app(stream_lifetime=0.1, retry_ms=20)
        gets = 0

        async def counting(scope: dict[str, Any], receive: Any, send: Any) -> None:
            nonlocal gets
            gets += scope["type"] == "http" and scope["method"] == "GET"
            await app(scope, receive, send)

        async with (
            serve_on_loopback(counting) as base,
            Client.http(base + "/mcp", era="handshake") as client,
            client.listen("res://w") as events,
        ):
            await wait_until(lambda: gets >= 10, timeout=10)  # ten lifetimes: past any give-up count
            heard = asyncio.ensure_future(anext(aiter(events)))
            while not heard.done():  # what is sent between two streams may be lost: tell until heard
                server.notify_resource_updated("res://w")
                await asyncio.wait({heard}, timeout=0.05)
            assert heard.result() == ResourceUpdated("res://w")

    run(body)


def test_the_official_python_sdks_get_stream_outlives_many_lifetimes() -> None:
    # The official Python SDK client (mcp) opens its GET stream again after each lifetime and
    # still hears what the server sends on it.
    pytest.importorskip("mcp")
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def body() -> None:
        server = Server("lifetimes")
        server.add_resource("res://w", lambda: "w")
        app = server.http_app(stream_lifetime=0.1, retry_ms=20)
        gets = 0
        heard = asyncio.Event()

        async def counting(scope: dict[str, Any], receive: Any, send: Any) -> None:
            nonlocal gets
            gets += scope["type"] == "http" and scope["method"] == "GET"
            await app(scope, receive, send)

        async def on_message(message: Any) -> None:
            if "notifications/resources/updated" in repr(message):
                heard.set()

        async with (
            serve_on_loopback(counting) as base,
            streamable_http_client(base + "/mcp") as (read, write, *_),
            ClientSession(read, write, message_handler=on_message) as session,
        ):
            await session.initialize()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # (the SDK marks resources/subscribe deprecated in 2026-07-28)
                await session.subscribe_resource("res://w")
            await wait_until(lambda: gets >= 10, timeout=10)
            while not heard.is_set():  # what is sent between two streams may be lost: tell until heard
                server.notify_resource_updated("res://w")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(heard.wait(), 0.05)

    run(body)


# --------------------------------------------------------------------------- sessions (item 7)


async def initialize(client: httpx.AsyncClient) -> httpx.Response:
    """``initialize`` alone: the session's handshake is never finished."""
    return await client.post("/mcp", json=initialize_body(), headers=legacy_headers())


def test_unfinished_handshakes_hold_a_clients_share_only_and_expire_with_an_honest_retry_after() -> None:
    async def body() -> None:
        app = make_server().http_app(max_sessions=5, max_sessions_per_client=3, handshake_timeout=2.0)
        async with on_our_server(app) as (port, _), client_at(port, "127.0.0.1") as greedy:
            unfinished = []
            for _ in range(3):
                opened = await initialize(greedy)
                assert opened.status_code == 200
                unfinished.append(opened.headers["mcp-session-id"])
            refused = await initialize(greedy)
            refused_at = time.monotonic()
            error = assert_refused_429(refused)
            assert "this client (address 127.0.0.1) holds 3 live sessions, its share" in error["message"]
            wait = int(refused.headers["retry-after"])
            assert 1 <= wait <= 2  # the first unfinished session ends 2 s after it opened
            # Another client is not locked out: it gets a session, and a finished one at that.
            async with client_at(port, "127.0.0.2") as other:
                await open_session(other)
            # Retry-After is when a place really frees: not a second before it, and at it.
            while (retried := await initialize(greedy)).status_code == 429:
                assert time.monotonic() - refused_at < wait + 1.0, "no place freed at Retry-After"
                await asyncio.sleep(0.05)  # the client's polling pace
            assert retried.status_code == 200 and time.monotonic() - refused_at > wait - 1.0
            # The unfinished sessions end (no one sent notifications/initialized): 404 from now on.
            await wait_until(lambda: not set(unfinished) & set(app.sessions.sessions), timeout=5)
            gone = await greedy.post("/mcp", json=call("echo", {"text": "x"}), headers=legacy_headers(unfinished[0]))
            assert_jsonrpc_error(gone, 404, INVALID_REQUEST)

    run(body)


def test_at_the_servers_cap_retry_after_is_when_the_first_session_ends() -> None:
    async def body() -> None:
        app = make_server().http_app(max_sessions=2, max_sessions_per_client=1, handshake_timeout=3.0)
        async with on_our_server(app) as (port, _), contextlib.AsyncExitStack() as held:
            for address in ("127.0.0.1", "127.0.0.2"):
                client = await held.enter_async_context(client_at(port, address))
                assert (await initialize(client)).status_code == 200
            third = await held.enter_async_context(client_at(port, "127.0.0.3"))
            refused = await initialize(third)
            assert_jsonrpc_error(refused, 503, INTERNAL_ERROR)
            assert 2 <= int(refused.headers["retry-after"]) <= 3  # not the fixed 5: the first expiry

    run(body)


def test_a_principals_share_is_its_own_whatever_its_address() -> None:
    async def body() -> None:
        tokens = BearerTokens({"tok-a": "alice", "tok-b": "bob"})
        app: HttpApp = make_server().http_app(authenticator=tokens, max_sessions_per_client=2)
        async with (
            on_our_server(app) as (port, _),
            client_at(port, "127.0.0.1", authorization="Bearer tok-a") as alice,
            client_at(port, "127.0.0.1", authorization="Bearer tok-b") as bob,
        ):
            for _ in range(2):
                await open_session(alice)
            error = assert_refused_429(await initialize(alice))
            assert "this client (principal alice) holds 2 live sessions" in error["message"]
            await open_session(bob)  # same address, another principal: its own share

    run(body)


def test_who_a_client_is() -> None:
    def of(principal: str | None, host: str | None) -> tuple[str, str]:
        return client_of(principal, {"client": (host, 1) if host is not None else None})

    assert of("alice", "127.0.0.1") == ("principal", "alice")  # authenticated: its principal, wherever from
    assert of(None, "127.0.0.2") == ("address", "127.0.0.2")
    assert of(None, "2001:db8:1:2::5") == of(None, "2001:db8:1:2:ffff::9")  # one host's /64
    assert of(None, "2001:db8:1:2::5") != of(None, "2001:db8:1:3::5")
    assert of(None, "::ffff:10.0.0.7") == ("address", "10.0.0.7")
    assert of(None, None) == ("address", "unknown")  # (no address: a unix socket)


def test_the_deprecated_sse_transports_streams_count_in_the_clients_share() -> None:
    # GET /sse (2024-11-05) holds a connection as a GET stream does: the same share, no lifetime
    # (the stream is the session, and cannot be resumed).
    async def body() -> None:
        app = make_server().http_app(legacy_sse=True, max_streams_per_client=2, stream_lifetime=0.1)
        async with on_our_server(app) as (port, _), contextlib.AsyncExitStack() as held:
            client = await held.enter_async_context(client_at(port, "127.0.0.1"))

            async def sse() -> httpx.Response:
                response = await client.send(
                    client.build_request("GET", "/sse", headers={"accept": "text/event-stream"}), stream=True
                )
                if response.status_code != 200:
                    await response.aread()
                return response

            streams = [await sse(), await sse()]
            for stream in streams:
                assert await serving(held, stream)
            assert_refused_429(await sse())
            # An endpoint's GET stream (another client's) ends at its lifetime; the old streams do not.
            other = await held.enter_async_context(client_at(port, "127.0.0.2"))
            assert (await to_the_end(await open_get(other, await open_session(other)))).endswith(b"\n\n")
            assert len(app.streams.gets) == 2 and len(app.legacy_sse.sessions) == 2  # type: ignore[union-attr]

    run(body)
