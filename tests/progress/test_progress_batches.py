"""Progress in batches (issue #19): a tool reporting in a tight loop, on a real stdio pipe.

``ctx.report_progress`` writes what is queued every 256 messages instead of only when the
handler next waits, and then gives the loop a turn. These tests read the server's stdout
byte for byte: each notification is exactly the generic encoding of the spec's shape
(progress.mdx), in order, with the monotonic rule still enforced and nothing after the
response; and a client's cancellation reaches a handler that never awaits anything else.
"""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import msgspec

from backchannel.testing import run

SERVER = textwrap.dedent(
    """
    from backchannel.server import Context, Server
    from backchannel.types.errors import LocalProtocolError

    server = Server("batches", "1.0.0", log_level=None)

    @server.tool(structured_output=False)
    async def count(steps: int, ctx: Context, total: bool = True, message: str = "", repeat: bool = False) -> str:
        for i in range(1, steps + 1):
            await ctx.report_progress(i / 2, steps / 2 if total else None, f"{message}{i}" if message else None)
        if repeat:  # the last value again: refused, never sent
            try:
                await ctx.report_progress(steps / 2)
            except LocalProtocolError as exc:
                return f"refused: {exc}"
        return "done"

    @server.tool(structured_output=False)
    async def spin(ctx: Context, limit: int) -> str:
        for i in range(1, limit + 1):  # awaits nothing but progress
            await ctx.report_progress(i)
        return "finished"

    server.run()
    """
)

HANDSHAKE = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}


class Wire:
    """The server as a child process; every line it writes, kept as bytes."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.lines: list[bytes] = []
        self.arrived = asyncio.Event()
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while line := await self.process.stdout.readline():
            self.lines.append(line)
            self.arrived.set()

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")

    async def until(self, predicate: Any, timeout: float = 20.0) -> None:
        async with asyncio.timeout(timeout):
            while not predicate():
                self.arrived.clear()
                await self.arrived.wait()

    def answered(self, request_id: int) -> bool:
        return any(json.loads(line).get("id") == request_id for line in self.lines)

    async def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 10)
        finally:
            if self.process.returncode is None:
                self.process.kill()
                await self.process.wait()
            await self.reader


async def start(tmp_path: Path) -> Wire:
    script = tmp_path / "batches_server.py"
    script.write_text(SERVER)
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(script), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=1 << 20
    )
    wire = Wire(process)
    wire.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HANDSHAKE})
    await wire.until(lambda: wire.answered(1))
    wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    wire.lines.clear()
    return wire


def generic(token: str, progress: float, total: float | None, message: str | None) -> bytes:
    """The notification as the spec shapes it, encoded the general way (keys in this order)."""
    params: dict[str, Any] = {"progressToken": token, "progress": progress}
    if total is not None:
        params["total"] = total
    if message is not None:
        params["message"] = message
    return msgspec.json.encode({"jsonrpc": "2.0", "method": "notifications/progress", "params": params}) + b"\n"


def call(wire: Wire, request_id: int, tool: str, arguments: dict[str, Any], token: str) -> None:
    params = {"name": tool, "arguments": arguments, "_meta": {"progressToken": token}}
    wire.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})


def test_each_notification_is_the_generic_encoding_in_order_and_none_after_the_answer(tmp_path: Path) -> None:
    steps = 700  # more than two batches, and a part batch
    cases = [
        ({"total": True}, lambda i: (i / 2, steps / 2, None)),
        ({"total": False}, lambda i: (i / 2, None, None)),
        ({"total": True, "message": "step "}, lambda i: (i / 2, steps / 2, f"step {i}")),
    ]

    async def main() -> None:
        wire = await start(tmp_path)
        try:
            for number, (options, expected) in enumerate(cases, start=10):
                token = f"tok-{number}"
                call(wire, number, "count", {"steps": steps, **options}, token)
                await wire.until(lambda number=number: wire.answered(number))  # type: ignore[misc]
                wire.send({"jsonrpc": "2.0", "id": 99 + number, "method": "ping"})
                await wire.until(lambda number=number: wire.answered(99 + number))  # type: ignore[misc]
                *progress, answer, pong = wire.lines
                assert progress == [generic(token, *expected(i)) for i in range(1, steps + 1)]
                assert json.loads(answer)["result"]["content"][0]["text"] == "done"
                assert json.loads(pong) == {"jsonrpc": "2.0", "id": 99 + number, "result": {}}  # nothing in between
                wire.lines.clear()
        finally:
            await wire.close()

    run(main, timeout=60)


def test_a_value_that_does_not_increase_is_refused_after_batches_left(tmp_path: Path) -> None:
    async def main() -> None:
        wire = await start(tmp_path)
        try:
            call(wire, 5, "count", {"steps": 600, "repeat": True}, "t")
            await wire.until(lambda: wire.answered(5))
            *progress, answer = wire.lines
            assert len(progress) == 600
            assert [json.loads(line)["params"]["progress"] for line in progress] == [i / 2 for i in range(1, 601)]
            text = json.loads(answer)["result"]["content"][0]["text"]
            assert text == "refused: progress must increase: 300.0 after 300.0"
        finally:
            await wire.close()

    run(main, timeout=60)


def test_a_cancellation_reaches_a_tool_that_awaits_nothing_but_progress(tmp_path: Path) -> None:
    """Before batches, such a tool held the loop until it ended: the cancellation was read
    only then, and the call was answered anyway. Now the loop reads the client between
    batches: the tool stops at its next report, and the call is never answered."""
    limit = 300_000

    async def main() -> None:
        wire = await start(tmp_path)
        try:
            call(wire, 7, "spin", {"limit": limit}, "spin")
            await wire.until(lambda: len(wire.lines) >= 1000)
            wire.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}})
            wire.send({"jsonrpc": "2.0", "id": 8, "method": "ping"})
            await wire.until(lambda: wire.answered(8))
            seen = len(wire.lines) - 1
            await asyncio.sleep(0.3)  # an answer to 7 would come right after the loop ends
            assert not wire.answered(7)
            assert seen < limit  # the ping was answered long before the loop could have ended
            progress = [json.loads(line)["params"]["progress"] for line in wire.lines if b"progress" in line]
            assert progress == list(range(1, len(progress) + 1))
        finally:
            await wire.close()

    run(main, timeout=60)
