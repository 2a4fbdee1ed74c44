"""An in-process fleet for the tasks tests: one ASGI app in front of several workers' apps that
hands each request to the worker its ``x-worker`` header names (the next in turn without one),
so a test says which worker serves what instead of hoping a balancer spreads it."""

from __future__ import annotations

from typing import Any


class Pick:
    """Dispatches to ``apps`` (each a worker's ``HttpApp``); ``served`` lists who served each request."""

    def __init__(self, apps: list[Any]) -> None:
        self.apps = apps
        self.turn = 0
        self.served: list[int] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        named = dict(scope.get("headers", ())).get(b"x-worker")
        if named is None:
            index = self.turn % len(self.apps)
            self.turn += 1
        else:
            index = int(named)
        self.served.append(index)
        await self.apps[index](scope, receive, send)

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


def on(worker: int) -> dict[str, str]:
    """The header that sends a request to ``worker``: ``client.call(..., **on(1))``."""
    return {"x-worker": str(worker)}
