"""The stdio server serves each batch from its read callback (``StdioServerTransport.push_to``),
not from a task woken per message (issue #19: echo and ask close to the bare-asyncio floor).

What must not change with it: the bytes written for the same input (checked against the read
loop, on asyncio's loop and on uvloop), and backpressure: a client that stops reading our stdout
makes us stop reading stdin, on both loops.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest
import uvloop

from backchannel.server import Server
from backchannel.transports.stdio import StdioServerTransport
from backchannel.types.errors import ToolError

FIXTURE = str(Path(__file__).resolve().parents[1] / "fixtures" / "wire_server.py")
LINE_LIMIT = 512
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def lines(*messages: object) -> bytes:
    return b"".join(json.dumps(message).encode() + b"\n" for message in messages)


def call(request_id: int, tool: str, **arguments: Any) -> dict[str, Any]:
    params = {"name": tool, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def _server(seen_tasks: list[asyncio.Task[Any] | None]) -> Server:
    server = Server("push", "1.0.0")

    @server.tool()
    def echo(text: str) -> str:
        """Return ``text``, noting which task (if any) runs it."""
        seen_tasks.append(asyncio.current_task())
        return text

    @server.tool()
    def fails() -> str:
        """A tool's own failure."""
        raise ToolError("nope")

    @server.tool()
    def crashes() -> str:
        """A bug in a tool."""
        raise RuntimeError("a bug")

    return server


# Every kind of line a client may send, answered without waiting: results, a tool's failure, a
# bug, bad arguments, an unknown method, bad JSON, a line over the limit, a notification, and a
# last line without its newline.
SCRIPT = (
    lines(
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        call(1, "echo", text="one"),
        call(2, "fails"),
        call(3, "crashes"),
        call(4, "echo", nope=1),
        {"jsonrpc": "2.0", "id": 5, "method": "no/such"},
    )
    + b'{"jsonrpc": "2.0", "id": 6, "method": \n'
    + lines(call(7, "echo", text="x" * LINE_LIMIT))
    + lines({"jsonrpc": "2.0", "method": "notifications/whatever"}, {"jsonrpc": "2.0", "id": 8, "method": "ping"})
    + json.dumps(call(9, "echo", text="last")).encode()
)


class _ReadLoopTransport(StdioServerTransport):
    """The same transport, read the other way: the connection's loop awaits ``receive``."""

    def push_to(self, sink: Callable[[list[Any]], None]) -> bool:
        return False  # as a transport that cannot push says


def _read_all(fd: int) -> bytes:
    with os.fdopen(fd, "rb") as source:
        return source.read()


async def _serve(transport_type: type[StdioServerTransport], seen_tasks: list[asyncio.Task[Any] | None]) -> bytes:
    """Serve ``SCRIPT`` over real pipes, written in one piece once serving has begun, then its
    end; what was written back."""
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    written = asyncio.create_task(asyncio.to_thread(_read_all, out_read))
    with os.fdopen(in_read, "rb", buffering=0) as stdin, os.fdopen(out_write, "wb", buffering=0) as stdout:
        transport = transport_type(stdin, stdout, max_line_bytes=LINE_LIMIT)
        await transport.start()
        serving = asyncio.create_task(_server(seen_tasks).serve(transport))
        await asyncio.sleep(0)  # the connection is waiting for input
        os.write(in_write, SCRIPT)
        os.close(in_write)
        await serving
        await transport.close()
    return await written


def _on(loop: str, main: Coroutine[Any, Any, bytes]) -> bytes:
    factory: Callable[[], asyncio.AbstractEventLoop] | None = uvloop.new_event_loop if loop == "uvloop" else None
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_batches_served_from_the_read_callback_write_the_bytes_the_read_loop_writes(loop: str) -> None:
    in_callback: list[asyncio.Task[Any] | None] = []
    in_loop: list[asyncio.Task[Any] | None] = []
    pushed = _on(loop, _serve(StdioServerTransport, in_callback))
    read = _on(loop, _serve(_ReadLoopTransport, in_loop))

    assert pushed == read
    answers = [json.loads(line) for line in pushed.splitlines()]
    by_id = {answer["id"]: answer for answer in answers if answer["id"] is not None}
    assert sorted(by_id) == [0, 1, 2, 3, 4, 5, 8, 9]
    assert by_id[1]["result"]["content"] == [{"type": "text", "text": "one"}]
    assert by_id[2]["result"]["isError"] and by_id[3]["error"]["code"] == -32603
    assert by_id[5]["error"]["code"] == -32601
    assert by_id[9]["result"]["content"] == [{"type": "text", "text": "last"}]
    unread = [answer["error"]["code"] for answer in answers if answer["id"] is None]
    assert unread == [-32700, -32600]
    # The tool answered at once ran in the read callback (no task) when pushed; the last line,
    # known only at the end of input, is served by the connection's task either way.
    assert in_callback[0] is None and in_callback[-1] is not None
    assert in_loop[0] is not None


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_a_client_that_stops_reading_stdout_stops_the_server_reading_stdin(loop: str) -> None:
    """11 MiB of pings to a server whose answers nobody reads: the server takes in only what
    fills our stdout's pipe and its high water mark (1.5 MiB here), then the writes block;
    reading its output lets everything through, answered in order."""
    count = 250_000
    burst = b"".join(b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % i for i in range(1, count + 1))
    env = {**os.environ, "BACKCHANNEL_LOOP": loop}
    server = subprocess.Popen(
        [sys.executable, FIXTURE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    assert server.stdin is not None and server.stdout is not None
    sent = [0]

    def write_all() -> None:
        assert server.stdin is not None
        server.stdin.write(lines(INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"}))
        for start in range(0, len(burst), 1 << 16):
            server.stdin.write(burst[start : start + (1 << 16)])
            server.stdin.flush()
            sent[0] = start + (1 << 16)
        server.stdin.close()

    writer = threading.Thread(target=write_all, daemon=True)
    try:
        writer.start()
        # Until the writes stop moving (blocked: the server no longer reads) or all went through.
        last = -1
        while writer.is_alive() and sent[0] != last:
            last = sent[0]
            time.sleep(1.0)
        assert writer.is_alive() and sent[0] < 6 << 20, f"the server read {sent[0]} bytes with its answers unread"
        answered = [json.loads(line)["id"] for line in server.stdout.read().splitlines()]
        writer.join()
        assert answered == list(range(count + 1))
    finally:
        server.kill()
        server.wait()


EXITING = """
import sys
from backchannel import Server
server = Server("exiting")
@server.tool()
def bye() -> str:
    \"\"\"End the process.\"\"\"
    sys.exit(3)
server.run()
"""


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_a_tool_that_exits_ends_the_server_with_its_status(loop: str) -> None:
    """A tool answered at once runs in the read callback, where uvloop would take its
    ``SystemExit`` for a fault of the pipe (and the server would end as at the end of input, 0)."""
    env = {**os.environ, "BACKCHANNEL_LOOP": loop}
    pipe, quiet = subprocess.PIPE, subprocess.DEVNULL
    server = subprocess.Popen([sys.executable, "-c", EXITING], stdin=pipe, stdout=pipe, stderr=quiet, env=env)
    assert server.stdin is not None and server.stdout is not None
    try:
        server.stdin.write(lines(INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"}))
        server.stdin.flush()
        assert json.loads(server.stdout.readline())["id"] == 0  # serving: the call below is read as it comes
        server.stdin.write(lines(call(1, "bye")))
        server.stdin.flush()
        assert server.wait(timeout=30) == 3  # stdin still open: not its end
    finally:
        server.kill()
        server.wait()
