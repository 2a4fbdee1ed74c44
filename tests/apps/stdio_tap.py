"""``python stdio_tap.py LOG -- COMMAND...``: run a stdio MCP server, passing its stdin and stdout
through, and append every line the client sends it to ``LOG``: what reached the server."""

from __future__ import annotations

import subprocess
import sys
import threading


def main() -> int:
    log_path, separator, *command = sys.argv[1:]
    assert separator == "--" and command, __doc__
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None
    stdin = server.stdin

    def forward() -> None:
        with open(log_path, "ab", buffering=0) as log:
            for line in sys.stdin.buffer:
                log.write(line)
                stdin.write(line)
                stdin.flush()
        stdin.close()

    threading.Thread(target=forward, daemon=True).start()
    for line in server.stdout:
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
    return server.wait()


if __name__ == "__main__":
    sys.exit(main())
