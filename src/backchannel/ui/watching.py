"""``watch <uri>`` in the terminal client: a resource's changes, shown as they come.

``watch <uri>`` subscribes (``client.listen``: ``subscriptions/listen`` in the stateless era,
``resources/subscribe`` in the handshake era) and returns to the prompt; each change then
prints above it, followed by what the resource holds now. ``watch`` alone lists the watched
resources, ``unwatch <uri>`` stops one. A server that offers no subscriptions is said so at once.
"""

from __future__ import annotations

__all__ = ["Watches"]

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from ..client.events import Resubscribed
from ..client.listening import Listening
from ..types.errors import ConnectionClosed, MCPError
from .commands import Command, CommandError
from .render import Renderer

if TYPE_CHECKING:
    from ..client.client import Client


class Watches:
    """The resources one terminal session watches, each followed by a task of its own."""

    def __init__(
        self,
        console: Console,
        renderer: Renderer,
        client: Callable[[], Client],
        out_of_band: Callable[[Callable[[], None]], None],
    ) -> None:
        self.console = console
        self.renderer = renderer
        self._client = client
        self._out_of_band = out_of_band
        self._watching: dict[str, tuple[Listening, asyncio.Task[None]]] = {}

    async def command(self, command: Command) -> None:
        """``watch <uri>``, ``watch`` or ``unwatch <uri>``."""
        uri = command.target
        if command.name == "unwatch":
            await self.stop(uri)
        elif not uri:
            self.show()
        else:
            await self.start(uri)

    def show(self) -> None:
        if not self._watching:
            self.console.print("[dim]No resources are watched (watch <uri> starts).[/]")
        for uri in self._watching:
            self.console.print(escape(uri), soft_wrap=True)

    async def start(self, uri: str) -> None:
        if uri in self._watching:
            raise CommandError(f"{uri} is watched already")
        client = self._client()
        listening = client.listen(uri)
        await listening.start()
        if uri not in (listening.acknowledged or {}).get("resourceSubscriptions", ()):
            await listening.aclose()
            raise CommandError(f"the server offers no subscriptions to its resources: {uri} cannot be watched")
        task = asyncio.get_running_loop().create_task(self._follow(client, uri, listening))
        self._watching[uri] = (listening, task)
        self.console.print(
            f"Watching {escape(uri)}: each change is shown as it comes (unwatch {escape(uri)} stops).", soft_wrap=True
        )

    async def stop(self, uri: str) -> None:
        watched = self._watching.pop(uri, None)
        if watched is None:
            raise CommandError(f"{uri} is not watched (see: watch)")
        listening, task = watched
        await listening.aclose()
        task.cancel()
        self.console.print(f"Stopped watching {escape(uri)}.", soft_wrap=True)

    async def _follow(self, client: Client, uri: str, listening: Listening) -> None:
        try:
            async for event in listening:
                if isinstance(event, Resubscribed):
                    self._say(f"[yellow]The stream broke and was opened again: {escape(uri)} is read anew.[/]")
                else:
                    self._say(f"[bold]{escape(uri)} changed.[/]")
                await self._show(client, uri)
        except ConnectionClosed:
            pass  # the session itself says the connection ended
        except MCPError as exc:
            self._say(f"[red]Watching {escape(uri)} ended: {escape(str(exc))}[/]")
        if self._watching.get(uri, (None,))[0] is listening:  # not a later ``watch`` of the same URI
            del self._watching[uri]

    async def _show(self, client: Client, uri: str) -> None:
        try:
            result = await client.read_resource(uri)
        except MCPError as exc:
            if isinstance(exc, ConnectionClosed):
                raise
            self._say(f"[red]Reading {escape(uri)} failed: {escape(str(exc))}[/]")
            return
        self._out_of_band(lambda: self.renderer.resource_result(uri, result))

    def _say(self, markup: str) -> None:
        self._out_of_band(lambda: self.console.print(markup, soft_wrap=True))
