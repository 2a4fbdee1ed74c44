"""The bounded fuzz pass over ``run_http``'s own HTTP/1.1 server, on raw sockets (issue #26, "Also").

``h1_templates.RequestMaker`` writes 240 seeded cases (``FUZZ_SEED``): good requests, header
bombs, truncated bodies, bad framing, a good request pipelined before a broken one. Each goes
on a connection of its own to the fuzz server (``fuzz_server.py``, plus ``tick``, a tool whose
side effect is counted) served by ``serving.HttpServer`` on 127.0.0.1 in the test's loop. Every
answer is checked as it comes: the statuses in order; a refusal is a JSON-RPC error (-32600, id
null) naming its cause; the server closes the connection after it, in seconds (no header bomb
waits for the header timeout). At the end, ``tick`` ran exactly once per good request: no
truncated or badly framed request ever reached it. A ping on a connection of its own, after
every 20 cases, is answered within 1 s; no connection is left open.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx2 as httpx
from _peers import bounded
from fuzz_server import make_server
from h1_templates import TEMPLATES, Case, RequestMaker, stateless

from _raw_http import talk
from backchannel.framing.mirrored_headers import request_headers
from backchannel.http_host.h1.serving import HttpServer
from backchannel.testing import within

CASES = 240
PING_EVERY = 20
PING_BOUND = 1.0  # seconds
WAIT = 10.0  # seconds: a bound on each connection, never a pause
BODY_TIMEOUT = 0.3  # seconds: the "stall" cases wait for it


@contextlib.asynccontextmanager
async def serving(app: Any) -> AsyncIterator[tuple[int, HttpServer]]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    server = HttpServer(app, body_timeout=BODY_TIMEOUT, grace=1.0)
    task = asyncio.ensure_future(server.serve(sock=sock, signals=False))
    try:
        await within(lambda: server.started or task.done(), "the server's start", timeout=10)
        yield sock.getsockname()[1], server
    finally:
        server.stop()
        await asyncio.wait_for(task, 10)
        sock.close()


async def send(port: int, case: Case) -> bytes:
    """``case`` on a connection of its own; all the server sent before it closed."""

    async def write(writer: asyncio.StreamWriter) -> None:
        for data in case.writes:
            writer.write(data)
            await writer.drain()
        if case.half_close:
            writer.write_eof()

    return await talk(port, write, read_timeout=WAIT)


def responses(raw: bytes) -> list[tuple[int, dict[str, str], bytes]]:
    """The content-length framed responses in ``raw``, in order."""
    out = []
    while raw:
        head, sep, rest = raw.partition(b"\r\n\r\n")
        if not sep:
            raise AssertionError(f"a cut response: {raw[:200]!r}")
        status_line, *lines = head.decode("latin-1").split("\r\n")
        headers = {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
        length = int(headers["content-length"])
        out.append((int(status_line.split()[1]), headers, rest[:length]))
        raw = rest[length:]
    return out


def check(case: Case, raw: bytes, took: float, problems: list[str]) -> None:
    what = case.describe()
    try:
        answers = responses(raw)
    except (AssertionError, KeyError, ValueError) as exc:
        problems.append(f"unreadable answer ({exc}) to {what}")
        return
    statuses = [status for status, _, _ in answers]
    if statuses != case.statuses:
        problems.append(f"statuses {statuses}, not {case.statuses}, for {what}")
        return
    for status, headers, body in answers:
        message: Any = json.loads(body) if headers.get("content-type") == "application/json" else None
        if status >= 400:
            error = message.get("error") if isinstance(message, dict) else None
            if not (isinstance(error, dict) and error.get("code") == -32600 and message.get("id", "missing") is None):
                problems.append(f"a {status} without a JSON-RPC -32600 error for {what}: {body[:200]!r}")
            elif case.words not in error.get("message", ""):
                problems.append(f"a {status} not naming {case.words!r} ({error.get('message')!r}) for {what}")
            if headers.get("connection") != "close":
                problems.append(f"a {status} that does not close the connection for {what}")
        elif not (isinstance(message, dict) and "result" in message):
            problems.append(f"a {status} without a result for {what}: {body[:200]!r}")
    if case.template == "header_bomb" and took > 5:
        problems.append(f"a header bomb cut after {took:.1f} s (the header timeout's, not the limit's): {what}")


def test_bounded_h1_fuzz_pass() -> None:
    seed = int(os.environ.get("FUZZ_SEED", "26"))
    ticks: list[int] = []
    server = make_server()

    @server.tool()
    def tick() -> str:
        """A side effect the fuzzer counts."""
        ticks.append(1)
        return f"tick {len(ticks)}"

    app = server.http_app(body_timeout=None, max_requests=None, allowed_hosts=["127.0.0.1:*", "127.0.0.1"])
    problems: list[str] = []
    seen: dict[str, int] = dict.fromkeys(TEMPLATES, 0)
    latencies: list[float] = []

    async def body() -> None:
        async with (
            serving(app) as (port, http),
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=WAIT) as pinger,
        ):
            maker = RequestMaker(seed, port)
            expected = 0
            for index in range(1, CASES + 1):
                case = maker.case()
                seen[case.template] += 1
                started = time.monotonic()
                raw = await send(port, case)
                check(case, raw, time.monotonic() - started, problems)
                expected += case.ticks
                if index % PING_EVERY == 0:
                    message = stateless("server/discover", f"ping-{index}")
                    headers = {"accept": "application/json, text/event-stream", **request_headers(message)}
                    started = time.monotonic()
                    pong = await pinger.post("/mcp", json=message, headers=headers)
                    latencies.append(time.monotonic() - started)
                    if pong.status_code != 200:
                        problems.append(f"the ping after {index} cases: {pong.status_code} {pong.text[:200]}")
            await within(lambda: len(http.connections) <= 1, "every fuzzed connection's close", timeout=WAIT)
            if len(ticks) != expected:
                problems.append(f"tick ran {len(ticks)} times for {expected} good requests")

    bounded(body, timeout=240)
    assert problems == [], "\n".join(problems[:20])
    assert all(seen.values()), seen
    assert latencies and max(latencies) < PING_BOUND, max(latencies)
