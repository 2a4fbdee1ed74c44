"""One worker of the fault tests' fleet: a real process serving ``/mcp`` on its own port,
sharing its state through Redis (``Server.run_http(port=..., redis=...)``, one worker).

    python tests/fleet/fault_worker.py --port P --redis URL --ledger FILE [--idle S] [--state-ttl S]

Its tools say which process served them (the pid), so a test knows whom to kill:

- ``ask``: asks the client a form question naming this pid, returns the answer;
- ``hold``: reports progress once (its stream has started), then waits until cancelled;
- ``pid``: this worker's pid;
- ``deploy(target)``: asks (a multi-round request in the stateless era), then does its work
  in ``ctx.once`` (one line appended to ``--ledger`` per run, across every worker); returns
  ``"<the work's result> | served by pid <pid>"``.
- ``charge(amount)``: the other order: its work in ``ctx.once`` first (a ``charge`` line in the
  ledger), then asks for a confirmation; returns the charge and the answer.
"""

from __future__ import annotations

import argparse
import asyncio
import os

from backchannel import Context, Server
from backchannel.server.options import StateOptions

PID = os.getpid()
NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}}
OK_FORM = {"type": "object", "properties": {"ok": {"type": "boolean"}}}


def _append(path: str, line: str) -> None:
    with open(path, "a", encoding="utf-8") as sink:  # O_APPEND: each run's line whole, whoever runs
        sink.write(line)


def build_server(ledger: str, state_ttl: float) -> Server:
    server = Server("faults", state=StateOptions(ttl=state_ttl))

    @server.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit(f"Your name? (asked by pid {PID})", NAME_FORM)
        return f"{answer.action}:{(answer.data or {}).get('name', '')}@{PID}"

    @server.tool()
    async def hold(ctx: Context) -> str:
        await ctx.report_progress(1, 2, f"holding in pid {PID}")
        await asyncio.sleep(3600)
        return "held"

    @server.tool()
    def pid() -> str:
        return str(PID)

    @server.tool()
    async def deploy(target: str, ctx: Context) -> str:
        answer = await ctx.elicit(f"Deploy {target}?", OK_FORM)
        if answer.action != "accept":
            return answer.action

        async def work() -> str:
            await asyncio.sleep(0.2)  # long enough for concurrent replays to find it running
            _append(ledger, f"{target} {PID}\n")
            return f"deployed {target} by pid {PID}"

        return f"{await ctx.once('deploy', work)} | served by pid {PID}"

    @server.tool()
    async def charge(amount: int, ctx: Context) -> str:
        def work() -> str:
            _append(ledger, f"charge {amount} {PID}\n")
            return f"charged {amount} by pid {PID}"

        charged = await ctx.once("charge", work)
        answer = await ctx.elicit(f"Charged {amount}. Send the receipt?", OK_FORM)
        return f"{charged} | {answer.action} | served by pid {PID}"

    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--redis", required=True, metavar="URL")
    parser.add_argument("--ledger", required=True, help="the file ctx.once work appends to")
    parser.add_argument("--idle", type=float, default=60.0, help="session_idle_timeout (and the records' TTL)")
    parser.add_argument("--state-ttl", type=float, default=600.0, help="how long a requestState is valid")
    args = parser.parse_args()
    server = build_server(args.ledger, args.state_ttl)
    server.run_http("127.0.0.1", args.port, "/mcp", redis=args.redis, session_idle_timeout=args.idle)


if __name__ == "__main__":
    main()
