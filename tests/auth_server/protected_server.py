"""A protected server run as its own process by ``test_processes.py``:

    python protected_server.py PORT REDIS_URL '<{"token": ..., "jkt": ...}>'

``server.run_http(port=PORT, redis=REDIS_URL, auth=ResourceAuth(...))``: one worker of a fleet
sharing that Redis, accepting one DPoP-bound token (a fixed table: ``StaticTokens``)."""

from __future__ import annotations

import json
import os
import sys

from backchannel import Context, Server
from backchannel.auth import Dpop, Principal, ResourceAuth, StaticTokens

port, redis_url, given = int(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
resource = f"http://127.0.0.1:{port}/mcp"
server = Server("protected-worker")


@server.tool()
def whoami(ctx: Context) -> str:
    return f"{ctx.principal}@{os.getpid()}"


issuer = "https://issuer.test"
# Every worker is its own resource URL here (no balancer in front): each accepts the token for any of them.
principal = Principal(issuer, "carol", "app", frozenset({"mcp"}), tuple(given["audiences"]), jkt=given["jkt"])
auth = ResourceAuth(
    resource, issuer, StaticTokens({given["token"]: principal}), dpop=Dpop(), audience=given["audiences"]
)
server.run_http(port=port, redis=redis_url, auth=auth)
