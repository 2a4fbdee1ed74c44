"""Our protected server as a process of its own, for the terminal client's test:

    python protected_server.py ISSUER JWKS_URI

serves ``scoped_server()`` (``tests/auth_server/_auth_harness.py``) on a free loopback port,
accepting the JWT access tokens of ``ISSUER``; prints its endpoint's URL on one line once it
listens, and runs until it is terminated."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

_TESTS = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(_TESTS), str(_TESTS / "auth_server")]

import uvicorn  # noqa: E402
from _auth_harness import jwt_auth, scoped_server  # noqa: E402

issuer, jwks_uri = sys.argv[1], sys.argv[2]
sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.bind(("127.0.0.1", 0))
url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
app = scoped_server().http_app("/mcp", auth=jwt_auth(issuer, jwks_uri)(url))
runner = uvicorn.Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1))
sock.listen(128)  # connections wait in the backlog until uvicorn takes the socket over
print(url, flush=True)
runner.run(sockets=[sock])
