"""``python tee_stdin.py LOG -- COMMAND [ARGS...]``: run COMMAND with our stdin and stdout,
appending every line written to its stdin to LOG, so a test can read everything a client
sent to a stdio server (``test_check_cards.py``: server-everything's excluded tools are
never called)."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import threading


def main() -> int:
    log, dash, *command = sys.argv[1:]
    assert dash == "--" and command, __doc__
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=sys.stdout, stderr=sys.stderr)
    assert child.stdin is not None

    def copy() -> None:
        with open(log, "ab") as kept:
            for line in sys.stdin.buffer:
                kept.write(line)
                kept.flush()
                try:
                    child.stdin.write(line)  # type: ignore[union-attr]
                    child.stdin.flush()  # type: ignore[union-attr]
                except (BrokenPipeError, OSError):
                    break
        with contextlib.suppress(OSError):
            child.stdin.close()  # type: ignore[union-attr]

    def stop(signum: int, frame: object) -> None:  # the client's SIGTERM (or SIGKILL's herald) reaches the server
        child.send_signal(signum)

    signal.signal(signal.SIGTERM, stop)
    threading.Thread(target=copy, daemon=True).start()
    try:
        return child.wait()
    except KeyboardInterrupt:
        child.terminate()
        return child.wait()


if __name__ == "__main__":
    sys.exit(main())
