"""Progress read back from the Redis event log: a handshake-era call resumed on the other worker.

The ``progress`` call is POSTed through nginx to one worker; the driver reads the stream's
priming event (its id) and hangs up; a GET with ``Last-Event-ID`` goes through nginx to the other
worker, which holds nothing of that stream and replays and follows it from the Redis log to its
end. Timed from the POST to the last byte of the GET; every notification (1..N, in order) and the
answer are checked on the resumed stream, and the two requests must have reached different workers.
"""

from __future__ import annotations

__all__ = ["resumed_progress"]

import asyncio
import re
import time
from typing import Any, Protocol

import driver
import orjson

_REQUEST_ID = 1_000_000_000  # far above the session's other ids
_TOKEN = "fleet-resumed"


class _Plan(Protocol):
    @property
    def progress_seconds(self) -> float: ...


async def _priming_id(conn: driver.HttpConnection, headers: dict[str, str]) -> str:
    """The id of the stream's first event (the priming event), read off a chunked SSE body."""
    seen = b""
    while b"\n\n" not in seen.replace(b"\r\n", b"\n"):
        if headers.get("transfer-encoding", "").lower() == "chunked":
            size = int((await conn.reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
            seen += (await conn.reader.readexactly(size + 2))[:-2]
        else:
            seen += await conn.reader.read(65536)
    found = re.search(rb"^id: ?(\S+)", seen, re.MULTILINE)
    if found is None:
        raise driver.ContractError(f"resumed progress: the stream began without an event id: {seen[:200]!r}")
    return found.group(1).decode()


async def resumed_progress(port: int, session_headers: bytes, steps: int, plan: _Plan) -> float:
    """Notifications per second from the POST to the end of the resumed stream (see the module)."""
    call = {
        "jsonrpc": "2.0",
        "id": _REQUEST_ID,
        "method": "tools/call",
        "params": {"name": "progress", "arguments": {"steps": steps}, "_meta": {"progressToken": _TOKEN}},
    }
    body = orjson.dumps(call)
    host = f"Host: {driver.HOST}:{port}\r\n".encode()
    log = driver.ProgressLog(steps)
    answers: list[dict[str, Any]] = []

    def on_message(message: dict[str, Any]) -> None:
        if message.get("method") == "notifications/progress":
            log.add(message.get("params") or {})
        elif message.get("id") == _REQUEST_ID and "method" not in message:
            answers.append(message)
            log.answered = True

    started = time.perf_counter()
    async with asyncio.timeout(plan.progress_seconds):
        post = await driver.HttpConnection.open(port)
        try:
            post.writer.write(
                b"POST /mcp HTTP/1.1\r\n" + host + b"Content-Type: application/json\r\n"
                b"Accept: application/json, text/event-stream\r\n" + session_headers
                + f"Content-Length: {len(body)}\r\n\r\n".encode() + body
            )  # fmt: skip
            status, headers = await driver._read_head(post.reader)
            if status != 200 or not headers.get("content-type", "").startswith("text/event-stream"):
                raise driver.ContractError(f"resumed progress: the call answered HTTP {status}, {headers}")
            event_id = await _priming_id(post, headers)
        finally:
            post.close()  # the client leaves; the call goes on, its events into the log
        get = await driver.HttpConnection.open(port)
        try:
            get.writer.write(
                b"GET /mcp HTTP/1.1\r\n" + host + b"Accept: text/event-stream\r\n" + session_headers
                + f"Last-Event-ID: {event_id}\r\n\r\n".encode()
            )  # fmt: skip
            status, resumed_headers = await driver._read_head(get.reader)
            if status != 200:
                raise driver.ContractError(f"resumed progress: GET with Last-Event-ID answered HTTP {status}")
            await driver._read_body(get.reader, resumed_headers, on_message)
        finally:
            get.close()
    elapsed = time.perf_counter() - started
    if headers.get("x-upstream") == resumed_headers.get("x-upstream"):
        raise driver.ContractError("resumed progress: the stream was resumed on the worker that wrote it")
    if len(answers) != 1:
        raise driver.ContractError(f"resumed progress: {len(answers)} answers on the resumed stream")
    driver.expect_text(answers[0].get("result") or {}, "done", "resumed progress")
    log.check()
    return steps / elapsed
