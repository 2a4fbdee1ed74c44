"""``server.http_app(redis=URL)``: the ASGI app takes the option ``run_http`` takes. Two apps
mounted under Starlette, each its own worker sharing one Redis, serve one session as one server."""

from __future__ import annotations

from typing import Any

from _fleet import RoundRobin, Worker, fleet_server
from starlette.applications import Starlette
from starlette.routing import Mount

from _services import RedisServer
from backchannel import Client
from backchannel.state.redis import RedisState
from backchannel.testing import run, serve_on_loopback


def test_mounted_apps_with_redis_share_sessions(fleet_redis: RedisServer) -> None:
    async def body() -> None:
        workers = [Worker("w0"), Worker("w1")]
        servers = [fleet_server(worker) for worker in workers]
        apps = [server.http_app(redis=fleet_redis.url) for server in servers]
        assert all(isinstance(server.state, RedisState) for server in servers)
        mounted = [Starlette(routes=[Mount("/tools", app=app)], lifespan=None) for app in apps]
        balancer = RoundRobin(apps, serve=mounted)  # requests go through Starlette's Mount

        def person(params: dict[str, Any]) -> dict[str, Any]:
            return {"action": "accept", "content": {"name": "ada"}}

        async with (
            serve_on_loopback(balancer) as base,
            Client.http(base + "/tools/mcp", era="handshake", elicitation=person) as client,
        ):
            for _ in range(2):
                result = await client.call_tool("ask", {})
                assert result.content[0].text.startswith("accept:ada@")  # type: ignore[union-attr]
        assert balancer.answers_forwarded()[1] >= 1  # an answer crossed from one worker to the other

    run(body)
