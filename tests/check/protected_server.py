"""A protected server for ``backchannel check``'s authorization checks, as a process of its own:

    python protected_server.py [--lax]

serves one tool on a free loopback port behind ``ResourceAuth`` with a fixed table of three
tokens (``StaticTokens``): ``good-token`` (for this server, scope ``mcp``), ``foreign-token``
(for ``https://elsewhere.example/mcp``) and ``weak-token`` (for this server, no scope); ``mcp``
is required. ``--lax`` accepts the other resource's tokens and requires no scope: the audience
and scope checks must fail it. Prints its endpoint's URL on one line once it listens."""

from __future__ import annotations

import socket
import sys

import uvicorn

from backchannel import Server
from backchannel.auth import Principal, ResourceAuth, StaticTokens

ISSUER = "https://issuer.test"
ELSEWHERE = "https://elsewhere.example/mcp"

lax = "--lax" in sys.argv[1:]
sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.bind(("127.0.0.1", 0))
url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
server = Server("protected-for-check", "1.0")


@server.tool()
def hello() -> str:
    return "hello"


tokens = StaticTokens(
    {
        "good-token": Principal(ISSUER, "alice", "app", frozenset({"mcp"}), (url,)),
        "foreign-token": Principal(ISSUER, "alice", "app", frozenset({"mcp"}), (ELSEWHERE,)),
        "weak-token": Principal(ISSUER, "alice", "app", frozenset(), (url,)),
    }
)
auth = ResourceAuth(url, ISSUER, tokens, scopes_required=() if lax else ("mcp",), audience=(ELSEWHERE,) if lax else ())
runner = uvicorn.Server(uvicorn.Config(server.http_app("/mcp", auth=auth), log_level="warning"))
sock.listen(128)
print(url, flush=True)
runner.run(sockets=[sock])
