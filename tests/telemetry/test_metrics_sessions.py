"""Session metrics (docs/observability.md, "Metrics"): the conventions' ``mcp.server.session.duration``
(and ``mcp.client.session.duration``, the client's view) and our ``backchannel.server.sessions.active``,
for a handshake-era HTTP session (opened by ``initialize``, ended by the client's DELETE or the idle
timeout), a 2024-11-05 HTTP+SSE session (its stream's lifetime) and a stdio server process. A
stateless-era HTTP request is no session: nothing is recorded for it.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import httpx2
from _metrics_read import Readings
from _otel import Otel

from backchannel import Client, Server
from backchannel.telemetry.metrics import ACTIVE_SESSIONS, CLIENT_SESSION_DURATION, SERVER_SESSION_DURATION
from backchannel.testing import connected, run, serve_on_loopback
from backchannel.transports.stdio import StdioClientTransport


def echo_server() -> Server:
    server = Server("echo")

    @server.tool()
    def echo(text: str) -> str:
        return text

    return server


def active(readings: Readings) -> float:
    """The server's open sessions over TCP now (cumulative; 0 before the first one)."""
    return readings.latest(ACTIVE_SESSIONS, network__transport="tcp") or 0


def test_an_http_session_is_counted_while_open_and_timed_when_the_client_ends_it(otel: Otel) -> None:
    async def body() -> None:
        readings = Readings(otel)
        before = active(readings.read())
        async with connected(echo_server(), "handshake", "asgi") as client:
            await client.call_tool("echo", {"text": "hi"})
            assert active(readings.read()) == before + 1
            version = client.protocol_version
        await readings.wait(lambda found: bool(found.of(SERVER_SESSION_DURATION)))
        assert active(readings.read()) == before
        (timed,) = readings.of(SERVER_SESSION_DURATION)
        assert timed.count == 1
        assert dict(timed.attributes) == {
            "network.transport": "tcp",
            "network.protocol.name": "http",
            "network.protocol.version": "1.1",
            "mcp.protocol.version": version,
        }  # no session id, no client address: one time series per kind of session, not per session
        (seen,) = readings.of(CLIENT_SESSION_DURATION)  # the client's view of the same session
        assert seen.count == 1 and seen.attributes["mcp.protocol.version"] == version
        assert "mcp.session.id" not in seen.attributes

    run(body)


def test_an_idle_session_ended_by_the_server_has_error_type_timeout(otel: Otel) -> None:
    version = "2025-11-25"
    headers = {"accept": "application/json, text/event-stream", "mcp-protocol-version": version}
    initialize = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}

    async def body() -> None:
        readings = Readings(otel).read()
        app = echo_server().http_app(session_idle_timeout=60.0)
        transport = httpx2.ASGITransport(app=app)
        try:
            async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
                opened = await http.post(
                    "/mcp",
                    json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize},
                    headers=headers,
                )
                session = {**headers, "mcp-session-id": opened.headers["mcp-session-id"]}
                done = await http.post(
                    "/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session
                )
                assert done.status_code == 202
                assert await app.sessions.end_idle(time.monotonic() + 61.0) == 1  # the reaper's question, a minute on
        finally:
            await app.aclose()
        (timed,) = readings.read().of(SERVER_SESSION_DURATION)
        assert timed.attributes["error.type"] == "timeout"
        assert timed.attributes["mcp.protocol.version"] == version

    run(body)


def test_a_stateless_era_request_is_no_session(otel: Otel) -> None:
    async def body() -> None:
        readings = Readings(otel)
        before = active(readings.read())
        async with connected(echo_server(), "stateless", "asgi") as client:
            await client.call_tool("echo", {"text": "hi"})
            assert active(readings.read()) == before
        assert not readings.read().of(SERVER_SESSION_DURATION)

    run(body)


def test_a_2024_11_05_sse_session_is_timed_from_its_stream_to_its_end(otel: Otel) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "legacy_sse"))  # the old transport's raw client
    from _old_wire import old_wire

    async def body() -> None:
        readings = Readings(otel)
        before = active(readings.read())
        async with serve_on_loopback(echo_server().http_app(legacy_sse=True)) as base:
            async with old_wire(base) as wire:
                await wire.start("2024-11-05")
                assert active(readings.read()) == before + 1
            await readings.wait(lambda found: bool(found.of(SERVER_SESSION_DURATION)))
        assert active(readings.read()) == before
        (timed,) = readings.of(SERVER_SESSION_DURATION)
        assert timed.attributes["mcp.protocol.version"] == "2024-11-05"
        assert timed.attributes["network.transport"] == "tcp"

    run(body)


STDIO_SERVER = textwrap.dedent(
    """
    import asyncio, json, sys
    from opentelemetry import metrics
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from backchannel import Server
    from backchannel.server.hosting import serve_stdio

    reader = InMemoryMetricReader()
    metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
    server = Server("echo")

    @server.tool()
    def echo(text: str) -> str:
        return text

    asyncio.run(serve_stdio(server, None))
    found = []
    for resource in reader.get_metrics_data().resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    found.append({"name": metric.name, "attributes": dict(point.attributes),
                                  "value": getattr(point, "value", None), "count": getattr(point, "count", None)})
    with open(sys.argv[1], "w") as out:
        json.dump(found, out)
    """
)


def test_a_stdio_server_process_times_its_one_session(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(STDIO_SERVER)
    found_file = tmp_path / "metrics.json"
    source = str(Path(__file__).resolve().parents[2] / "src")
    env = {"PYTHONPATH": source + os.pathsep + os.environ.get("PYTHONPATH", "")}

    async def body() -> None:
        transport = StdioClientTransport(sys.executable, [str(script), str(found_file)], env=env)
        async with Client(transport, era="handshake") as client:
            await client.call_tool("echo", {"text": "hi"})
        assert transport.process is not None
        await transport.process.wait()

    run(body, timeout=30.0)
    found: list[dict[str, Any]] = json.loads(found_file.read_text())
    (timed,) = [point for point in found if point["name"] == SERVER_SESSION_DURATION]
    assert timed["count"] == 1 and timed["attributes"] == {"network.transport": "pipe"}
    (open_now,) = [point for point in found if point["name"] == ACTIVE_SESSIONS]
    assert open_now["value"] == 0 and open_now["attributes"] == {"network.transport": "pipe"}  # one up, one down
