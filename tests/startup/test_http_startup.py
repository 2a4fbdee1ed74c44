"""``Server.run_http`` starts as ``run`` does: what exists when it serves is frozen out of the cyclic
GC (``runtime.loops.freeze_startup``), the GC is on while it serves, and the URL-elicitation pages'
HTML and a fleet's forwarding are not loaded until a flow needs them.

The collector is off while the HTTP server is imported and built (``docs/performance.md``, cold
start): the checks here are that it is on again afterwards, also when ``run_http`` refuses its
options, and that nothing was frozen then. A real process on a loopback port, over HTTP.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import httpx2 as httpx

from _subprocesses import checkout_env
from backchannel.testing import free_port, running_process

PROGRAM = """
import gc, json, sys
from backchannel.server import Server

server = Server("started")
LAZY = ("html", "backchannel.server.url_elicitation.ask", "backchannel.http_host.url_flows.fleet")

@server.tool()
def collector() -> str:
    lazy = sorted(name for name in LAZY if name in sys.modules)
    return json.dumps([gc.isenabled(), gc.get_freeze_count(), lazy])

server.run_http("127.0.0.1", int(sys.argv[1]))
"""

REFUSED = """
import gc
from backchannel.server import Server

try:
    Server("refused").run_http("127.0.0.1", 0, workers=0)
except ValueError:
    print(gc.isenabled(), gc.get_freeze_count())
"""

HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def _post(client: httpx.Client, body: dict[str, Any], session: str | None = None) -> httpx.Response:
    headers = (
        HEADERS if session is None else {**HEADERS, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
    )
    return client.post("/mcp", json=body, headers=headers)


def test_run_http_freezes_startup_and_serves_with_the_gc_on() -> None:
    port = free_port()
    command = [sys.executable, "-c", PROGRAM, str(port)]
    with (
        running_process(command, port=port, env=checkout_env(), start_timeout=20.0),
        httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client,
    ):
        params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        opened = _post(client, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
        assert opened.status_code == 200
        session = opened.headers["mcp-session-id"]
        assert _post(client, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session).status_code == 202
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "collector", "arguments": {}}}
        answer = _post(client, call, session)
        assert answer.status_code == 200
        enabled, frozen, lazy = json.loads(answer.json()["result"]["content"][0]["text"])
        assert enabled is True
        assert frozen > 10_000  # the modules, the HTTP server, the MCP server and its app
        assert lazy == []


def test_refused_options_leave_the_gc_on_and_nothing_frozen() -> None:
    done = subprocess.run(
        [sys.executable, "-c", REFUSED], capture_output=True, env=checkout_env(), timeout=30, check=True
    )
    assert done.stdout.decode().split() == ["True", "0"]
