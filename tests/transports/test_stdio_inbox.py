"""The stdio server's input (issue #19): stdin is decoded as it arrives, without a StreamReader.

Seen from a client process: a burst larger than what the server takes in before it stops
reading its pipe is answered whole and in order (reading resumes); a last line without its
newline still counts at the end of input; a regular file as stdin is read as a pipe is.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from backchannel.framing.ndjson import LineDecoder
from backchannel.transports.stdio_inbox import _Inbox

FIXTURE = str(Path(__file__).resolve().parents[1] / "fixtures" / "wire_server.py")
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def lines(*messages: dict[str, object]) -> bytes:
    return b"".join(json.dumps(message).encode() + b"\n" for message in messages)


def opening() -> bytes:
    return lines(INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"})


def answered_ids(stdout: bytes) -> list[object]:
    return [json.loads(line).get("id") for line in stdout.splitlines() if line.strip()]


def serve(stdin: bytes | Path) -> bytes:
    """Run the fixture server on ``stdin`` (a pipe fed these bytes, or this file) to its end."""
    if isinstance(stdin, Path):
        with stdin.open("rb") as source:
            done = subprocess.run([sys.executable, FIXTURE], stdin=source, capture_output=True, timeout=60)
    else:
        done = subprocess.run([sys.executable, FIXTURE], input=stdin, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout


def test_a_burst_beyond_the_inbox_is_answered_whole_and_in_order() -> None:
    count = 5000  # several times what the server takes in before it pauses its pipe
    burst = lines(*({"jsonrpc": "2.0", "id": i, "method": "ping"} for i in range(1, count + 1)))
    assert answered_ids(serve(opening() + burst)) == list(range(count + 1))


def test_a_last_line_without_its_newline_counts_at_the_end_of_input() -> None:
    tail = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping"}).encode()  # no newline, then EOF
    assert answered_ids(serve(opening() + tail)) == [0, 7]


def test_a_regular_file_as_stdin_is_served_like_a_pipe(tmp_path: Path) -> None:
    source = tmp_path / "requests.jsonl"
    pings = lines(*({"jsonrpc": "2.0", "id": i, "method": "ping"} for i in range(1, 4)))
    source.write_bytes(opening() + pings + json.dumps({"jsonrpc": "2.0", "id": 9, "method": "ping"}).encode())
    assert answered_ids(serve(source)) == [0, 1, 2, 3, 9]


class _PipeEnd:
    """What ``_Inbox`` sees of the read pipe: whether reading is paused."""

    def __init__(self) -> None:
        self.paused = False

    def pause_reading(self) -> None:
        self.paused = True

    def resume_reading(self) -> None:
        self.paused = False


def test_the_inbox_stops_reading_at_a_mebibyte_of_untaken_messages_not_only_at_a_count() -> None:
    """A few large messages are as much memory as many small ones: 20 lines of 64 KiB pause the pipe,
    and taking them resumes it; a single line still arriving never pauses it (its take would never come)."""
    inbox = _Inbox(LineDecoder(8 << 20))
    pipe = _PipeEnd()
    inbox.connection_made(pipe)  # type: ignore[arg-type]
    big = lines({"jsonrpc": "2.0", "method": "notifications/x", "params": {"pad": "x" * 65536}})
    for _ in range(20):
        inbox.data_received(big)
    assert pipe.paused
    taken = asyncio.run(inbox.take())
    assert taken is not None and len(taken) == 20 and not pipe.paused

    half_line = b'{"jsonrpc": "2.0", "method": "notifications/x", "params": {"pad": "' + b"x" * (2 << 20)
    inbox.data_received(half_line)
    assert not pipe.paused  # nothing whole to take yet: reading goes on until the line ends


def test_a_failure_serving_a_pushed_batch_ends_the_input_with_it() -> None:
    """What the connection raised serving a batch is what ``take`` raises (as the read loop would
    have raised it itself); nothing more is read or served after it."""
    inbox = _Inbox(LineDecoder(1 << 20))
    pipe = _PipeEnd()
    inbox.connection_made(pipe)  # type: ignore[arg-type]
    served: list[list[Any]] = []
    failure = ConnectionResetError("the peer went away")

    def sink(batch: list[Any]) -> None:
        served.append(batch)
        raise failure

    inbox.push_to(sink, None, lambda: None)
    inbox.data_received(lines({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
    inbox.data_received(lines({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
    assert served == [[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]]
    assert pipe.paused
    with pytest.raises(ConnectionResetError):
        asyncio.run(inbox.take())
