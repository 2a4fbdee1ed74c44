"""What the mount tests share: a gateway ``Server`` with the test upstream (``mount_upstream.py``)
mounted in this process or over stdio, the client's answers, and a bound on each test."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from backchannel import Client, Server
from backchannel.testing import Tap, connected
from mounts.mount_upstream import ERA_VERSIONS, build

ERAS = ("handshake", "stateless")
#: How the upstream is mounted: a ``Server`` of this process, or a command over stdio (a ``Proxy``).
KINDS = ("server", "command")
#: A bound on each test's whole run (a hang fails the test, not the suite).
BOUND = 90.0
UPSTREAM = Path(__file__).with_name("mount_upstream.py")


def upstream_command(versions: str = "all") -> list[str]:
    return [sys.executable, str(UPSTREAM), "--versions", versions]


def person(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Ada", "happy": True}}


def bounded(test: Callable[..., Awaitable[None]]) -> Callable[..., None]:
    """The async test ``test`` as a plain one, in a loop of its own, within ``BOUND`` seconds."""

    @functools.wraps(test)
    def running(*args: Any, **kwargs: Any) -> None:
        asyncio.run(asyncio.wait_for(test(*args, **kwargs), BOUND))

    return running


def mount_upstream(gateway: Server, kind: str, prefix: str = "ev", versions: str = "all", **options: Any) -> Server:
    """Mount the test upstream on ``gateway`` under ``prefix``: in this process or as a command."""
    if kind == "server":
        return gateway.mount(prefix, build(tuple(ERA_VERSIONS[versions])), **options)
    return gateway.mount(prefix, command=upstream_command(versions), **options)


async def close_mounts(gateway: Server) -> None:
    """Stop the upstream processes of ``gateway``'s command mounts."""
    for mount in gateway.mounts:
        upstream = getattr(mount.server, "upstream", None)
        if upstream is not None:
            await upstream.aclose()


@contextlib.asynccontextmanager
async def client_of(gateway: Server, era: str, **options: Any) -> AsyncIterator[tuple[Client, Tap]]:
    """A client of era ``era`` connected to ``gateway`` (a ``Tap`` on the client's transport);
    the gateway's command mounts are stopped afterwards."""
    tap = Tap()
    options.setdefault("elicitation", person)
    try:
        async with connected(gateway, era, wrap_client=tap.around, **options) as client:
            assert client.era == era
            yield client, tap
    finally:
        await close_mounts(gateway)


def text(result: Any) -> str:
    return str(result.content[0].text)


def answers_to(tap: Tap, method: str) -> list[dict[str, Any]]:
    """The results the client read for its requests of ``method``, in order."""
    ids = [message["id"] for message in tap.written if message.get("method") == method and "id" in message]
    return [m["result"] for m in tap.received if m.get("id") in ids and "method" not in m and "result" in m]
