"""What the client's cache saves: ``tools/list`` one hundred times, with and without it.

    python benchmarks/client_cache.py [--reps N]

backchannel's client against backchannel's contract server (``contract_server.py``), in the
stateless era (2026-07-28: the server sends ``ttlMs`` 60000 with each list), over stdio and over
Streamable HTTP on 127.0.0.1. One run is: connect, then ``client.list_tools()`` one hundred times
in a row; ``Client(cache=None)`` turns the cache off. Each run counts the ``tools/list`` requests
that left the client (the first list of a cached run goes out, the other 99 do not) and times the
hundred lists, not the connection. The table is the median over ``--reps`` runs, alternating
cached and uncached; as with every number here, on a shared 2-core machine read the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from backchannel import Client
from backchannel.testing import Tap, free_port, running_process
from backchannel.transports.base import Transport
from backchannel.transports.http.client import HttpClientTransport
from backchannel.transports.stdio import StdioClientTransport

HERE = Path(__file__).resolve().parent
SERVER = str(HERE / "contract_server.py")
LISTS = 100


async def one_run(transport: str, url: str | None, cached: bool) -> tuple[float, int]:
    """Seconds for ``LISTS`` lists, and how many ``tools/list`` requests were sent."""
    options: dict[str, Any] = {"era": "stateless", "probe_timeout": 30.0}
    if not cached:
        options["cache"] = None
    if transport == "stdio":
        inner: Transport = StdioClientTransport(sys.executable, [SERVER, "stdio"])
    else:
        assert url is not None
        inner = HttpClientTransport(url)
    tap = Tap(inner)  # counts what the client writes
    client = Client(tap, **options)
    async with client:
        started = time.perf_counter()
        for _ in range(LISTS):
            tools = await client.list_tools()
            assert [tool.name for tool in tools][:1] == ["echo"], tools
        seconds = time.perf_counter() - started
    return seconds, len(tap.requests_written("tools/list"))


async def measure(reps: int) -> dict[tuple[str, bool], list[tuple[float, int]]]:
    results: dict[tuple[str, bool], list[tuple[float, int]]] = {}
    port = free_port()
    env = {**os.environ, "PORT": str(port)}
    with running_process([sys.executable, SERVER, "http"], port=port, env=env):
        url = f"http://127.0.0.1:{port}/mcp"
        for rep in range(reps):
            for transport in ("stdio", "http"):
                for cached in (rep % 2 == 0, rep % 2 == 1):  # alternate which goes first
                    outcome = await one_run(transport, url if transport == "http" else None, cached)
                    results.setdefault((transport, cached), []).append(outcome)
    return results


def table(results: dict[tuple[str, bool], list[tuple[float, int]]], reps: int) -> str:
    lines = [
        f"`tools/list` {LISTS} times in a row (median of {reps} runs; backchannel client and contract server, "
        "stateless era, `ttlMs` 60000)",
        "",
        "| transport | without the cache | with the cache | requests sent (without / with) | ratio |",
        "|---|---|---|---|---|",
    ]
    for transport in ("stdio", "http"):
        plain = statistics.median(seconds for seconds, _ in results[(transport, False)])
        cached = statistics.median(seconds for seconds, _ in results[(transport, True)])
        sent = (results[(transport, False)][0][1], results[(transport, True)][0][1])
        lines.append(
            f"| {transport} | {plain * 1000:.1f} ms | {cached * 1000:.1f} ms | {sent[0]} / {sent[1]} "
            f"| {plain / cached:.0f}x faster |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    results = asyncio.run(measure(args.reps))
    for (transport, cached), outcomes in results.items():
        expected = 1 if cached else LISTS
        wrong = [sent for _, sent in outcomes if sent != expected]
        if wrong:
            state = "with" if cached else "without"
            raise SystemExit(f"{transport} {state} the cache sent {wrong} lists, not {expected}")
    print(table(results, args.reps))


if __name__ == "__main__":
    main()
