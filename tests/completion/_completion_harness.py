"""Wire-level plumbing for the completion tests: a ``Client`` in either era talking to a
``Server`` over an in-memory pair, plus the benchmark contract's word list."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator
from typing import Any, TypeVar

from backchannel import Client, Server
from backchannel.testing import run as kit_run
from backchannel.transports.memory import memory_pair

T = TypeVar("T")
ERAS = ("legacy", "modern")


run = functools.partial(kit_run, timeout=20.0)


@contextlib.asynccontextmanager
async def connected(server: Server, era: str) -> AsyncIterator[Client]:
    """A ``Client`` in ``era`` ("legacy" or "modern") connected to ``server``."""
    client_side, server_side = memory_pair()
    serving = asyncio.create_task(server.serve(server_side))
    try:
        async with Client(client_side, era=era) as client:  # type: ignore[arg-type]
            assert client.era == era
            yield client
    finally:
        await server_side.close()
        await serving


def prompt_ref(name: str) -> dict[str, Any]:
    return {"type": "ref/prompt", "name": name}


def template_ref(uri: str) -> dict[str, Any]:
    return {"type": "ref/resource", "uri": uri}


def bench_words() -> list[str]:
    """The benchmark contract's list (``/work/shared/bench/CONTRACT.md``): 10,000 words, fixed order."""
    return ["".join("abcdefghij"[int(c)] for c in f"{i:04d}") for i in range(10000)]


def brute_force(words: list[str], prefix: str, limit: int = 100) -> dict[str, Any]:
    """The contract's answer computed the slow way: first ≤100 matches in list order, total, hasMore."""
    matches = [word for word in words if word.startswith(prefix)]
    values = matches[:limit]
    return {"values": values, "total": len(matches), "hasMore": len(matches) > len(values)}
