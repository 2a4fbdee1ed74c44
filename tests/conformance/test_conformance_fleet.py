"""The fleet ``run.py --fleet`` runs the conformance server legs against (issue #14, "Proven by"):
four ``everything_server.py --redis`` processes behind nginx round-robin, sharing one Redis.

The legs prove something only if consecutive requests of one session really land on different
workers; if the balancer kept a session on one process, every scenario would pass as it does
against one process and prove nothing. So: one handshake-era session, six requests through
nginx, and then Redis is asked how many workers hold a replica of that session (each worker
that serves one of its requests subscribes to the session's channel): all four.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import redis
from fixture_servers import FixtureFleet

HANDSHAKE = "2025-11-25"
WORKERS = 4


def _headers(session: str | None = None) -> dict[str, str]:
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    if session is not None:
        headers |= {"mcp-session-id": session, "mcp-protocol-version": HANDSHAKE}
    return headers


def _answer(response: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC answer a POST got, as JSON or as the last SSE ``data:`` line."""
    assert response.status_code == 200, response.text
    if response.headers["content-type"].startswith("application/json"):
        message: dict[str, Any] = response.json()
        return message
    data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
    message = json.loads([d for d in data if d][-1])
    return message


def test_one_session_is_served_by_every_worker_of_the_fleet(tmp_path: Path) -> None:
    with FixtureFleet(tmp_path, WORKERS) as fleet, httpx2.Client(timeout=10.0) as http:
        initialize = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
        }
        opened = http.post(fleet.url, json=initialize, headers=_headers())
        assert _answer(opened)["result"]["protocolVersion"] == HANDSHAKE
        session = opened.headers["mcp-session-id"]
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert http.post(fleet.url, json=initialized, headers=_headers(session)).status_code == 202
        for number in range(1, WORKERS + 1):
            listed = http.post(
                fleet.url, json={"jsonrpc": "2.0", "id": number, "method": "tools/list"}, headers=_headers(session)
            )
            answer = _answer(listed)
            assert answer["id"] == number
            assert "test_simple_text" in {tool["name"] for tool in answer["result"]["tools"]}

        with redis.Redis.from_url(fleet.redis_url) as shared:
            channels = shared.pubsub_channels(f"*{session}*")
            assert len(channels) == 1, channels  # the session's channel: its replicas hear each other there
            ((_, replicas),) = shared.pubsub_numsub(channels[0])
        assert replicas == WORKERS
