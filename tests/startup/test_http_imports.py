"""An HTTP server started by ``backchannel run --http`` serves without uvicorn or click loaded.

``run_http`` serves on our own HTTP/1.1 server (``http_host/h1/connection.py``): importing uvicorn
loaded its command line (click), its reload supervisors and file watchers, 26 ms of CPU of
every cold start (``docs/performance.md``). The server is a real process on a loopback port;
its ``loaded`` tool, called after the handshake, reports which of those it has imported.
"""

from __future__ import annotations

import sys
from pathlib import Path

import httpx2 as httpx

from _subprocesses import checkout_env
from backchannel.testing import free_port, running_process

PROGRAM = """
import sys
from backchannel.server import Server

server = Server("imports")

@server.tool()
def loaded() -> list[str]:
    heavy = ("uvicorn", "click", "watchfiles", "multiprocessing", "h11")
    return sorted(name for name in sys.modules if name.split(".")[0] in heavy)
"""

HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def test_backchannel_run_http_loads_no_uvicorn_nor_click(tmp_path: Path) -> None:
    script = tmp_path / "imports_server.py"
    script.write_text(PROGRAM)
    port = free_port()
    command = [sys.executable, "-m", "backchannel", "run", str(script), "--http", "--port", str(port)]
    with (
        running_process(command, port=port, env=checkout_env(), start_timeout=20.0),
        httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client,
    ):
        params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        opened = client.post(
            "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}, headers=HEADERS
        )
        assert opened.status_code == 200 and opened.json()["result"]["serverInfo"]["name"] == "imports"
        session = {**HEADERS, "mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
        client.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "loaded", "arguments": {}}}
        answer = client.post("/mcp", json=call, headers=session).json()["result"]
        assert answer["structuredContent"] == {"result": []}, answer
