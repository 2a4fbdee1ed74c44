"""A backchannel server for the progress, log-level and era-detection process tests.

    python tests/progress/_progress_server.py [--http PORT] [--legacy-sse]
                                              [--startup-delay S] [--stateless-only]

Tools: ``steps(count, delay=0)`` reports progress 1..count of ``count`` (``delay`` seconds
apart; 0 means a loop turn) and answers ``"<count> steps"`` right after the last one;
``chatty(tag)`` logs once at each of the eight levels (logger ``"chatty"``, data
``{"tag", "level"}``; the client's level decides which are sent) and answers ``tag``.

``--startup-delay S`` sleeps ``S`` seconds before serving (a loaded machine, a big import):
nothing is read or written meanwhile. ``--stateless-only`` serves only the stateless-era
revisions (2026-07-28): such a server refuses ``initialize``.
"""

from __future__ import annotations

import argparse
import asyncio
import time

from backchannel.server import Context, Server
from backchannel.types.versions import STATELESS_VERSIONS

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def build_server(*, stateless_only: bool = False) -> Server:
    versions = {"versions": STATELESS_VERSIONS} if stateless_only else {}
    server = Server("progress-peer", version="1.0.0", **versions)

    @server.tool(description="Report progress 1..count, then answer at once.", structured_output=False)
    async def steps(ctx: Context, count: int = 3, delay: float = 0.0) -> str:
        for i in range(1, count + 1):
            await asyncio.sleep(delay)
            await ctx.report_progress(i, total=count, message=f"step {i}/{count}")
        return f"{count} steps"

    @server.tool(description="Log once at each of the eight levels.", structured_output=False)
    async def chatty(tag: str, ctx: Context) -> str:
        for level in LOG_LEVELS:
            await ctx.log(level, {"tag": tag, "level": level}, logger="chatty")
        return tag

    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--http", type=int, metavar="PORT", default=None, help="serve HTTP on 127.0.0.1:PORT")
    parser.add_argument("--legacy-sse", action="store_true", help="HTTP: also serve the 2024-11-05 HTTP+SSE transport")
    parser.add_argument("--startup-delay", type=float, default=0.0, metavar="S", help="sleep S seconds first")
    parser.add_argument("--stateless-only", action="store_true", help="serve only 2026-07-28")
    ns = parser.parse_args()
    if ns.startup_delay > 0:
        time.sleep(min(ns.startup_delay, 60.0))  # bounded: a test's server never hangs for long
    server = build_server(stateless_only=ns.stateless_only)
    if ns.http is not None:
        server.run_http("127.0.0.1", ns.http, legacy_sse=ns.legacy_sse)
    else:
        server.run()


if __name__ == "__main__":
    main()
