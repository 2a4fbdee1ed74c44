"""Hosting the endpoint: mounted inside Starlette, and alone under uvicorn via ``backchannel run --http``
(loopback only unless told otherwise)."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from _http_harness import (
    asgi_client,
    assert_jsonrpc_error,
    call,
    initialize_body,
    legacy_headers,
    live,
    make_server,
    open_session,
    run,
)
from starlette.applications import Starlette
from starlette.routing import Mount

from backchannel.types.errors import INVALID_REQUEST

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "demo_server.py"


def test_mounted_in_starlette_serves_at_the_mount_path() -> None:
    async def body() -> None:
        mcp = make_server().http_app(path="/mcp")
        outer = Starlette(routes=[Mount("/api", app=mcp)])
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=outer), base_url="http://127.0.0.1") as client:
            try:
                session_id = await open_session(client, path="/api/mcp")
                answer = await client.post(
                    "/api/mcp", json=call("echo", {"text": "mounted"}), headers=legacy_headers(session_id)
                )
                assert answer.status_code == 200
                assert answer.json()["result"]["content"][0]["text"] == "mounted"
                for elsewhere in ("/api/other", "/api/api/mcp", "/api/"):
                    response = await client.post(elsewhere, json=initialize_body(), headers=legacy_headers())
                    assert_jsonrpc_error(response, 404, INVALID_REQUEST)
            finally:
                await mcp.aclose()

    run(body)


def test_mounted_at_the_endpoint_itself() -> None:
    async def body() -> None:
        mcp = make_server().http_app(path="/mcp")
        outer = Starlette(routes=[Mount("/tenant/mcp", app=mcp)])
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=outer), base_url="http://127.0.0.1") as client:
            try:
                # Starlette matches a Mount only below its path, so the client uses the trailing slash.
                assert await open_session(client, path="/tenant/mcp/")
            finally:
                await mcp.aclose()

    run(body)


def test_trailing_slash_reaches_the_endpoint_and_other_paths_are_404() -> None:
    async def body() -> None:
        async with asgi_client(make_server().http_app()) as client:
            assert (await client.post("/mcp/", json=initialize_body(), headers=legacy_headers())).status_code == 200
            for path in ("/", "/mcpx", "/other/mcp"):
                response = await client.post(path, json=initialize_body(), headers=legacy_headers())
                assert_jsonrpc_error(response, 404, INVALID_REQUEST)

    run(body)


def test_uvicorn_lifespan_shutdown_ends_every_session() -> None:
    async def body() -> None:
        app = make_server().http_app()
        async with live(app) as server, server.client() as client:
            await open_session(client)
            await open_session(client)
            assert len(app.sessions.sessions) == 2
        assert not app.sessions.sessions

    run(body)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def _backchannel_run(*args: str) -> Iterator[subprocess.Popen[bytes]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    command = [sys.executable, "-m", "backchannel", "run", *args]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


def _wait_for_listener(port: int, process: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"backchannel run exited: {process.stderr.read().decode() if process.stderr else ''}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return
        time.sleep(0.05)
    pytest.fail("backchannel run --http did not start listening")


def _other_local_address() -> str | None:
    """A non-loopback address of this machine, if it has one."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("10.255.255.255", 1))  # no packet is sent; this only picks a route
        address = str(probe.getsockname()[0])
        return None if address.startswith("127.") or address == "0.0.0.0" else address
    return None


def test_backchannel_run_http_listens_on_loopback_only() -> None:
    port = _free_port()
    with _backchannel_run(str(DEMO), "--http", "--port", str(port)) as process:
        _wait_for_listener(port, process)
        if shutil.which("ss"):
            listening = subprocess.run(["ss", "-ltnH"], capture_output=True, text=True, timeout=5).stdout
            local = [line.split()[3] for line in listening.splitlines() if line.split()[3].endswith(f":{port}")]
            assert local == [f"127.0.0.1:{port}"], local
        other = _other_local_address()
        if other is not None:
            with pytest.raises(OSError), socket.create_connection((other, port), timeout=0.5):
                pass
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=5) as client:
            response = client.post("/mcp", json=initialize_body(), headers=legacy_headers())
            assert response.status_code == 200
            assert response.json()["result"]["serverInfo"]["name"] == "demo"
            session_id = response.headers["mcp-session-id"]
            answer = client.post("/mcp", json=call("add", {"a": 2, "b": 3}), headers=legacy_headers(session_id))
            assert answer.json()["result"]["structuredContent"] == {"result": 5}
