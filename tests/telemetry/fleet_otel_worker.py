"""One worker of the fleet ``test_fleet_processes.py`` runs: its own process and port, a shared
``redis-server``, and the OpenTelemetry SDK writing each span, as it ends, to a file of its own
(``_otel.configure_file_export``: a ``SimpleSpanProcessor``, so nothing waits in a batch when the
process is stopped, and nothing is shared across a fork).

    python tests/telemetry/fleet_otel_worker.py --port P --redis URL --name w0 --spans FILE

Tools: ``ask()`` (a form; ``"<action>:<name>@<worker>"``) and ``hold()`` (a task that waits
until it is cancelled).
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from _otel import configure_file_export

from backchannel import Context, Server

NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}}


def build_server(worker: str) -> Server:
    server = Server("fleet-otel")

    @server.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Your name?", NAME_FORM)
        return f"{answer.action}:{(answer.data or {}).get('name', '')}@{worker}"

    @server.tool(task="optional")
    async def hold(ctx: Context) -> str:
        await asyncio.sleep(30)
        return f"held@{worker}"

    return server


def main() -> None:
    parser = argparse.ArgumentParser(prog="fleet_otel_worker.py")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--redis", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--spans", type=Path, required=True)
    args = parser.parse_args()
    configure_file_export(args.spans)
    build_server(args.name).run_http("127.0.0.1", args.port, "/mcp", redis=args.redis)


if __name__ == "__main__":
    main()
