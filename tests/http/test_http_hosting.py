"""Hosting the endpoint: mounted inside Starlette or under uvicorn, and alone on ``run_http``'s own
server via ``backchannel run --http`` (loopback only unless told otherwise; a taken port is exit
status 3; SIGTERM lets the request under way finish, and the process exits 0)."""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import httpx2 as httpx
import pytest
from _http_harness import (
    asgi_client,
    assert_jsonrpc_error,
    call,
    initialize_body,
    legacy_headers,
    live,
    make_server,
    messages_of,
    open_session,
    run,
)
from starlette.applications import Starlette
from starlette.routing import Mount

from _subprocesses import checkout_env, other_local_address
from backchannel.testing import free_port, running_process, wait_for_port
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


def test_backchannel_run_http_listens_on_loopback_only() -> None:
    port = free_port()
    command = [sys.executable, "-m", "backchannel", "run", str(DEMO), "--http", "--port", str(port)]
    with running_process(command, port=port, env=checkout_env(), cwd=ROOT, start_timeout=10.0):
        if shutil.which("ss"):
            listening = subprocess.run(["ss", "-ltnH"], capture_output=True, text=True, timeout=5).stdout
            local = [line.split()[3] for line in listening.splitlines() if line.split()[3].endswith(f":{port}")]
            assert local == [f"127.0.0.1:{port}"], local
        other = other_local_address()
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


def test_backchannel_run_http_on_a_taken_port_exits_3_naming_the_address() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        command = [sys.executable, "-m", "backchannel", "run", str(DEMO), "--http", "--port", str(port)]
        done = subprocess.run(command, capture_output=True, text=True, env=checkout_env(), cwd=ROOT, timeout=30)
    assert done.returncode == 3, done.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr


def test_sigterm_lets_the_call_under_way_finish_and_run_http_returns(tmp_path: Path) -> None:
    started = tmp_path / "started"
    script = tmp_path / "serve.py"
    script.write_text(
        textwrap.dedent(f"""
            import asyncio, pathlib
            from backchannel import Server
            server = Server("stopping", "1.0")

            @server.tool()
            async def slow() -> str:
                pathlib.Path({str(started)!r}).touch()
                await asyncio.sleep(0.5)
                return "finished"

            server.run_http(port=int(__import__("sys").argv[1]))
            print("run_http returned")
        """)
    )
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(script), str(port)], env=checkout_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        wait_for_port(port, process, timeout=20.0)
        answers: list[httpx.Response] = []
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            session_id = client.post("/mcp", json=initialize_body(), headers=legacy_headers()).headers["mcp-session-id"]
            calling = threading.Thread(
                target=lambda: answers.append(
                    client.post("/mcp", json=call("slow"), headers=legacy_headers(session_id))
                )
            )
            calling.start()
            while not started.exists():
                calling.join(0.01)  # the tool has begun: then the stop comes
            process.send_signal(signal.SIGTERM)
            calling.join(10)
        out, _ = process.communicate(timeout=15)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    [answer] = answers
    assert answer.status_code == 200
    [result] = [message["result"] for message in messages_of(answer.content) if message.get("id") == 1]
    assert result["content"][0]["text"] == "finished"
    assert process.returncode == 0 and out.decode().strip() == "run_http returned"
