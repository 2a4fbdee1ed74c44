"""Our conformance "everything" server (``tests/conformance/everything_server.py``) over stdio,
for ``backchannel check -- python tests/check/everything_stdio.py``: both eras, one process."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conformance"))

from everything_server import build_server

if __name__ == "__main__":
    build_server().run()
