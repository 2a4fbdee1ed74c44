"""Wire-level plumbing for the completion tests: a ``Client`` in either era talking to a
``Server`` over an in-memory pair, plus the benchmark contract's word list."""

from __future__ import annotations

__all__ = ["ERAS", "bench_words", "brute_force", "connected", "prompt_ref", "run", "template_ref"]

import contextlib
import functools
from collections.abc import AsyncIterator
from typing import Any

from backchannel import Client, Server
from backchannel import testing as kit

ERAS = ("handshake", "stateless")


run = functools.partial(kit.run, timeout=20.0)


@contextlib.asynccontextmanager
async def connected(server: Server, era: str) -> AsyncIterator[Client]:
    """The kit's ``connected`` in memory, checking the era was agreed as asked."""
    async with kit.connected(server, era) as client:  # type: ignore[arg-type]
        assert client.era == era
        yield client


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
