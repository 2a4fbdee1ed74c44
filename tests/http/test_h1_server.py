"""``run_http``'s own HTTP/1.1 server (``http_host/h1/connection.py``, ``serving.py``), on the wire.

Each test serves a small ASGI app (or the MCP app) with ``serving.HttpServer`` on a loopback
socket in the test's loop and talks raw HTTP/1.1 to it: the scope the app sees, request bodies
(content-length, chunked, ``Expect: 100-continue``, flow control), responses (content-length,
chunked and flushed per message, HEAD, backpressure), keep-alive, pipelining, ``Connection:
close``, HTTP/1.0, malformed and oversized requests, app failures, the lifespan and the stop.
The guards (timeouts, the connection cap) are ``test_http_abuse.py``'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from _http_harness import call, initialize_body, legacy_headers, make_server, on_our_server, run, wait_until

from backchannel.http_host.h1 import connection as h1
from backchannel.http_host.h1.serving import HttpServer

Message = dict[str, Any]
App = Callable[
    [dict[str, Any], Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]], Awaitable[None]
]


# --------------------------------------------------------------------------- plumbing


serving = on_our_server  # (``_http_harness``: the app on run_http's server, on a free port)


async def connect(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", port, limit=4 * 1024 * 1024)


async def read_response(reader: asyncio.StreamReader, *, head_only: bool = False) -> tuple[int, dict[str, str], bytes]:
    """One response: status, headers (lower-case names; repeated ones kept last) and the body."""
    head = await reader.readuntil(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").rstrip("\r\n").split("\r\n")
    headers = {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
    status = int(status_line.split()[1])
    if head_only:
        return status, headers, b""
    if "content-length" in headers:
        return status, headers, await reader.readexactly(int(headers["content-length"]))
    if headers.get("transfer-encoding") == "chunked":
        body = b""
        while size := int((await reader.readuntil(b"\r\n")).strip(), 16):
            body += await reader.readexactly(size)
            await reader.readexactly(2)
        await reader.readexactly(2)
        return status, headers, body
    return status, headers, await reader.read()  # the body ends with the connection


def answer(body: bytes, status: int = 200, headers: list[tuple[bytes, bytes]] | None = None) -> list[Message]:
    length = [(b"content-length", str(len(body)).encode())]
    return [
        {"type": "http.response.start", "status": status, "headers": (headers or []) + length},
        {"type": "http.response.body", "body": body},
    ]


async def read_all(receive: Callable[[], Awaitable[Message]]) -> tuple[bytes, list[Message]]:
    """The whole request body, and the messages it came in."""
    messages = []
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request" or not message["more_body"]:
            return b"".join(m.get("body", b"") for m in messages), messages


class Echo:
    """Answers each request with its body; keeps the scopes and the messages it received."""

    def __init__(self) -> None:
        self.scopes: list[dict[str, Any]] = []
        self.received: list[list[Message]] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                scope["state"]["greeting"] = "hello"
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        self.scopes.append(scope)
        body, messages = await read_all(receive)
        self.received.append(messages)
        for message in answer(body):
            await send(message)


# --------------------------------------------------------------------------- the scope


def test_the_scope_is_the_one_uvicorn_gives() -> None:
    async def body() -> None:
        app = Echo()
        async with serving(app) as (port, _):
            reader, writer = await connect(port)
            writer.write(
                b"POST /a%20b/c?x=1&y=%20 HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Mixed-Case: Value\r\n"
                b"X-Two: 1\r\nx-two: 2\r\nContent-Length: 2\r\n\r\nhi"
            )
            assert (await read_response(reader))[::2] == (200, b"hi")
            local = writer.get_extra_info("sockname")
            writer.close()
        [scope] = app.scopes
        assert scope["type"] == "http" and scope["asgi"]["version"] == "3.0"
        assert scope["http_version"] == "1.1" and scope["method"] == "POST" and scope["scheme"] == "http"
        assert scope["path"] == "/a b/c" and scope["raw_path"] == b"/a%20b/c"
        assert scope["query_string"] == b"x=1&y=%20" and scope["root_path"] == ""
        assert scope["headers"] == [
            (b"host", b"127.0.0.1"),
            (b"x-mixed-case", b"Value"),
            (b"x-two", b"1"),
            (b"x-two", b"2"),
            (b"content-length", b"2"),
        ]
        assert scope["client"] == (local[0], local[1]) and scope["server"] == ("127.0.0.1", port)
        assert scope["state"] == {"greeting": "hello"}

    run(body)


def test_each_request_gets_its_own_copy_of_the_lifespan_state() -> None:
    async def body() -> None:
        app = Echo()
        async with serving(app) as (port, _):
            reader, writer = await connect(port)
            for _ in range(2):
                writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                await read_response(reader)
            writer.close()
        first, second = app.scopes
        assert first["state"] == second["state"] == {"greeting": "hello"} and first["state"] is not second["state"]

    run(body)


# --------------------------------------------------------------------------- request bodies


def test_a_chunked_body_and_a_content_length_body_reach_the_app_whole() -> None:
    async def body() -> None:
        app = Echo()
        async with serving(app) as (port, _):
            reader, writer = await connect(port)
            writer.write(b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
            await writer.drain()
            await wait_until(lambda: bool(app.scopes))
            writer.write(b"6\r\n world\r\n0\r\n\r\n")
            assert (await read_response(reader))[2] == b"hello world"
            writer.write(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nabcde")
            assert (await read_response(reader))[2] == b"abcde"
            writer.close()
        chunked, plain = app.received
        assert chunked[-1] == {"type": "http.request", "body": chunked[-1]["body"], "more_body": False}
        assert all(m["more_body"] for m in chunked[:-1])
        assert plain == [{"type": "http.request", "body": b"abcde", "more_body": False}]

    run(body)


def test_expect_100_continue_is_answered_when_the_app_reads() -> None:
    async def body() -> None:
        async with serving(Echo()) as (port, _):
            reader, writer = await connect(port)
            writer.write(b"POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n")
            assert await reader.readuntil(b"\r\n\r\n") == b"HTTP/1.1 100 Continue\r\n\r\n"
            writer.write(b"data")
            assert (await read_response(reader))[::2] == (200, b"data")
            writer.close()

    run(body)


def test_an_http_1_0_client_gets_no_100_continue() -> None:
    # HTTP/1.0 has no 1xx: such a client takes the 100 for the answer, and the answer for its body.
    async def body() -> None:
        app = Echo()
        async with serving(app) as (port, _):
            reader, writer = await connect(port)
            writer.write(b"POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n")
            await wait_until(lambda: len(app.scopes) == 1)  # (the app waits for the body now)
            await asyncio.sleep(0.05)
            writer.write(b"data")
            raw = await asyncio.wait_for(reader.read(), 5)
            assert raw.startswith(b"HTTP/1.1 200 ") and raw.endswith(b"\r\n\r\ndata"), raw
            writer.close()

    run(body)


def test_reading_pauses_while_the_app_leaves_the_body_unread() -> None:
    size = 4 * 1024 * 1024

    async def body() -> None:
        go = asyncio.Event()
        got: list[bytes] = []

        async def slow_reader(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                return
            await go.wait()
            got.append((await read_all(receive))[0])
            for message in answer(b"ok"):
                await send(message)

        async with serving(slow_reader) as (port, server):
            reader, writer = await connect(port)
            writer.write(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % size)
            writer.write(b"x" * size)
            [conn] = server.connections
            await wait_until(lambda: conn.reading_paused)
            request = conn.reading
            assert request is not None and request.unread < size // 2  # the rest waits in the socket
            go.set()
            assert (await read_response(reader))[::2] == (200, b"ok")
            assert got == [b"x" * size]
            writer.close()

    run(body)


# --------------------------------------------------------------------------- responses


def test_a_response_without_length_is_chunked_and_each_part_is_sent_at_once() -> None:
    async def body() -> None:
        first, release = asyncio.Event(), asyncio.Event()

        async def stream(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                return
            start = {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]}
            await send(start)
            await first.wait()
            await send({"type": "http.response.body", "body": b"data: 1\n\n", "more_body": True})
            await release.wait()
            await send({"type": "http.response.body", "body": b"data: 2\n\n", "more_body": False})

        async with serving(stream) as (port, _):
            reader, writer = await connect(port)
            writer.write(b"GET /sse HTTP/1.1\r\nHost: x\r\n\r\n")
            status, headers, _ = await read_response(reader, head_only=True)  # before any event exists
            assert status == 200 and headers["transfer-encoding"] == "chunked"
            assert "server" not in headers and "date" not in headers
            first.set()
            assert await reader.readuntil(b"data: 1\n\n\r\n") == b"9\r\ndata: 1\n\n\r\n"  # before the second exists
            release.set()
            assert await reader.readuntil(b"0\r\n\r\n") == b"9\r\ndata: 2\n\n\r\n0\r\n\r\n"
            writer.close()

    run(body)


class NotedWrites:
    """A connection's transport that notes each write: on loopback, each is a segment of its own."""

    def __init__(self, transport: asyncio.Transport) -> None:
        self.transport = transport
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))
        self.transport.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.transport, name)


async def noted_connection(server: HttpServer, port: int) -> tuple[asyncio.StreamReader, Any, NotedWrites]:
    """A client connection, and the server's writes to it."""
    reader, writer = await connect(port)
    await wait_until(lambda: bool(server.connections))
    [conn] = server.connections
    noted = conn.transport = NotedWrites(conn.transport)
    return reader, writer, noted


def test_a_streams_head_goes_out_with_the_first_event_when_it_is_ready_in_the_same_turn() -> None:
    # (An MCP stream starts with its priming event and first message: one write, one packet
    # for a proxy in front to read, instead of the head alone and then the event.)
    async def body() -> None:
        release = asyncio.Event()

        async def stream(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                return
            await send(
                {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]}
            )
            await send({"type": "http.response.body", "body": b"data: 1\n\n", "more_body": True})
            await release.wait()
            await send({"type": "http.response.body", "body": b"data: 2\n\n", "more_body": False})

        async with serving(stream) as (port, server):
            reader, writer, noted = await noted_connection(server, port)
            writer.write(b"GET /sse HTTP/1.1\r\nHost: x\r\n\r\n")
            status, headers, _ = await read_response(reader, head_only=True)
            assert status == 200 and headers["transfer-encoding"] == "chunked"
            assert await reader.readuntil(b"data: 1\n\n\r\n") == b"9\r\ndata: 1\n\n\r\n"  # before the second exists
            [first] = noted.writes
            assert first.startswith(b"HTTP/1.1 200 OK\r\n") and first.endswith(b"\r\n\r\n9\r\ndata: 1\n\n\r\n")
            release.set()
            assert await reader.readuntil(b"0\r\n\r\n") == b"9\r\ndata: 2\n\n\r\n0\r\n\r\n"
            assert noted.writes[1:] == [b"9\r\ndata: 2\n\n\r\n0\r\n\r\n"]
            writer.close()

    run(body)


def test_a_stream_failing_before_its_first_event_sends_its_head_then_is_cut(caplog: pytest.LogCaptureFixture) -> None:
    async def body() -> None:
        async def failing(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                await send({"type": "http.response.start", "status": 200, "headers": []})
                raise ValueError("boom")

        async with serving(failing) as (port, _):
            reader, writer = await connect(port)
            writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            raw = await reader.read()  # the connection ends before the body: the client sees it cut
            assert raw.startswith(b"HTTP/1.1 200 ") and raw.endswith(b"transfer-encoding: chunked\r\n\r\n")
            writer.close()

    with caplog.at_level(logging.CRITICAL, "backchannel.http"):
        run(body)


def test_head_gets_the_headers_and_no_body_and_the_connection_goes_on() -> None:
    async def body() -> None:
        async with serving(Echo()) as (port, _):
            reader, writer = await connect(port)
            writer.write(
                b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\nPOST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
            )
            status, headers, _ = await read_response(reader, head_only=True)
            assert status == 200 and headers["content-length"] == "0"
            assert (await read_response(reader))[2] == b"abc"  # the next response follows at once: no body between
            writer.close()

    run(body)


def test_send_waits_while_the_client_does_not_read() -> None:
    part = b"x" * 65536
    parts = 200  # 12.5 MiB: more than the socket buffers hold

    async def body() -> None:
        sent = 0

        async def flood(scope: dict[str, Any], receive: Any, send: Any) -> None:
            nonlocal sent
            if scope["type"] != "http":
                return
            await send({"type": "http.response.start", "status": 200, "headers": []})
            for index in range(parts):
                await send({"type": "http.response.body", "body": part, "more_body": index < parts - 1})
                sent += 1

        async with serving(flood) as (port, server):
            small = socket.socket()
            small.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)  # (else the kernel takes it all in)
            small.connect(("127.0.0.1", port))
            reader, writer = await asyncio.open_connection(sock=small, limit=65536)  # (it stops reading past that)
            writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            await wait_until(lambda: bool(server.connections))
            [conn] = server.connections
            await wait_until(lambda: conn.write_paused is not None)
            await asyncio.sleep(0.2)  # time for a send that does not wait to run on (it must not)
            assert 0 < sent < parts and conn.write_paused is not None
            assert len((await read_response(reader))[2]) == len(part) * parts
            assert sent == parts
            writer.close()

    run(body)


def test_a_response_header_with_a_line_break_is_refused() -> None:
    async def body() -> None:
        async def injected(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                for message in answer(b"no", headers=[(b"x-a", b"1\r\nset-cookie: evil=1")]):
                    await send(message)

        async with serving(injected) as (port, _):
            reader, writer = await connect(port)
            writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            raw = await reader.read()
            assert raw.startswith(b"HTTP/1.1 500 ") and b"evil" not in raw
            writer.close()

    run(body)


# --------------------------------------------------------------------------- disconnects


def test_the_app_hears_the_client_leave_and_its_sends_go_nowhere() -> None:
    async def body() -> None:
        heard: list[str] = []
        done = asyncio.Event()

        async def stream(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                return
            await read_all(receive)
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"first", "more_body": True})
            heard.append((await receive())["type"])  # blocks until the client is gone
            await send({"type": "http.response.body", "body": b"after", "more_body": True})  # no error
            await send({"type": "http.response.body", "body": b""})
            done.set()

        async with serving(stream) as (port, _):
            reader, writer = await connect(port)
            writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            await reader.readuntil(b"first\r\n")
            writer.close()
            await asyncio.wait_for(done.wait(), 5)
        assert heard == ["http.disconnect"]

    run(body)


def test_two_tasks_waiting_on_receive_both_hear_the_client_leave() -> None:
    # (A stream's watcher waits for the disconnect while the app may wait too; one of them
    # being cancelled must not cost the other its wake-up.)
    async def body() -> None:
        heard: list[str] = []
        waiting = asyncio.Event()

        async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                return
            await read_all(receive)
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"open", "more_body": True})

            async def listen() -> None:
                heard.append((await receive())["type"])

            cancelled = asyncio.ensure_future(receive())
            listeners = [asyncio.ensure_future(listen()) for _ in range(2)]
            await asyncio.sleep(0)
            cancelled.cancel()
            waiting.set()
            await asyncio.gather(*listeners)

        async with serving(app) as (port, _):
            reader, writer = await connect(port)
            writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            await reader.readuntil(b"open\r\n")
            await waiting.wait()
            writer.close()
            await wait_until(lambda: len(heard) == 2)
        assert heard == ["http.disconnect", "http.disconnect"]

    run(body)


def test_receive_says_disconnect_once_the_response_is_complete() -> None:
    async def body() -> None:
        after: list[Message] = []

        async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                return
            await read_all(receive)
            for message in answer(b"ok"):
                await send(message)
            after.append(await receive())

        async with serving(app) as (port, _):
            reader, writer = await connect(port)
            writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            await read_response(reader)
            await wait_until(lambda: bool(after))
            writer.close()
        assert after == [{"type": "http.disconnect"}]

    run(body)


# --------------------------------------------------------------------------- connections


def test_pipelined_requests_are_answered_in_order_one_at_a_time() -> None:
    async def body() -> None:
        log: list[str] = []
        first_may_end = asyncio.Event()

        async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                return
            name = scope["path"]
            log.append(f"start {name}")
            await read_all(receive)
            if name == "/1":
                await first_may_end.wait()
            for message in answer(name.encode()):
                await send(message)
            log.append(f"end {name}")

        async with serving(app) as (port, _):
            reader, writer = await connect(port)
            writer.write(b"".join(b"GET /%d HTTP/1.1\r\nHost: x\r\n\r\n" % n for n in (1, 2, 3)))
            await wait_until(lambda: log == ["start /1"])
            await asyncio.sleep(0.1)  # time for a second request to start, were it to (it must not)
            assert log == ["start /1"]
            first_may_end.set()
            assert [(await read_response(reader))[2] for _ in range(3)] == [b"/1", b"/2", b"/3"]
            writer.close()
        assert log == ["start /1", "end /1", "start /2", "end /2", "start /3", "end /3"]

    run(body)


def test_an_app_failing_after_its_answer_leaves_the_next_request_on_the_connection_alone(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A background task (Starlette's) runs after the response is complete, and may fail while
    # the client's next request on the kept-alive connection is being answered.
    async def body() -> None:
        first_may_fail = asyncio.Event()
        second_may_end = asyncio.Event()
        started: list[str] = []

        async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                return
            started.append(scope["path"])
            for message in answer(scope["path"].encode()):
                await send(message)
            if scope["path"] == "/1":
                await first_may_fail.wait()
                raise ValueError("a background task failed")
            await second_may_end.wait()

        async with serving(app) as (port, _):
            reader, writer = await connect(port)
            writer.write(b"GET /1 HTTP/1.1\r\nHost: x\r\n\r\n")
            assert (await read_response(reader))[::2] == (200, b"/1")
            writer.write(b"GET /2 HTTP/1.1\r\nHost: x\r\n\r\n")
            await wait_until(lambda: started == ["/1", "/2"])
            first_may_fail.set()
            await asyncio.sleep(0.1)
            second_may_end.set()
            assert (await read_response(reader))[::2] == (200, b"/2")
            writer.write(b"GET /3 HTTP/1.1\r\nHost: x\r\n\r\n")
            assert (await read_response(reader))[::2] == (200, b"/3")
            writer.close()

    with caplog.at_level(logging.ERROR, "backchannel.http"):
        run(body)
    assert any(record.exc_info and "background" in str(record.exc_info[1]) for record in caplog.records)


def test_a_chunked_bodys_trailer_is_not_added_to_the_request_headers() -> None:
    # A proxy in front checks the headers, not the trailer: one in the scope's headers would
    # pass for a header the proxy let through (or set itself) to an app that looks after the body.
    async def body() -> None:
        app = Echo()
        async with serving(app) as (port, _):
            reader, writer = await connect(port)
            writer.write(
                b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\nX-User: admin\r\n\r\n"
            )
            assert (await read_response(reader))[::2] == (200, b"hi")
            writer.close()
        [scope] = app.scopes
        assert scope["headers"] == [(b"host", b"x"), (b"transfer-encoding", b"chunked")]

    run(body)


def test_a_pipelining_client_that_does_not_read_makes_the_server_stop_reading() -> None:
    # Requests queued behind a slow one are held in memory (a scope each, ~50 times their bytes):
    # the server must stop reading once one waits its turn, not parse all the client sends.
    async def body() -> None:
        first_may_end = asyncio.Event()

        async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                return
            if scope["path"] == "/slow":
                await first_may_end.wait()
            for message in answer(b"ok"):
                await send(message)

        async with serving(app) as (port, server):
            reader, writer = await connect(port)
            padded = b"GET /next HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * 1000 + b"\r\n\r\n"
            writer.write(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n" + padded * 4000)
            [conn] = server.connections
            await wait_until(lambda: len(conn.queue) > 0)
            await asyncio.sleep(0.2)  # time for the server to read on, were it to (it must not)
            queued = len(conn.queue)
            assert queued < 1000, f"{queued} requests queued behind the first"
            first_may_end.set()
            for _ in range(4001):
                assert (await read_response(reader))[::2] == (200, b"ok")
            writer.close()

    run(body)


def test_a_response_shorter_than_its_content_length_closes_the_connection() -> None:
    # Kept alive, the next response would be read as the rest of this one's body.
    async def body() -> None:
        async def short(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                return
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"10")]})
            await send({"type": "http.response.body", "body": b"12345"})

        async with serving(short, keep_alive=0.5) as (port, _):
            reader, writer = await connect(port)
            writer.write(b"GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n")
            raw = await asyncio.wait_for(reader.read(), 5)
            assert raw.startswith(b"HTTP/1.1 200 ") and raw.endswith(b"\r\n\r\n12345"), raw
            assert raw.count(b"HTTP/1.1 ") == 1, raw  # (the second request is not answered on it)
            writer.close()

    run(body)


def test_an_upgrade_request_is_answered_as_a_plain_one_and_the_connection_closes() -> None:
    # The parser reads nothing after a request asking for an upgrade: kept alive, the
    # connection would take the client's next requests and never answer them.
    async def body() -> None:
        async with serving(Echo(), keep_alive=0.5) as (port, _):
            reader, writer = await connect(port)
            writer.write(
                b"GET /1 HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"
                b"GET /2 HTTP/1.1\r\nHost: x\r\n\r\n"
            )
            status, headers, _ = await read_response(reader)
            assert status == 200 and headers.get("connection") == "close"
            assert await asyncio.wait_for(reader.read(), 5) == b""
            writer.close()

    run(body)


def test_connection_close_and_http_1_0_end_the_connection_after_the_answer() -> None:
    async def body() -> None:
        async with serving(Echo()) as (port, _):
            reader, writer = await connect(port)
            writer.write(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            status, headers, _ = await read_response(reader)
            assert status == 200 and headers["connection"] == "close"
            assert await reader.read() == b""
            writer.close()

            reader, writer = await connect(port)
            writer.write(b"GET / HTTP/1.0\r\n\r\n")
            raw = await reader.read()  # all of it: the server closes
            assert raw.startswith(b"HTTP/1.1 200 ") and b"connection: close" in raw.lower()
            writer.close()

    run(body)


def test_http_1_0_gets_a_streamed_body_unchunked_ended_by_the_close() -> None:
    async def body() -> None:
        async def stream(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                await send({"type": "http.response.start", "status": 200, "headers": []})
                await send({"type": "http.response.body", "body": b"one ", "more_body": True})
                await send({"type": "http.response.body", "body": b"two"})

        async with serving(stream) as (port, _):
            reader, writer = await connect(port)
            writer.write(b"GET / HTTP/1.0\r\n\r\n")
            status, headers, content = await read_response(reader)
            assert (status, content) == (200, b"one two") and "transfer-encoding" not in headers
            writer.close()

    run(body)


def test_an_idle_kept_alive_connection_is_closed_after_keep_alive() -> None:
    async def body() -> None:
        async with serving(Echo(), keep_alive=0.2) as (port, server):
            reader, writer = await connect(port)
            writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            assert (await read_response(reader))[0] == 200
            assert await asyncio.wait_for(reader.read(), 5) == b""
            await wait_until(lambda: not server.connections)
            writer.close()

    run(body)


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (b"GARBAGE\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: x\r\nbad header\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * h1.MAX_HEAD_BYTES + b"\r\n\r\n", 431),
    ],
)
def test_malformed_or_oversized_requests_are_refused_and_the_connection_closes(
    request_bytes: bytes, status: int
) -> None:
    async def body() -> None:
        app = Echo()
        async with serving(app) as (port, _):
            reader, writer = await connect(port)
            writer.write(request_bytes)
            raw = await reader.read()
            assert raw.startswith(b"HTTP/1.1 %d " % status), raw[:100]
            assert b"connection: close" in raw and b'"jsonrpc":"2.0"' in raw.replace(b" ", b"")
            writer.close()
        assert app.scopes == []

    run(body)


def test_an_app_that_fails_before_answering_gets_a_500_and_after_a_cut(caplog: pytest.LogCaptureFixture) -> None:
    async def body() -> None:
        async def failing(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                return
            if scope["path"] == "/late":
                await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"10")]})
                await send({"type": "http.response.body", "body": b"12345", "more_body": True})
            raise ValueError("boom")

        async with serving(failing) as (port, _):
            reader, writer = await connect(port)
            writer.write(b"GET /early HTTP/1.1\r\nHost: x\r\n\r\n")
            raw = await reader.read()
            assert raw.startswith(b"HTTP/1.1 500 ") and b"connection: close" in raw
            writer.close()
            reader, writer = await connect(port)
            writer.write(b"GET /late HTTP/1.1\r\nHost: x\r\n\r\n")
            raw = await reader.read()  # the connection ends mid-body: the client sees it cut
            assert raw.startswith(b"HTTP/1.1 200 ") and raw.endswith(b"\r\n\r\n12345")
            writer.close()

    with caplog.at_level(logging.ERROR, "backchannel.http"):
        run(body)
    failures = [record for record in caplog.records if record.exc_info and "boom" in str(record.exc_info[1])]
    assert len(failures) == 2


# --------------------------------------------------------------------------- lifespan and stop


def test_a_failed_startup_returns_3_with_the_reason_and_never_listens(capsys: pytest.CaptureFixture[str]) -> None:
    async def failing(scope: dict[str, Any], receive: Any, send: Any) -> None:
        assert scope["type"] == "lifespan"
        await receive()
        await send({"type": "lifespan.startup.failed", "message": "no database"})

    async def body() -> None:
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        probe.close()
        assert await HttpServer(failing).serve("127.0.0.1", port, signals=False) == 3
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=1).close()

    run(body)
    assert "no database" in capsys.readouterr().err


def test_a_port_in_use_returns_3_naming_the_address(capsys: pytest.CaptureFixture[str]) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        assert run(lambda: HttpServer(Echo()).serve("127.0.0.1", port, signals=False)) == 3
    finally:
        taken.close()
    assert f"127.0.0.1:{port}" in capsys.readouterr().err


def test_a_stop_lets_the_request_under_way_finish_then_ends_the_sessions() -> None:
    async def body() -> None:
        app = make_server().http_app(body_timeout=None, max_requests=None)
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        server = HttpServer(app, grace=30)
        task = asyncio.get_running_loop().create_task(server.serve(sock=sock, signals=False))
        await wait_until(lambda: server.started)
        reader, writer = await connect(port)
        init = json.dumps(initialize_body()).encode()
        head = "".join(f"{k}: {v}\r\n" for k, v in legacy_headers().items())
        writer.write(
            f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n{head}content-length: {len(init)}\r\n\r\n".encode() + init
        )
        status, headers, _ = await read_response(reader)
        assert status == 200 and len(app.sessions.sessions) == 1
        session = headers["mcp-session-id"]
        slow = json.dumps(call("slow", {"steps": 3, "delay": 0.2}, request_id=2)).encode()
        head = "".join(f"{k}: {v}\r\n" for k, v in legacy_headers(session).items())
        writer.write(
            f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n{head}content-length: {len(slow)}\r\n\r\n".encode() + slow
        )
        await reader.readuntil(b"\r\n\r\n")  # its stream has begun
        server.stop()
        rest = await reader.read()  # the answer comes whole, then the connection closes
        assert b"slow done 3" in rest and rest.endswith(b"0\r\n\r\n")
        assert await asyncio.wait_for(task, 10) == 0
        assert not app.sessions.sessions  # the lifespan's shutdown ran
        with pytest.raises(OSError):
            await connect(port)
        writer.close()
        sock.close()

    run(body, timeout=20)


def test_a_cancelled_serve_stops_listening_and_closes_its_connections() -> None:
    # (the loopback listener cancels its server when a stop takes too long; so may whoever awaits serve)
    async def body() -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        server = HttpServer(Echo())
        task = asyncio.get_running_loop().create_task(server.serve(sock=sock, signals=False))
        await wait_until(lambda: server.started)
        reader, writer = await connect(port)
        writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert (await read_response(reader))[0] == 200
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        assert await asyncio.wait_for(reader.read(), 5) == b""
        writer.close()
        with pytest.raises(ConnectionRefusedError):
            await connect(port)
        sock.close()

    run(body)


def test_a_second_stop_ends_at_once_cancelling_the_app_and_skipping_the_shutdown() -> None:
    async def body() -> None:
        cancelled = asyncio.Event()
        phases: list[str] = []

        async def stuck(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] == "lifespan":
                while (message := await receive())["type"] != "lifespan.shutdown":
                    await send({"type": "lifespan.startup.complete"})
                phases.append(message["type"])
                await send({"type": "lifespan.shutdown.complete"})
                return
            try:
                await asyncio.Event().wait()  # an answer that never comes, even with the client gone
            finally:
                cancelled.set()

        async with serving(stuck, grace=3600) as (port, server):
            reader, writer = await connect(port)
            writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            await wait_until(lambda: bool(server.shared.tasks))
            server.stop()
            await asyncio.sleep(0.1)  # the graceful stop is waiting now (an hour, were it left to)
            server.stop()
            await asyncio.wait_for(cancelled.wait(), 5)
            assert await reader.read() == b""
            writer.close()
        assert phases == []

    run(body)
