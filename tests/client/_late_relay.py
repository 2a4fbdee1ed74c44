"""Run a stdio server behind a relay that reads at once and passes each line on late.

    python tests/client/_late_relay.py DELAY LOG -- COMMAND [ARGS ...]

The relay reads its stdin as soon as a line comes (so the client sees its message read) and
hands each line to the server ``DELAY`` seconds later, in order: a server that has read a
request and answers it late. Each line handed on is logged to ``LOG`` as
``<relay pid> <method, or "answer">``. The server's stdout and stderr are the relay's. When
our stdin ends, what was not handed on yet is dropped, the server's stdin is closed, and the
relay exits with the server's status.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time


def main() -> int:
    delay, log, separator, *command = sys.argv[1:]
    assert separator == "--" and command, __doc__
    server = subprocess.Popen(command, stdin=subprocess.PIPE)
    assert server.stdin is not None
    lines: queue.Queue[tuple[float, bytes] | None] = queue.Queue()
    ended = threading.Event()

    def hand_on() -> None:
        while (item := lines.get()) is not None:
            due, line = item
            if ended.wait(max(0.0, due - time.monotonic())):
                return  # our stdin ended meanwhile: drop the rest
            try:
                message = json.loads(line)
            except ValueError:
                message = {}
            with open(log, "a") as out:
                out.write(f"{os.getpid()} {message.get('method', 'answer')}\n")
            server.stdin.write(line)  # type: ignore[union-attr]
            server.stdin.flush()  # type: ignore[union-attr]

    forwarder = threading.Thread(target=hand_on, daemon=True)
    forwarder.start()
    for line in sys.stdin.buffer:
        lines.put((time.monotonic() + float(delay), line))
    ended.set()
    lines.put(None)
    forwarder.join(timeout=5)
    server.stdin.close()
    try:
        return server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()
        return server.wait()


if __name__ == "__main__":
    sys.exit(main())
