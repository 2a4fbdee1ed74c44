"""Our protected server as a process of its own, for the terminal client's test:

    python protected_server.py ISSUER JWKS_URI [HEADERS_LOG]

serves ``scoped_server()`` (``tests/auth_server/_auth_harness.py``) on a free loopback port,
accepting the JWT access tokens of ``ISSUER``; prints its endpoint's URL on one line once it
listens, and runs until it is terminated. With ``HEADERS_LOG``, the method, path and headers of
every HTTP request it receives are appended to that file, one JSON object a line, so a test
reads what reached the server."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

_TESTS = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(_TESTS), str(_TESTS / "auth_server")]

import json  # noqa: E402
from typing import Any  # noqa: E402

import uvicorn  # noqa: E402
from _auth_harness import jwt_auth, scoped_server  # noqa: E402

issuer, jwks_uri = sys.argv[1], sys.argv[2]
sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.bind(("127.0.0.1", 0))
url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
app: Any = scoped_server().http_app("/mcp", auth=jwt_auth(issuer, jwks_uri)(url))

if len(sys.argv) > 3:
    served, log = app, Path(sys.argv[3])

    def _record(entry: dict[str, Any]) -> None:
        with log.open("a", encoding="utf-8") as file:
            file.write(json.dumps(entry) + "\n")

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":  # (a line a request, written at once: a test reads it after the call)
            headers = {name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]}
            _record({"method": scope["method"], "path": scope["path"], "headers": headers})
        await served(scope, receive, send)


runner = uvicorn.Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1))
sock.listen(128)  # connections wait in the backlog until uvicorn takes the socket over
print(url, flush=True)
runner.run(sockets=[sock])
