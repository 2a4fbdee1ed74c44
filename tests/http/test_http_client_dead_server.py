"""The HTTP client against a server that goes away: ``ConnectionClosed``, at once, in both eras.

A refused connection is not a cut stream: nothing is retried against it, every pending call
fails with ``ConnectionClosed`` and so does every later one. A stream cut under a request is
resumed (handshake era) or blamed on the request (stateless era) only while something still
answers at the URL; otherwise it ends the transport the same way.

The end-to-end tests run a real server process on a loopback socket the test bound, and kill
it (SIGKILL: the kernel closes its sockets, as when a server crashes). The transport-level
tests script each httpx failure with ``httpx.MockTransport``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import httpx2 as httpx
import pytest

from backchannel import Client
from backchannel.protocol.events import ProgressReceived
from backchannel.testing import free_port
from backchannel.testing import run as kit_run
from backchannel.transports.base import TransportBroken
from backchannel.transports.http.client import HttpClientTransport
from backchannel.types.content import TextContent
from backchannel.types.errors import ConnectionClosed, RequestError

BOUND = 20.0  # the whole test, server start-up included: a hang fails here, not in CI's global timeout
PROMPT = 1.0  # what issue #12 asks: a dead server is reported within a second
URL = "http://127.0.0.1:9/mcp"
LEGACY = "2025-11-25"
MODERN = "2026-07-28"
PENDING = 50

SERVER = """
import asyncio, socket, sys

import uvicorn

from backchannel import Context, Server

server = Server("doomed")


@server.tool()
async def hang(ctx: Context) -> str:
    await ctx.report_progress(1)
    await asyncio.Event().wait()
    return "never"


@server.tool()
def echo(text: str) -> str:
    return text


sock = socket.socket(fileno=int(sys.argv[1]))
config = uvicorn.Config(server.http_app(), log_level="warning", lifespan="off")
asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))
"""


run = functools.partial(kit_run, timeout=BOUND)


@contextlib.contextmanager
def doomed_server() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A server process listening on a socket bound here; its URL and the process to kill.

    The socket listens before the child starts, so the client may connect at once (the
    connection waits in the backlog); once the child dies nothing holds it, and a connection
    is refused.
    """
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    try:
        process = subprocess.Popen([sys.executable, "-c", SERVER, str(sock.fileno())], pass_fds=[sock.fileno()])
    finally:
        sock.close()  # the child's copy is the only one left
    try:
        yield f"http://127.0.0.1:{port}/mcp", process
    finally:
        process.kill()
        process.wait(timeout=BOUND)


def nothing_listens() -> str:
    return f"http://127.0.0.1:{free_port()}/mcp"  # the port is free: nothing listens there


def kill(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=BOUND)


def leaving_bounded() -> asyncio.Timeout:
    """A scope whose deadline is set just before the client is left, so that leaving it
    (closing the transport, no DELETE to hang on) is bounded too."""
    return asyncio.timeout(None)


def assert_unreachable(exc: object, url: str) -> None:
    assert isinstance(exc, ConnectionClosed), f"{type(exc).__name__}: {exc}"
    assert not isinstance(exc, RequestError)
    assert f"the server at {url} cannot be reached" in str(exc), str(exc)


# --------------------------------------------------------------------- end to end


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_pending_calls_fail_at_once_with_connection_closed_when_the_server_dies(era: str) -> None:
    """50 calls in flight, each on an SSE stream with progress (handshake era: with event ids,
    so resumable); the server is killed: every call fails within a second with
    ``ConnectionClosed``, not after reconnection attempts and not as ``RequestError``. A later
    call fails the same way, and leaving the client does not hang."""

    async def main() -> None:
        with doomed_server() as (url, process):
            async with leaving_bounded() as leaving, Client.http(url, era=era) as client:
                assert client.era == era
                started = 0
                all_started = asyncio.Event()

                def on_progress(_: ProgressReceived) -> None:
                    nonlocal started
                    started += 1
                    if started == PENDING:
                        all_started.set()

                calls = [
                    asyncio.ensure_future(client.call_tool("hang", {}, on_progress=on_progress)) for _ in range(PENDING)
                ]
                await all_started.wait()
                kill(process)
                async with asyncio.timeout(PROMPT):
                    outcomes = await asyncio.gather(*calls, return_exceptions=True)
                for outcome in outcomes:
                    assert_unreachable(outcome, url)
                async with asyncio.timeout(PROMPT):
                    with pytest.raises(ConnectionClosed) as later:
                        await client.call_tool("echo", {"text": "anyone?"})
                assert_unreachable(later.value, url)
                assert client.connection.pending_requests == 0
                leaving.reschedule(asyncio.get_running_loop().time() + PROMPT)

    run(main)


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_a_call_after_the_server_died_while_idle_fails_with_connection_closed(era: str) -> None:
    """Nothing was pending when the server died: the next call finds it gone (a refused
    connection, or a pooled connection the server dropped) and fails at once."""

    async def main() -> None:
        with doomed_server() as (url, process):
            async with leaving_bounded() as leaving, Client.http(url, era=era) as client:
                [said] = (await client.call_tool("echo", {"text": "hi"})).content
                assert isinstance(said, TextContent) and said.text == "hi"
                kill(process)
                async with asyncio.timeout(PROMPT):
                    with pytest.raises(ConnectionClosed) as first:
                        await client.call_tool("echo", {"text": "anyone?"})
                    with pytest.raises(ConnectionClosed) as second:
                        await client.list_tools()
                assert_unreachable(first.value, url)
                assert_unreachable(second.value, url)
                leaving.reschedule(asyncio.get_running_loop().time() + PROMPT)

    run(main)


@pytest.mark.parametrize("era", ["auto", "handshake", "stateless"])
def test_connecting_to_a_port_where_nothing_listens_raises_connection_closed(era: str) -> None:
    """No server at all: entering the client fails at once (the era probe included), with the
    URL and the system's reason in the message."""
    url = nothing_listens()

    async def main() -> None:
        async with asyncio.timeout(PROMPT):
            with pytest.raises(ConnectionClosed) as refused:
                async with Client.http(url, era=era):
                    pass  # pragma: no cover - never entered
        assert_unreachable(refused.value, url)
        assert "Connection refused" in str(refused.value)

    run(main)


# ------------------------------------------------------------ the transport, scripted


def sse(message: dict[str, Any], event_id: str | None = None) -> bytes:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}data: {json.dumps(message)}\n\n".encode()


def result(request_id: Any, value: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def request(request_id: Any, method: str, *, stateless: bool = False) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "x"}
    if stateless:
        params["_meta"] = {"io.modelcontextprotocol/protocolVersion": MODERN}
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


class CutStream(httpx.AsyncByteStream):
    """A response body that breaks after ``chunks`` with ``failure``, as a dying server's does."""

    def __init__(self, chunks: list[bytes], failure: Exception) -> None:
        self.chunks = chunks
        self.failure = failure

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk
        raise self.failure


Script = Callable[[httpx.Request, int], httpx.Response]


class Scripted:
    """An httpx transport whose n-th request (from 0) is answered, or failed, by ``script``."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.seen: list[httpx.Request] = []

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        return self.script(request, len(self.seen) - 1)

    def methods(self) -> list[str]:
        return [r.method for r in self.seen]


@contextlib.asynccontextmanager
async def scripted(script: Script, **options: Any) -> AsyncIterator[tuple[HttpClientTransport, Scripted]]:
    endpoint = Scripted(script)
    http = httpx.AsyncClient(transport=httpx.MockTransport(endpoint.handle))
    transport = HttpClientTransport(URL, httpx_client=http, open_get_stream=False, **options)
    await transport.start()
    try:
        yield transport, endpoint
    finally:
        await transport.close()
        await http.aclose()


async def next_batch(transport: HttpClientTransport) -> list[Any] | None:
    async with asyncio.timeout(PROMPT):
        return await transport.receive()


def refused(request: httpx.Request) -> httpx.ConnectError:
    return httpx.ConnectError("All connection attempts failed", request=request)


def alive(request: httpx.Request) -> httpx.Response:
    """What a live server answers to a GET without a session: any status proves it is there."""
    return httpx.Response(400, json={"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "no"}})


def primed_stream(retry_ms: int, failure: Exception) -> httpx.Response:
    priming = f"id: s_0\nretry: {retry_ms}\ndata:\n\n".encode()
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=CutStream([priming], failure))


@pytest.mark.parametrize(
    "failure",
    [
        pytest.param(lambda r: refused(r), id="ConnectError"),
        pytest.param(lambda r: httpx.ConnectTimeout("timed out", request=r), id="ConnectTimeout"),
    ],
)
def test_a_post_that_cannot_connect_ends_the_transport(failure: Callable[[httpx.Request], Exception]) -> None:
    def script(request: httpx.Request, n: int) -> httpx.Response:
        raise failure(request)

    async def main() -> None:
        async with scripted(script) as (transport, endpoint):
            transport.write([request(1, "tools/call")])
            with pytest.raises(TransportBroken) as ended:
                await next_batch(transport)
            assert endpoint.methods() == ["POST"]  # no reachability check, no retry: it is gone
        assert f"the server at {URL} cannot be reached: {type(failure(endpoint.seen[0])).__name__}" in str(ended.value)

    run(main)


def test_a_cut_stream_whose_server_still_answers_is_resumed_with_last_event_id() -> None:
    """Handshake era, a ReadError mid-stream: one GET without the session finds the server
    there, then the stream is resumed after ``retry`` as before."""

    def script(request: httpx.Request, n: int) -> httpx.Response:
        if n == 0:
            return primed_stream(10, httpx.ReadError("connection reset"))
        if "last-event-id" not in request.headers:
            return alive(request)
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=sse(result(1, {}), "s_1"))

    async def main() -> None:
        async with scripted(script) as (transport, endpoint):
            transport.session_id, transport.protocol_version = "sid", LEGACY
            transport.write([request(1, "tools/call")])
            assert await next_batch(transport) == [result(1, {})]
            _post, check, resume = endpoint.seen[:3]
            assert "mcp-session-id" not in check.headers and "last-event-id" not in check.headers
            assert resume.headers["last-event-id"] == "s_0"
            assert resume.headers["mcp-session-id"] == "sid"

    run(main)


@pytest.mark.parametrize("stateless", [False, True], ids=["handshake", "stateless"])
@pytest.mark.parametrize(
    "cut",
    [
        pytest.param(lambda: httpx.RemoteProtocolError("incomplete chunked read"), id="RemoteProtocolError"),
        pytest.param(lambda: httpx.ReadError("connection reset"), id="ReadError"),
    ],
)
def test_a_cut_stream_whose_server_is_gone_ends_the_transport_without_backoff(
    stateless: bool, cut: Callable[[], Exception]
) -> None:
    """The server died mid-response: its stream is cut and nothing answers any more. The
    transport ends at once, whatever ``retry`` says (an hour here), with no resumption."""

    def script(request: httpx.Request, n: int) -> httpx.Response:
        if n == 0:
            return primed_stream(3_600_000, cut())
        raise refused(request)

    async def main() -> None:
        async with scripted(script) as (transport, endpoint):
            transport.write([request(1, "tools/call", stateless=stateless)])
            with pytest.raises(TransportBroken):
                await next_batch(transport)
            assert all("last-event-id" not in r.headers for r in endpoint.seen)
            with pytest.raises(TransportBroken):
                transport.write([request(2, "ping")])

    run(main)


def test_a_resumption_that_is_refused_ends_the_transport_at_once() -> None:
    """Handshake era: the stream ended cleanly (the server's own poll), but the GET that
    resumes it is refused: one refusal ends it, not ``max_reconnects`` of them."""

    def script(request: httpx.Request, n: int) -> httpx.Response:
        if n == 0:
            priming = b"id: s_0\nretry: 10\ndata:\n\n"
            return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=priming)
        raise refused(request)

    async def main() -> None:
        async with scripted(script, max_reconnects=5) as (transport, endpoint):
            transport.session_id, transport.protocol_version = "sid", LEGACY
            transport.write([request(1, "tools/call")])
            with pytest.raises(TransportBroken):
                await next_batch(transport)
            assert endpoint.methods() == ["POST", "GET"]

    run(main)


@pytest.mark.parametrize("stateless", [False, True], ids=["handshake", "stateless"])
def test_a_cut_without_resumption_is_an_error_answer_while_the_server_is_there(stateless: bool) -> None:
    """No response at all (the server dropped the connection), or a stateless stream cut: the
    server still answers, so that one request fails with -32603 naming the cause, and the
    transport goes on."""

    def script(request: httpx.Request, n: int) -> httpx.Response:
        if n == 0:
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.", request=request)
        if n == 2 and stateless:
            return primed_stream(10, httpx.RemoteProtocolError("incomplete chunked read"))
        if request.method == "GET":
            return alive(request)
        return httpx.Response(200, json=result(json.loads(request.content)["id"], {}))

    async def main() -> None:
        async with scripted(script) as (transport, endpoint):
            transport.write([request(1, "tools/call", stateless=stateless)])
            [error] = await next_batch(transport) or []
            assert error["id"] == 1 and error["error"]["code"] == -32603
            assert "RemoteProtocolError: Server disconnected" in error["error"]["message"]
            transport.write([request(2, "tools/call", stateless=stateless)])
            [answer] = await next_batch(transport) or []
            if stateless:
                assert "the stream broke: RemoteProtocolError" in answer["error"]["message"]
                assert endpoint.methods() == ["POST", "GET", "POST", "GET"]
            else:
                assert answer == result(2, {})

    run(main)


def test_a_dropped_pooled_connection_does_not_pass_for_a_dead_server() -> None:
    """The reachability check itself may first hit a pooled connection the server had
    closed; one more attempt decides."""

    def script(request: httpx.Request, n: int) -> httpx.Response:
        if n == 0:
            return primed_stream(10, httpx.RemoteProtocolError("incomplete chunked read"))
        if n == 1:
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.", request=request)
        return alive(request)

    async def main() -> None:
        async with scripted(script) as (transport, endpoint):
            transport.write([request(1, "tools/call", stateless=True)])
            [error] = await next_batch(transport) or []
            assert "the stream broke: RemoteProtocolError" in error["error"]["message"]
            assert endpoint.methods() == ["POST", "GET", "GET"]

    run(main)


def test_a_full_connection_pool_fails_the_request_without_ending_the_transport() -> None:
    """PoolTimeout is ours (too many requests at once), not the server's absence."""

    def script(request: httpx.Request, n: int) -> httpx.Response:
        if n == 0:
            raise httpx.PoolTimeout("no connection free", request=request)
        return httpx.Response(200, json=result(2, {}))

    async def main() -> None:
        async with scripted(script) as (transport, endpoint):
            transport.write([request(1, "tools/call")])
            [error] = await next_batch(transport) or []
            assert "PoolTimeout" in error["error"]["message"]
            transport.write([request(2, "tools/call")])
            assert await next_batch(transport) == [result(2, {})]
            assert endpoint.methods() == ["POST", "POST"]

    run(main)
