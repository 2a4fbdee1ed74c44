"""A session's record is written when what the server keeps for it changes, not because another
worker took the session up (#14): Redis counts the writes (``EVALSHA`` of the record) and the
announcements (``PUBLISH``) while each worker serves a request of a session neither changes."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import redis
from _fleet import RoundRobin, Worker, fleet_server

from _services import RedisServer
from backchannel.state.redis import RedisState
from backchannel.testing import run, serve_on_loopback

HANDSHAKE = "2025-11-25"


async def _post(http: httpx2.AsyncClient, url: str, session: str | None, message: dict[str, Any]) -> httpx2.Response:
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    if session is not None:
        headers |= {"mcp-session-id": session, "mcp-protocol-version": HANDSHAKE}
    return await http.post(url, content=json.dumps(message), headers=headers)


def _messages(response: httpx2.Response) -> list[dict[str, Any]]:
    if response.headers["content-type"].startswith("application/json"):
        return [response.json()]
    return [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: ") and line[6:]]


def _counts(client: redis.Redis) -> tuple[int, int]:
    stats: dict[str, Any] = client.info("commandstats")  # type: ignore[assignment]
    return stats.get("cmdstat_evalsha", {}).get("calls", 0), stats.get("cmdstat_publish", {}).get("calls", 0)


def test_a_worker_that_took_a_session_up_does_not_write_its_record_again(fleet_redis: RedisServer) -> None:
    with redis.Redis.from_url(fleet_redis.url) as probe:
        probe.flushall()

        async def body() -> None:
            apps = [fleet_server(Worker(f"w{i}"), state=RedisState(fleet_redis.url)).http_app() for i in range(2)]
            balancer = RoundRobin(apps)
            async with serve_on_loopback(balancer) as base, httpx2.AsyncClient(timeout=10) as http:
                url = base + "/mcp"
                init = {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "t"}},
                }
                session = (await _post(http, url, None, init)).headers["mcp-session-id"]  # w0 writes the record
                await _post(http, url, session, {"jsonrpc": "2.0", "method": "notifications/initialized"})  # w1
                before = _counts(probe)
                for number in (1, 2):  # w0, then w1: the first request w1 serves to its end
                    call = {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": {"name": "say"}}
                    call["params"]["arguments"] = {"text": "hi"}
                    response = await _post(http, url, session, call)
                    (answer,) = [m for m in _messages(response) if "result" in m]
                    assert answer["result"]["content"][0]["text"] == f"w{number - 1}"
                assert [index for index, _, _ in balancer.served] == [0, 1, 0, 1]
                assert _counts(probe) == before  # no record written, nothing announced

        run(body)
