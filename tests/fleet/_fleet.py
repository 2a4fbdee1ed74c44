"""A fleet for tests: several workers (each its own ``Server`` and app) behind a round-robin
dispatcher, as a load balancer that sends every request to the next worker."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from backchannel import Context, Server


class RoundRobin:
    """An ASGI app that hands each HTTP request to the next of ``apps``; ``served`` logs which."""

    def __init__(self, apps: list[Any], serve: list[Any] | None = None) -> None:
        self.apps = apps
        #: What each request is handed to: the apps themselves, or what mounts them.
        self.serve = serve if serve is not None else apps
        self.turn = 0
        self.served: list[tuple[int, str, bytes]] = []  # (worker, HTTP method, the body's first chunk)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        index = self.turn % len(self.apps)
        self.turn += 1
        entry = len(self.served)
        self.served.append((index, scope["method"], b""))

        async def recording() -> Any:
            message = await receive()
            if message.get("body") and not self.served[entry][2]:
                self.served[entry] = (index, scope["method"], message["body"])
            return message

        await self.serve[index](scope, recording, send)

    def answers_forwarded(self) -> tuple[int, int]:
        """(answers to our requests POSTed, how many of them reached a worker other than the asker)."""
        total = crossed = 0
        for index, _, body in self.served:
            if b'"result"' in body and b'"method"' not in body and body.count(b":") > 1:
                message = json.loads(body)
                if isinstance(message.get("id"), str) and ":" in message["id"]:
                    total += 1
                    crossed += message["id"].split(":")[0] != self.apps[index].state.worker_id
        return total, crossed

    async def _lifespan(self, receive: Any, send: Any) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                for app in self.apps:
                    await app.join_fleet()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                for app in self.apps:
                    await app.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return


class Worker:
    """What one worker's tools saw: which worker ran what."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.ran: list[str] = []
        self.cancelled = asyncio.Event()


def fleet_server(worker: Worker, **options: Any) -> Server:
    """The same server on every worker (as the same code is deployed on each)."""
    server = Server("fleet", **options)

    @server.tool()
    async def ask(ctx: Context) -> str:
        worker.ran.append("ask")
        answer = await ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
        return f"{answer.action}:{(answer.data or {}).get('name', '')}@{worker.name}"

    @server.tool()
    async def count(to: int, ctx: Context) -> str:
        worker.ran.append("count")
        for step in range(1, to + 1):
            await ctx.report_progress(step, to, f"step {step}")
            await asyncio.sleep(0)
        return f"counted {to}@{worker.name}"

    @server.tool()
    async def wait(ctx: Context) -> str:
        worker.ran.append("wait")
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            worker.cancelled.set()
            raise
        return "waited"

    @server.tool()
    async def deploy(target: str, ctx: Context) -> str:
        """Asks (a form, across rounds in the stateless era), then does its work exactly once."""
        answer = await ctx.elicit(f"Deploy {target}?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})

        async def work() -> str:
            worker.ran.append(f"deploy {target}")
            return f"deployed {target}@{worker.name}"

        if answer.action != "accept":
            return answer.action
        return await ctx.once("deploy", work)

    @server.tool()
    def add_tool(name: str) -> str:
        server.add_tool(lambda: name, name=name)
        return f"added {name}@{worker.name}"

    @server.tool()
    async def where(ctx: Context) -> str:
        """The client's roots as this worker sees them (the session's cache, or asked)."""
        roots = await ctx.list_roots()
        return ",".join(item.name or item.uri for item in roots)

    @server.tool()
    async def say(text: str, ctx: Context) -> str:
        await ctx.debug(f"debug: {text}")
        await ctx.info(f"info: {text}")
        return worker.name

    return server


Factory = Callable[[Worker], Server]
