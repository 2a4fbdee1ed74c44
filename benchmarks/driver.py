"""An SDK-free driver for the bench contract (shared/bench/CONTRACT.md v1).

It speaks raw JSON-RPC: newline-delimited over a child's stdin/stdout, and Streamable HTTP
over its own small HTTP/1.1 client on asyncio sockets (keep-alive connections, JSON and SSE
bodies, chunked or sized), so no client library's speed or behaviour enters the numbers.
Every answer is checked: echo text, progress count/order/total and that it all came before
the response, completion values/total/hasMore against the word list, the elicitation's form,
and that a cancelled request is never answered. Every loop is bounded in count and in time.

    python benchmarks/driver.py [--quick] stdio -- python benchmarks/contract_server.py stdio
    python benchmarks/driver.py [--quick] http -- python benchmarks/contract_server.py http

(``benchmarks/run.py`` drives every contract server through ``run_suite``.) Besides each
rate it records the CPU time the server and the driver itself spent per operation, which
shows when a number is the driver's ceiling rather than the server's.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import contextlib
import gc
import itertools
import math
import os
import random
import signal
import socket
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

PROTOCOL = "2025-11-25"
STATELESS = "2026-07-28"
"""The stateless era's version: the HTTP echo rows measured without a session (``StatelessHttpPeer``)."""
STATELESS_META = {
    "io.modelcontextprotocol/protocolVersion": STATELESS,
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
}
CLIENT_CAPABILITIES = {"elicitation": {"form": {}}, "roots": {"listChanged": True}}
CLIENT_INFO = {"name": "bench-driver", "version": "1.0.0"}
REQUIRED_CAPABILITIES = ("tools", "prompts", "completions", "logging")
WORDS = ["".join("abcdefghij"[int(c)] for c in f"{i:04d}") for i in range(10000)]
ELICIT_ANSWER = {"action": "accept", "content": {"name": "bench"}}
ROOTS_ANSWER = {"roots": [{"uri": "file:///tmp/bench", "name": "bench"}]}
HOST = "127.0.0.1"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


ANSWERED_CANCELLED = "answered-cancelled"
"""Tag of the violation "a cancelled request was answered" (a known behaviour of some SDKs)."""


class ContractError(Exception):
    """The server answered something the contract does not allow (or did not answer)."""


class NoResponse(ContractError):
    """An HTTP response stream ended without the JSON-RPC response."""


@dataclass(frozen=True, slots=True)
class Plan:
    """How much of each measurement to do; every loop stops at its count or its time."""

    warmup: int
    echo_calls: int
    echo_seconds: float
    par_calls: int
    par_seconds: float
    in_flight: int
    ask_calls: int
    ask_seconds: float
    completions: int
    completion_seconds: float
    progress_steps: int
    progress_seconds: float
    cancels: int
    cancel_grace: float
    sessions: int
    sessions_seconds: float
    extra_cold_starts: int


QUICK = Plan(
    warmup=5,
    echo_calls=20,
    echo_seconds=2.0,
    par_calls=200,
    par_seconds=2.0,
    in_flight=32,
    ask_calls=3,
    ask_seconds=5.0,
    completions=60,
    completion_seconds=5.0,
    progress_steps=200,
    progress_seconds=10.0,
    cancels=1,
    cancel_grace=0.2,
    sessions=5,
    sessions_seconds=10.0,
    extra_cold_starts=0,
)

FULL = Plan(
    warmup=200,
    echo_calls=40000,
    echo_seconds=2.0,
    par_calls=200000,
    par_seconds=2.5,
    in_flight=32,
    ask_calls=20000,
    ask_seconds=2.0,
    completions=2000,
    completion_seconds=20.0,
    progress_steps=10000,
    progress_seconds=40.0,
    cancels=7,
    cancel_grace=0.3,
    sessions=1000,
    sessions_seconds=60.0,
    extra_cold_starts=2,
)


# --------------------------------------------------------------------------- checks


def expected_completion(prefix: str) -> tuple[list[str], int]:
    start = bisect.bisect_left(WORDS, prefix)
    end = bisect.bisect_left(WORDS, prefix + "\uffff", lo=start)
    return WORDS[start : start + min(100, end - start)], end - start


def text_of(result: dict[str, Any], what: str) -> str:
    content = result.get("content")
    if not isinstance(content, list) or len(content) != 1:
        raise ContractError(f"{what}: expected one content item, got {content!r:.200}")
    item = content[0]
    if not isinstance(item, dict) or item.get("type") != "text" or not isinstance(item.get("text"), str):
        raise ContractError(f"{what}: expected a text item, got {item!r:.200}")
    if result.get("isError"):
        raise ContractError(f"{what}: isError result {item.get('text')!r:.200}")
    return item["text"]


def expect_text(result: dict[str, Any], expected: str, what: str) -> None:
    got = text_of(result, what)
    if got != expected:
        raise ContractError(f"{what}: expected text {expected!r}, got {got!r:.200}")


def check_elicitation(params: Any) -> None:
    if not isinstance(params, dict):
        raise ContractError(f"elicitation/create: params {params!r:.200}")
    if params.get("mode", "form") != "form":
        raise ContractError(f"elicitation/create: mode {params.get('mode')!r}")
    schema = params.get("requestedSchema")
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise ContractError(f"elicitation/create: requestedSchema {schema!r:.200}")
    properties = schema.get("properties")
    if not isinstance(properties, dict) or set(properties) != {"name"} or properties["name"].get("type") != "string":
        raise ContractError(f"elicitation/create: properties {properties!r:.200}")
    if schema.get("required") != ["name"]:
        raise ContractError(f"elicitation/create: required {schema.get('required')!r}")


class ProgressLog:
    """The progress notifications of one request: must be 1..steps, total=steps, before the answer."""

    __slots__ = ("answered", "problems", "seen", "steps")

    def __init__(self, steps: int) -> None:
        self.steps = steps
        self.seen = 0
        self.answered = False
        self.problems: list[str] = []

    def add(self, params: dict[str, Any]) -> None:
        self.seen += 1
        if self.answered:
            self.problems.append(f"progress {params.get('progress')!r} after the response")
        elif (params.get("progress") != self.seen or params.get("total") != self.steps) and len(self.problems) < 3:
            self.problems.append(f"progress #{self.seen}: {params!r:.120}")

    def check(self) -> None:
        if self.seen != self.steps:
            self.problems.append(f"{self.seen} progress notifications for {self.steps} steps")
        if self.problems:
            raise ContractError("progress: " + "; ".join(self.problems[:4]))


def answer_to(message: dict[str, Any], peer: Peer) -> dict[str, Any]:
    """The driver's answer to a request from the server."""
    method = message.get("method")
    if method == "elicitation/create":
        peer.elicitations += 1
        try:
            check_elicitation(message.get("params"))
        except ContractError as exc:
            peer.violations.append(str(exc))
        return {"jsonrpc": "2.0", "id": message["id"], "result": ELICIT_ANSWER}
    if method == "roots/list":
        return {"jsonrpc": "2.0", "id": message["id"], "result": ROOTS_ANSWER}
    if method == "ping":
        return {"jsonrpc": "2.0", "id": message["id"], "result": {}}
    error = {"code": -32601, "message": f"driver does not answer {method}"}
    return {"jsonrpc": "2.0", "id": message["id"], "error": error}


# --------------------------------------------------------------------------- peers


class Peer:
    """What the measurements need from a connection to a contract server."""

    pid: int
    violations: list[str]
    elicitations: int
    cancelled: set[int | str]
    ids: Iterator[int]
    progress: dict[Any, ProgressLog]

    def new_id(self) -> int:
        return next(self.ids)

    async def request(
        self, method: str, params: dict[str, Any] | None = None, *, rid: int | None = None
    ) -> dict[str, Any]:
        """Send a request and return its whole response message."""
        raise NotImplementedError

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        raise NotImplementedError

    def track_progress(self, token: str, log: ProgressLog) -> None:
        self.progress[token] = log

    async def result(self, method: str, params: dict[str, Any] | None = None, *, rid: int | None = None) -> Any:
        message = await self.request(method, params, rid=rid)
        if "error" in message or "result" not in message:
            raise ContractError(f"{method}: {message.get('error', message)!r:.300}")
        return message["result"]

    async def call(self, tool: str, arguments: dict[str, Any], meta: dict[str, Any] | None = None) -> Any:
        params: dict[str, Any] = {"name": tool, "arguments": arguments}
        if meta:
            params["_meta"] = meta
        return await self.result("tools/call", params)


class StdioPeer(asyncio.SubprocessProtocol, Peer):
    """A contract server as a child process: newline-delimited JSON-RPC on its stdin/stdout."""

    def __init__(self) -> None:
        self.ids = itertools.count(1)
        self.pending: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self.progress = {}
        self.by_request: dict[Any, ProgressLog] = {}
        self.cancelled = set()
        self.violations = []
        self.elicitations = 0
        self.buffer = b""
        self.exited = asyncio.get_running_loop().create_future()
        self.transport: asyncio.SubprocessTransport | None = None
        self.stdin: asyncio.WriteTransport | None = None

    @classmethod
    async def spawn(cls, cmd: Sequence[str], env: dict[str, str], log: Any) -> StdioPeer:
        loop = asyncio.get_running_loop()
        transport, peer = await loop.subprocess_exec(
            cls, *cmd, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=log, env=env
        )
        peer.pid = transport.get_pid()
        return peer

    # asyncio.SubprocessProtocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.SubprocessTransport)
        self.transport = transport
        stdin = transport.get_pipe_transport(0)
        assert isinstance(stdin, asyncio.WriteTransport)
        self.stdin = stdin

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd != 1:
            return
        if b"\n" not in data:
            self.buffer += data
            return
        lines = (self.buffer + data).split(b"\n")
        self.buffer = lines.pop()
        for line in lines:
            if line.strip():
                try:
                    message = orjson.loads(line)
                except orjson.JSONDecodeError:
                    self.violations.append(f"stdout line is not JSON: {line[:120]!r}")
                    continue
                self.on_message(message)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1:
            self._fail_pending("the server closed its stdout")

    def process_exited(self) -> None:
        self._fail_pending("the server exited")
        if not self.exited.done():
            self.exited.set_result(None)

    def _fail_pending(self, why: str) -> None:
        pending, self.pending = self.pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(ContractError(why))

    def on_message(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is None:
            rid = message.get("id")
            future = self.pending.pop(rid, None)
            log = self.by_request.pop(rid, None)
            if log is not None:
                log.answered = True
            if future is not None:
                if not future.done():
                    future.set_result(message)
            elif rid in self.cancelled:
                self.violations.append(
                    f"{ANSWERED_CANCELLED}: request {rid!r} answered after its cancellation: {message!r:.200}"
                )
            else:
                self.violations.append(f"response to no pending request: {message!r:.200}")
        elif "id" in message:
            self._write(answer_to(message, self))
        elif method == "notifications/progress":
            params = message.get("params") or {}
            progress = self.progress.get(params.get("progressToken"))
            if progress is None:
                self.violations.append(f"progress for an unknown token: {params!r:.200}")
            else:
                progress.add(params)

    def _write(self, message: dict[str, Any]) -> None:
        assert self.stdin is not None
        self.stdin.write(orjson.dumps(message) + b"\n")

    async def request(
        self, method: str, params: dict[str, Any] | None = None, *, rid: int | None = None
    ) -> dict[str, Any]:
        if rid is None:
            rid = next(self.ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[rid] = future
        if params is not None:
            meta = params.get("_meta")
            if meta and "progressToken" in meta:
                log = self.progress.get(meta["progressToken"])
                if log is not None:
                    self.by_request[rid] = log
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        assert self.stdin is not None
        self.stdin.write(orjson.dumps(message) + b"\n")
        return await future

    def forget(self, rid: int) -> None:
        """Stop waiting for ``rid`` (cancelled): an answer that still comes is a violation."""
        self.pending.pop(rid, None)
        self.cancelled.add(rid)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._write(message)

    async def close_stdin_and_wait(self, timeout: float) -> float | None:
        """Close stdin; seconds until the process exited, or None if it had to be killed."""
        assert self.stdin is not None and self.transport is not None
        started = time.perf_counter()
        self.stdin.close()
        try:
            await asyncio.wait_for(asyncio.shield(self.exited), timeout)
            return time.perf_counter() - started
        except TimeoutError:
            self.kill()
            return None

    def kill(self) -> None:
        if self.transport is not None and not self.exited.done():
            with contextlib.suppress(ProcessLookupError):
                self.transport.kill()


# --------------------------------------------------------------------------- HTTP


class HttpConnection:
    """One keep-alive HTTP/1.1 connection."""

    __slots__ = ("reader", "reused", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.reused = False

    @classmethod
    async def open(cls, port: int) -> HttpConnection:
        reader, writer = await asyncio.open_connection(HOST, port, limit=16 * 1024 * 1024)
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return cls(reader, writer)

    def close(self) -> None:
        self.writer.close()


class HttpPool:
    """Keep-alive connections to one server; a POST takes one for its whole response."""

    def __init__(self, port: int, path: str = "/mcp") -> None:
        self.port = port
        self.path = path
        self.idle: list[HttpConnection] = []
        self.open_count = 0
        self.prefix = f"POST {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\n".encode()

    async def post(
        self, extra_headers: bytes, body: bytes, on_message: Callable[[dict[str, Any]], None], timeout: float = 120.0
    ) -> tuple[int, dict[str, str]]:
        """POST ``body``; each JSON-RPC message of the answer (JSON or SSE) goes to ``on_message``."""
        head = (
            self.prefix
            + b"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            + extra_headers
            + b"Content-Length: "
            + str(len(body)).encode()
            + b"\r\n\r\n"
        )
        for attempt in (1, 2):
            conn = await self._acquire()
            try:
                conn.writer.write(head + body)
                try:
                    status, headers = await _read_head(conn.reader)
                except (asyncio.IncompleteReadError, ConnectionError):
                    conn.close()
                    if conn.reused and attempt == 1:
                        continue  # the server closed an idle keep-alive connection: once more, fresh
                    raise
                async with asyncio.timeout(timeout):
                    keep = await _read_body(conn.reader, headers, on_message)
            except BaseException:
                conn.close()
                raise
            if keep and headers.get("connection", "").lower() != "close":
                conn.reused = True
                self.idle.append(conn)
            else:
                conn.close()
            return status, headers
        raise AssertionError("unreachable")

    async def _acquire(self) -> HttpConnection:
        while self.idle:
            conn = self.idle.pop()
            if not conn.reader.at_eof():
                return conn
            conn.close()
        self.open_count += 1
        return await HttpConnection.open(self.port)

    def close(self) -> None:
        for conn in self.idle:
            conn.close()
        self.idle.clear()


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    raw = await reader.readuntil(b"\r\n\r\n")
    lines = raw.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    return status, headers


async def _read_body(
    reader: asyncio.StreamReader, headers: dict[str, str], on_message: Callable[[dict[str, Any]], None]
) -> bool:
    """Read the body, handing each JSON-RPC message over; True when the connection can be reused."""
    ctype = headers.get("content-type", "")
    sse = ctype.startswith("text/event-stream")
    parser = SseParser(on_message) if sse else None
    chunks: list[bytes] = []
    if headers.get("transfer-encoding", "").lower() == "chunked":
        while True:
            size_line = await reader.readuntil(b"\r\n")
            size = int(size_line.split(b";", 1)[0], 16)
            if size == 0:
                while (await reader.readuntil(b"\r\n")) != b"\r\n":
                    pass  # trailers
                break
            data = await reader.readexactly(size + 2)
            if parser is not None:
                parser.feed(data[:-2])
            else:
                chunks.append(data[:-2])
        keep = True
    elif "content-length" in headers:
        data = await reader.readexactly(int(headers["content-length"]))
        if parser is not None:
            parser.feed(data)
        else:
            chunks.append(data)
        keep = True
    else:  # until the server closes
        while data := await reader.read(65536):
            if parser is not None:
                parser.feed(data)
            else:
                chunks.append(data)
        keep = False
    body = b"".join(chunks)
    if parser is not None:
        parser.end()
    elif body.strip() and ctype.startswith("application/json"):
        decoded = orjson.loads(body)
        for message in decoded if isinstance(decoded, list) else [decoded]:
            on_message(message)
    return keep


class SseParser:
    """Server-sent events, fed in arbitrary pieces; each event's data is a JSON-RPC message."""

    __slots__ = ("buffer", "on_message")

    def __init__(self, on_message: Callable[[dict[str, Any]], None]) -> None:
        self.on_message = on_message
        self.buffer = b""

    def feed(self, data: bytes) -> None:
        buffer = (self.buffer + data).replace(b"\r\n", b"\n")
        if buffer.endswith(b"\r"):
            buffer, self.buffer = buffer[:-1], b"\r"
        else:
            self.buffer = b""
        *events, rest = buffer.split(b"\n\n")
        self.buffer = rest + self.buffer
        for event in events:
            self._event(event)

    def end(self) -> None:
        if self.buffer.strip():
            self._event(self.buffer)
        self.buffer = b""

    def _event(self, event: bytes) -> None:
        data: list[bytes] = []
        for line in event.replace(b"\r", b"\n").split(b"\n"):
            if line.startswith(b"data:"):
                value = line[5:]
                data.append(value[1:] if value.startswith(b" ") else value)
        if data and any(data):
            self.on_message(orjson.loads(b"\n".join(data)))


class HttpPeer(Peer):
    """One Streamable HTTP session (``Mcp-Session-Id``) over a shared ``HttpPool``."""

    def __init__(self, pool: HttpPool, pid: int) -> None:
        self.pool = pool
        self.pid = pid
        self.ids = itertools.count(1)
        self.session_headers = b""
        self.progress = {}
        self.cancelled = set()
        self.violations = []
        self.elicitations = 0
        self.answering: set[asyncio.Task[None]] = set()

    async def request(
        self, method: str, params: dict[str, Any] | None = None, *, rid: int | None = None
    ) -> dict[str, Any]:
        if rid is None:
            rid = next(self.ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        log: ProgressLog | None = None
        if params is not None and (meta := params.get("_meta")) and "progressToken" in meta:
            log = self.progress.get(meta["progressToken"])
        response: dict[str, Any] | None = None

        def on_message(incoming: dict[str, Any]) -> None:
            nonlocal response
            kind = incoming.get("method")
            if kind is None:
                if incoming.get("id") != rid or response is not None:
                    self.violations.append(f"unexpected response on the stream of {rid}: {incoming!r:.200}")
                    return
                response = incoming
                if log is not None:
                    log.answered = True
            elif "id" in incoming:
                task = asyncio.create_task(self._answer(incoming))
                self.answering.add(task)
                task.add_done_callback(self.answering.discard)
            elif kind == "notifications/progress":
                progress_params = incoming.get("params") or {}
                progress = self.progress.get(progress_params.get("progressToken"))
                if progress is None:
                    self.violations.append(f"progress for an unknown token: {progress_params!r:.200}")
                else:
                    progress.add(progress_params)

        headers = self.session_headers if method != "initialize" else b""
        status, response_headers = await self.pool.post(headers, orjson.dumps(message), on_message)
        if method == "initialize" and status == 200:
            session_id = response_headers.get("mcp-session-id")
            if not session_id:
                raise ContractError("initialize: no Mcp-Session-Id header")
            self.session_headers = f"Mcp-Session-Id: {session_id}\r\nMCP-Protocol-Version: {PROTOCOL}\r\n".encode()
        if status != 200:
            raise ContractError(f"{method}: HTTP {status}")
        if response is None:
            raise NoResponse(f"{method}: the response stream ended without a response")
        return response

    async def _post_without_answer(self, message: dict[str, Any]) -> None:
        def unexpected(incoming: dict[str, Any]) -> None:
            self.violations.append(f"a message in the answer to a notification/response: {incoming!r:.200}")

        status, _ = await self.pool.post(self.session_headers, orjson.dumps(message), unexpected)
        if status != 202:
            raise ContractError(f"POST of {message.get('method', 'a response')}: HTTP {status}, not 202")

    async def _answer(self, message: dict[str, Any]) -> None:
        try:
            await self._post_without_answer(answer_to(message, self))
        except ContractError as exc:
            self.violations.append(str(exc))

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._post_without_answer(message)


class StatelessHttpPeer(Peer):
    """Stateless-era requests (2026-07-28) over a shared ``HttpPool``: no session; each POST carries its
    version in ``_meta`` and the headers SEP-2243 mirrors (``MCP-Protocol-Version``, ``Mcp-Method``,
    ``Mcp-Name``). Serves the echo rows only: a server's questions (``inputRequests``) are not answered."""

    def __init__(self, pool: HttpPool, pid: int) -> None:
        self.pool = pool
        self.pid = pid
        self.ids = itertools.count(1)
        self.progress = {}
        self.cancelled = set()
        self.violations = []
        self.elicitations = 0
        self.version_header = f"MCP-Protocol-Version: {STATELESS}\r\n".encode()

    async def request(
        self, method: str, params: dict[str, Any] | None = None, *, rid: int | None = None
    ) -> dict[str, Any]:
        if rid is None:
            rid = next(self.ids)
        params = {**(params or {})}
        params["_meta"] = {**params.get("_meta", {}), **STATELESS_META}
        headers = self.version_header + f"Mcp-Method: {method}\r\n".encode()
        if method in ("tools/call", "prompts/get"):
            headers += f"Mcp-Name: {params['name']}\r\n".encode()
        got: list[dict[str, Any]] = []
        message = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
        status, _ = await self.pool.post(headers, orjson.dumps(message), got.append)
        if status != 200:
            raise ContractError(f"{method} (stateless era): HTTP {status}, {got!r:.200}")
        answers = [incoming for incoming in got if "method" not in incoming]
        if len(answers) != 1 or answers[0].get("id") != rid:
            raise NoResponse(f"{method} (stateless era): expected the one response to {rid}, got {got!r:.200}")
        return answers[0]

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        raise ContractError("the stateless-era peer sends no notifications")


# --------------------------------------------------------------------------- measurements


@dataclass
class Meter:
    """Wall time and the CPU time of the driver and of the server process across one measurement."""

    pid: int
    wall: float = 0.0
    driver_cpu: float = 0.0
    server_cpu: float = 0.0

    def __enter__(self) -> Meter:
        gc.collect()
        gc.disable()
        self._server = process_cpu(self.pid)
        self._driver = time.process_time()
        self._wall = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self._wall
        self.driver_cpu = time.process_time() - self._driver
        self.server_cpu = process_cpu(self.pid) - self._server
        gc.enable()

    def record(self, metrics: dict[str, float], name: str, count: int) -> None:
        if count:
            metrics[f"{name}_per_s"] = count / self.wall
            metrics[f"{name}_server_cpu_us"] = self.server_cpu / count * 1e6
            metrics[f"{name}_driver_cpu_us"] = self.driver_cpu / count * 1e6


def process_cpu(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (all its threads)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def rss_kb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return float(line.split()[1])
    except OSError:
        pass
    return math.nan


async def handshake(peer: Peer) -> dict[str, Any]:
    params = {"protocolVersion": PROTOCOL, "capabilities": CLIENT_CAPABILITIES, "clientInfo": CLIENT_INFO}
    result = await peer.result("initialize", params)
    if result.get("protocolVersion") != PROTOCOL:
        raise ContractError(f"initialize: protocolVersion {result.get('protocolVersion')!r}")
    capabilities = result.get("capabilities") or {}
    missing = [name for name in REQUIRED_CAPABILITIES if name not in capabilities]
    if missing:
        raise ContractError(f"initialize: capabilities lack {missing} (got {sorted(capabilities)})")
    await peer.notify("notifications/initialized")
    return dict(result)


async def basics(peer: Peer) -> None:
    """logging/setLevel, prompts/get, ping: answered as the contract says."""
    if await peer.result("logging/setLevel", {"level": "warning"}) != {}:
        raise ContractError("logging/setLevel: result is not {}")
    prompt = await peer.result("prompts/get", {"name": "greet", "arguments": {"word": "abcd"}})
    if not isinstance(prompt.get("messages"), list) or not prompt["messages"]:
        raise ContractError(f"prompts/get greet: {prompt!r:.200}")
    await peer.result("ping")


async def echo_one(peer: Peer, text: str) -> None:
    expect_text(await peer.call("echo", {"text": text}), text, "echo")


async def echo_sequential(peer: Peer, plan: Plan, metrics: dict[str, float], name: str) -> None:
    for i in range(plan.warmup):
        await echo_one(peer, f"warm {i}")
    count = 0
    with Meter(peer.pid) as meter:
        deadline = time.perf_counter() + plan.echo_seconds
        while count < plan.echo_calls and time.perf_counter() < deadline:
            await echo_one(peer, f"bench {count}")
            count += 1
    meter.record(metrics, name, count)


async def echo_parallel(peer: Peer, plan: Plan, metrics: dict[str, float], name: str) -> None:
    counter = itertools.count()

    async def worker(limit: int, deadline: float, label: str) -> int:
        done = 0
        while time.perf_counter() < deadline:
            i = next(counter)
            if i >= limit:
                break
            await echo_one(peer, f"{label} {i}")
            done += 1
        return done

    warm_deadline = time.perf_counter() + max(1.0, plan.par_seconds)
    await asyncio.gather(*(worker(plan.warmup * 2, warm_deadline, "warm") for _ in range(plan.in_flight)))
    counter = itertools.count()
    with Meter(peer.pid) as meter:
        deadline = time.perf_counter() + plan.par_seconds
        done = await asyncio.gather(*(worker(plan.par_calls, deadline, "par") for _ in range(plan.in_flight)))
    meter.record(metrics, name, sum(done))


async def ask(peer: Peer, plan: Plan, metrics: dict[str, float], name: str) -> None:
    async def one() -> None:
        before = peer.elicitations
        expect_text(await peer.call("ask", {}), "hello bench", "ask")
        if peer.elicitations != before + 1:
            raise ContractError(f"ask: {peer.elicitations - before} elicitation requests for one call")

    for _ in range(min(plan.warmup, 20)):
        await one()
    count = 0
    with Meter(peer.pid) as meter:
        deadline = time.perf_counter() + plan.ask_seconds
        while count < plan.ask_calls and time.perf_counter() < deadline:
            await one()
            count += 1
    meter.record(metrics, name, count)


async def completion(peer: Peer, plan: Plan, metrics: dict[str, float], name: str, seed: int) -> None:
    rng = random.Random(seed)
    prefixes = ["".join(rng.choice("abcdefghij") for _ in range(rng.randint(1, 3))) for _ in range(plan.completions)]
    ref = {"type": "ref/prompt", "name": "greet"}

    async def one(prefix: str) -> float:
        started = time.perf_counter()
        result = await peer.result("completion/complete", {"ref": ref, "argument": {"name": "word", "value": prefix}})
        elapsed = time.perf_counter() - started
        got = result.get("completion") or {}
        values, total = expected_completion(prefix)
        if got.get("values") != values or got.get("total") != total or got.get("hasMore") != (total > len(values)):
            summary = {k: (v[:3] if k == "values" else v) for k, v in got.items()}
            raise ContractError(f"completion {prefix!r}: got {summary!r:.200}, expected total {total}")
        return elapsed

    for prefix in prefixes[: plan.warmup]:
        await one(prefix)
    latencies: list[float] = []
    with Meter(peer.pid) as meter:
        deadline = time.perf_counter() + plan.completion_seconds
        for prefix in prefixes:
            if time.perf_counter() >= deadline:
                break
            latencies.append(await one(prefix))
    if latencies:
        latencies.sort()
        metrics[f"{name}_p50_ms"] = percentile(latencies, 0.50) * 1e3
        metrics[f"{name}_p99_ms"] = percentile(latencies, 0.99) * 1e3
        metrics[f"{name}_count"] = len(latencies)
        metrics[f"{name}_server_cpu_us"] = meter.server_cpu / len(latencies) * 1e6


def percentile(ordered: list[float], q: float) -> float:
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


async def progress(peer: Peer, plan: Plan, metrics: dict[str, float], name: str) -> None:
    steps = plan.progress_steps
    token = f"progress-{peer.new_id()}"
    log = ProgressLog(steps)
    peer.track_progress(token, log)
    with Meter(peer.pid) as meter:
        async with asyncio.timeout(plan.progress_seconds):
            result = await peer.call("progress", {"steps": steps}, {"progressToken": token})
    expect_text(result, "done", "progress")
    log.check()
    metrics[f"{name}_per_s"] = steps / meter.wall
    metrics[f"{name}_server_cpu_us"] = meter.server_cpu / steps * 1e6


async def cancel(peer: Peer, plan: Plan, metrics: dict[str, float], name: str) -> None:
    """``sleep`` 60 s, cancel it, time until the next echo answers; the sleep must never be answered."""
    timings: list[float] = []
    sleepers: list[tuple[int, asyncio.Task[dict[str, Any]]]] = []
    for i in range(plan.cancels):
        rid = peer.new_id()
        sleeper = asyncio.create_task(
            peer.request("tools/call", {"name": "sleep", "arguments": {"ms": 60000}}, rid=rid)
        )
        sleepers.append((rid, sleeper))
        await echo_one(peer, f"barrier {i}")  # the sleep is in the server's hands now
        if isinstance(peer, StdioPeer):
            peer.forget(rid)
        else:
            peer.cancelled.add(rid)
        started = time.perf_counter()
        await peer.notify("notifications/cancelled", {"requestId": rid, "reason": "bench"})
        await echo_one(peer, f"after cancel {i}")
        timings.append(time.perf_counter() - started)
    await asyncio.sleep(plan.cancel_grace)
    for rid, sleeper in sleepers:
        if sleeper.done() and not sleeper.cancelled():
            exc = sleeper.exception()
            if exc is None:
                answer = sleeper.result()
                peer.violations.append(
                    f"{ANSWERED_CANCELLED}: sleep {rid} answered after its cancellation: {answer!r:.200}"
                )
            elif not isinstance(exc, NoResponse | ContractError):
                peer.violations.append(f"sleep {rid}: {exc!r}")
        sleeper.cancel()
    await asyncio.gather(*(s for _, s in sleepers), return_exceptions=True)
    metrics[f"{name}_ms"] = statistics.median(timings) * 1e3


# --------------------------------------------------------------------------- suites


@dataclass
class SuiteResult:
    server: str
    transport: str
    metrics: dict[str, float] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    deviations: list[str] = field(default_factory=list)
    """Violations tolerated for this server (a known behaviour of the SDK itself, not of our code)."""
    seconds: float = 0.0


def server_env() -> dict[str, str]:
    """The servers' environment: ours, but bytecode caches are written, so a Python server's
    cold start is never a compile of its sources."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


class HttpServer:
    """A contract server process listening on 127.0.0.1:PORT."""

    def __init__(self, process: asyncio.subprocess.Process, port: int) -> None:
        self.process = process
        self.port = port
        self.pid = process.pid

    @classmethod
    async def spawn(cls, cmd: Sequence[str], env: dict[str, str], log: Any) -> HttpServer:
        port = free_port()
        argv = [part.replace("{port}", str(port)) for part in cmd]
        process = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.DEVNULL, stdout=log, stderr=log, env={**env, "PORT": str(port)}
        )
        return cls(process, port)

    async def wait_listening(self, timeout: float) -> None:
        deadline = time.perf_counter() + timeout
        while True:
            if self.process.returncode is not None:
                raise ContractError(f"the server exited with {self.process.returncode} before listening")
            try:
                _, writer = await asyncio.open_connection(HOST, self.port)
            except OSError:
                if time.perf_counter() > deadline:
                    raise ContractError(f"nothing listens on {HOST}:{self.port} after {timeout} s") from None
                await asyncio.sleep(0.005)
                continue
            writer.close()
            return

    async def stop(self) -> None:
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), 5.0)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    self.process.kill()
                await self.process.wait()


async def _step(result: SuiteResult, what: str, work: Awaitable[None], limit: float) -> bool:
    try:
        async with asyncio.timeout(limit):
            await work
        return True
    except ContractError as exc:
        result.errors.append(f"{what}: {exc}")
    except TimeoutError:
        result.errors.append(f"{what}: no answer within {limit:.0f} s")
    except Exception as exc:
        result.errors.append(f"{what}: {type(exc).__name__}: {exc}")
    return False


async def measure(
    peer: Peer,
    plan: Plan,
    result: SuiteResult,
    seed: int,
    tolerate: frozenset[str],
    *,
    echo_only: bool = False,
    stateless: Peer | None = None,
) -> None:
    """Every measurement on a connected, initialized peer (stops at the first wrong answer); with
    ``echo_only`` only the echo rows (the HTTP floor answers nothing else); with a ``stateless`` peer
    (HTTP, a server that speaks the 2026-07-28 era) also the echo rows without a session."""
    m = result.metrics
    echo_steps: list[tuple[str, Callable[[], Awaitable[None]], float]] = [
        ("echo one at a time", lambda: echo_sequential(peer, plan, m, "echo"), plan.echo_seconds * 5 + 30),
        ("echo in flight", lambda: echo_parallel(peer, plan, m, "echo32"), plan.par_seconds * 5 + 30),
    ]
    if stateless is not None:
        one, par = plan.echo_seconds * 5 + 30, plan.par_seconds * 5 + 30
        echo_steps += [
            ("stateless echo one at a time", lambda: echo_sequential(stateless, plan, m, "stateless_echo"), one),
            ("stateless echo in flight", lambda: echo_parallel(stateless, plan, m, "stateless_echo32"), par),
        ]
    steps: list[tuple[str, Callable[[], Awaitable[None]], float]] = [
        ("basics", lambda: basics(peer), 30),
        *echo_steps,
        ("ask", lambda: ask(peer, plan, m, "ask"), plan.ask_seconds * 5 + 30),
        ("completion", lambda: completion(peer, plan, m, "completion", seed), plan.completion_seconds * 2 + 30),
        ("progress", lambda: progress(peer, plan, m, "progress"), plan.progress_seconds + 10),
        ("cancel", lambda: cancel(peer, plan, m, "cancel"), plan.cancels * 10 + 30),
    ]
    if echo_only:
        steps = echo_steps
    for what, work, limit in steps:
        if not await _step(result, what, work(), limit):
            return
        violations, peer.violations[:] = list(peer.violations), []
        for violation in violations:
            tag = violation.split(":", 1)[0]
            (result.deviations if tag in tolerate else result.errors).append(f"{what}: {violation}")
        if result.errors:
            return


async def cold_start_stdio(cmd: Sequence[str], env: dict[str, str], log: Any) -> tuple[StdioPeer, float]:
    started = time.perf_counter()
    peer = await StdioPeer.spawn(cmd, env, log)
    try:
        await handshake(peer)
    except BaseException:  # a timeout or a wrong answer: no process left behind (as cold_start_http)
        peer.kill()
        raise
    return peer, time.perf_counter() - started


async def cold_start_http(
    cmd: Sequence[str], env: dict[str, str], log: Any
) -> tuple[HttpServer, HttpPool, HttpPeer, float]:
    started = time.perf_counter()
    server = await HttpServer.spawn(cmd, env, log)
    try:
        await server.wait_listening(60.0)
        pool = HttpPool(server.port)
        peer = HttpPeer(pool, server.pid)
        await handshake(peer)
    except BaseException:
        await server.stop()
        raise
    return server, pool, peer, time.perf_counter() - started


async def run_suite(
    name: str,
    transport: str,
    cmd: Sequence[str],
    plan: Plan,
    *,
    log_path: Path,
    seed: int = 1,
    tolerate: frozenset[str] = frozenset(),
    echo_only: bool = False,
    stateless: bool = False,
) -> SuiteResult:
    """Start the server, measure everything over ``transport``, stop it.

    ``tolerate``: violation tags (e.g. ``ANSWERED_CANCELLED``) recorded as deviations, not errors.
    HTTP only: ``echo_only`` measures cold start, idle RSS and the echo rows alone; ``stateless``
    adds the echo rows in the stateless era (``stateless_echo_per_s``, ``stateless_echo32_per_s``)."""
    result = SuiteResult(name, transport)
    env = server_env()
    started = time.perf_counter()
    with log_path.open("ab") as log:
        try:
            if transport == "stdio":
                await _stdio_suite(cmd, env, log, plan, result, seed, tolerate)
            else:
                await _http_suite(cmd, env, log, plan, result, seed, tolerate, echo_only, stateless)
        except Exception as exc:
            result.errors.append(f"{type(exc).__name__}: {exc}")
    result.seconds = time.perf_counter() - started
    return result


async def _stdio_suite(
    cmd: Sequence[str],
    env: dict[str, str],
    log: Any,
    plan: Plan,
    result: SuiteResult,
    seed: int,
    tolerate: frozenset[str],
) -> None:
    colds: list[float] = []
    for _ in range(plan.extra_cold_starts):
        async with asyncio.timeout(60):
            peer, seconds = await cold_start_stdio(cmd, env, log)
        colds.append(seconds)
        await peer.close_stdin_and_wait(10.0)
    try:
        async with asyncio.timeout(60):
            peer, seconds = await cold_start_stdio(cmd, env, log)
    except TimeoutError:
        raise ContractError("no initialize result within 60 s") from None
    colds.append(seconds)
    try:
        result.metrics["cold_start_ms"] = statistics.median(colds) * 1e3
        await asyncio.sleep(0.2)
        result.metrics["idle_rss_kb"] = rss_kb(peer.pid)
        await measure(peer, plan, result, seed, tolerate)
        exit_seconds = await peer.close_stdin_and_wait(10.0)
        if exit_seconds is None:
            result.errors.append("stdin closed: the server did not exit within 10 s (killed)")
        else:
            result.metrics["exit_ms"] = exit_seconds * 1e3
    finally:
        peer.kill()


async def _http_suite(
    cmd: Sequence[str],
    env: dict[str, str],
    log: Any,
    plan: Plan,
    result: SuiteResult,
    seed: int,
    tolerate: frozenset[str],
    echo_only: bool = False,
    stateless: bool = False,
) -> None:
    colds: list[float] = []
    for _ in range(plan.extra_cold_starts):
        server, pool, _, seconds = await cold_start_http(cmd, env, log)
        colds.append(seconds)
        pool.close()
        await server.stop()
    server, pool, peer, seconds = await cold_start_http(cmd, env, log)
    colds.append(seconds)
    try:
        result.metrics["cold_start_ms"] = statistics.median(colds) * 1e3
        await asyncio.sleep(0.2)
        result.metrics["idle_rss_kb"] = rss_kb(server.pid)
        without_session = StatelessHttpPeer(pool, server.pid) if stateless else None
        await measure(peer, plan, result, seed, tolerate, echo_only=echo_only, stateless=without_session)
        if not result.errors and not echo_only:
            await _step(result, "sessions", sessions(server, pool, plan, result.metrics), plan.sessions_seconds + 30)
    finally:
        pool.close()
        await server.stop()


async def sessions(server: HttpServer, pool: HttpPool, plan: Plan, metrics: dict[str, float]) -> None:
    """Open ``plan.sessions`` idle sessions (initialize + initialized); RSS growth per session."""
    await asyncio.sleep(0.3)
    gc.collect()
    before = rss_kb(server.pid)
    opened: list[HttpPeer] = []
    started = time.perf_counter()
    deadline = started + plan.sessions_seconds
    while len(opened) < plan.sessions and time.perf_counter() < deadline:
        peer = HttpPeer(pool, server.pid)
        await handshake(peer)
        opened.append(peer)
    elapsed = time.perf_counter() - started
    await asyncio.sleep(0.5)
    after = rss_kb(server.pid)
    if len(opened) < plan.sessions:
        raise ContractError(f"opened only {len(opened)} of {plan.sessions} sessions in {plan.sessions_seconds} s")
    metrics["session_kb"] = (after - before) / len(opened)
    metrics["session_open_per_s"] = len(opened) / elapsed
    # one of the idle sessions still answers
    await echo_one(opened[len(opened) // 2], "still here")


# --------------------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Drive one bench-contract server and print what it measured.")
    parser.add_argument("--quick", action="store_true", help="check the contract with tiny counts")
    parser.add_argument("--log", type=Path, default=Path(os.devnull), help="where the server's stderr goes")
    parser.add_argument("--echo-only", action="store_true", help="HTTP: only cold start, idle RSS and the echo rows")
    parser.add_argument("--stateless", action="store_true", help="HTTP: the echo rows in the stateless era too")
    parser.add_argument("transport", choices=("stdio", "http"))
    parser.add_argument("cmd", nargs=argparse.REMAINDER, help="-- the server command")
    ns = parser.parse_args(argv)
    cmd = ns.cmd[1:] if ns.cmd[:1] == ["--"] else ns.cmd
    if not cmd:
        parser.error("give the server command after --")
    plan = QUICK if ns.quick else FULL
    options = {"echo_only": ns.echo_only, "stateless": ns.stateless}
    result = asyncio.run(run_suite(Path(cmd[-1]).name, ns.transport, cmd, plan, log_path=ns.log, **options))
    for key, value in sorted(result.metrics.items()):
        print(f"{key:32} {value:12.2f}")
    for error in result.errors:
        print(f"WRONG: {error}", file=sys.stderr)
    for deviation in result.deviations:
        print(f"deviation: {deviation}", file=sys.stderr)
    print(f"({result.seconds:.1f} s)")
    return 1 if result.errors else 0


if __name__ == "__main__":
    sys.exit(main())
