"""What one ``echo`` costs the contract server, for one source tree against another.

    python benchmarks/echo_cost.py --src /tmp/before/src --src src            # CPU per call, 5 rounds
    python benchmarks/echo_cost.py --src /tmp/before/src --src src --instructions
    python benchmarks/echo_cost.py --src src --transport http --era stateless --instructions
    python benchmarks/echo_cost.py --src src --transport http --server benchmarks/peers/http_floor.py --instructions

Each ``--src`` is a backchannel source tree put first on the server's ``PYTHONPATH``; the server is
``contract_server.py`` (stdio, and http on 127.0.0.1). CPU per call: in each round every tree's
server is started in turn (the order rotates), answers ``--warmup`` echoes, then ``--calls`` echoes
one at a time while its user + system CPU is read from ``/proc`` before and after; the min and the
median over the rounds are printed. ``--instructions`` also counts instructions per call the way
``docs/performance.md`` does: the server under ``valgrind --tool=callgrind`` (``PYTHONHASHSEED=0``),
the count for ``--long`` echoes minus the count for ``--short``, over the difference, each tree
``--count-runs`` times, interleaved; what the short run counted beyond its echoes is the start,
the handshake and the exit, a cold start's instructions. ``--era stateless`` sends the HTTP echoes in
the 2026-07-28 era (no session: ``driver.StatelessHttpPeer``); ``--server`` counts another server script
(the HTTP floor, ``peers/http_floor.py``; ``--src`` then only names the run). Every loop is bounded in
count and time; nothing listens beyond 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import driver

HERE = Path(__file__).resolve().parent
SERVER = HERE / "contract_server.py"
#: The servers' stderr (each run appends).
LOG = Path(os.environ.get("TMPDIR", "/tmp")) / "echo-cost.log"
_TOTALS = re.compile(rb"^(?:totals|summary):\s*(\d+)", re.MULTILINE)


def server_env(src: Path, *, fixed_hash: bool) -> dict[str, str]:
    env = driver.server_env()
    env["PYTHONPATH"] = os.pathsep.join([str(src), *filter(None, [env.get("PYTHONPATH")])])
    if fixed_hash:
        env["PYTHONHASHSEED"] = "0"
    return env


async def _echoes(peer: driver.Peer, count: int, label: str) -> None:
    for i in range(count):
        await driver.echo_one(peer, f"{label} {i}")


async def _stop_http(server: driver.HttpServer, timeout: float) -> None:
    """SIGTERM and wait (a server under valgrind takes its time to exit and write its counts)."""
    if server.process.returncode is None:
        server.process.send_signal(signal.SIGTERM)
    try:
        await asyncio.wait_for(server.process.wait(), timeout)
    except TimeoutError:
        server.process.kill()
        await server.process.wait()
        raise driver.ContractError(f"the server did not exit within {timeout} s of SIGTERM") from None


async def one_run(
    transport: str,
    cmd: Sequence[str],
    env: dict[str, str],
    warmup: int,
    calls: int,
    slow: bool,
    era: str = "handshake",
) -> float:
    """Start the server, echo ``warmup`` then ``calls`` times, stop it: the server CPU seconds of the ``calls``."""
    limit = 600.0 if slow else 60.0
    log = LOG.open("ab")
    try:
        if transport == "stdio":
            return await _stdio_run(cmd, env, log, warmup, calls, limit)
        return await _http_run(cmd, env, log, warmup, calls, limit, era)
    finally:
        log.close()


async def _stdio_run(cmd: Sequence[str], env: dict[str, str], log: Any, warmup: int, calls: int, limit: float) -> float:
    async with asyncio.timeout(limit):
        peer = await driver.StdioPeer.spawn(cmd, env, log)
    try:
        async with asyncio.timeout(limit * 4):
            await driver.handshake(peer)
            await _echoes(peer, warmup, "warm")
            before = driver.process_cpu(peer.pid)
            await _echoes(peer, calls, "bench")
            spent = driver.process_cpu(peer.pid) - before
        if await peer.close_stdin_and_wait(limit) is None:
            raise driver.ContractError("the server did not exit once its stdin closed")
    finally:
        peer.kill()
    return spent


async def _http_run(
    cmd: Sequence[str], env: dict[str, str], log: Any, warmup: int, calls: int, limit: float, era: str
) -> float:
    server = await driver.HttpServer.spawn(cmd, env, log)
    pool = driver.HttpPool(server.port)
    try:
        await server.wait_listening(limit)
        stateless = era == "stateless"
        peer = driver.StatelessHttpPeer(pool, server.pid) if stateless else driver.HttpPeer(pool, server.pid)
        async with asyncio.timeout(limit * 4):
            if not stateless:
                await driver.handshake(peer)
            await _echoes(peer, warmup, "warm")
            before = driver.process_cpu(server.pid)
            await _echoes(peer, calls, "bench")
            spent = driver.process_cpu(server.pid) - before
    finally:
        pool.close()
        await _stop_http(server, limit)
    return spent


def command(transport: str, valgrind_out: Path | None, server: Path = SERVER) -> list[str]:
    cmd = [sys.executable, str(server), transport]
    if valgrind_out is None:
        return cmd
    return ["valgrind", "--tool=callgrind", "--trace-children=no", f"--callgrind-out-file={valgrind_out}", *cmd]


def instructions(path: Path) -> int:
    found = _TOTALS.search(path.read_bytes())
    if found is None:
        raise driver.ContractError(f"{path}: no totals line")
    return int(found.group(1))


def cpu_rounds(sources: list[Path], transport: str, ns: argparse.Namespace) -> dict[Path, list[float]]:
    per_call: dict[Path, list[float]] = {src: [] for src in sources}
    for round_number in range(ns.rounds):
        order = sources[round_number % len(sources) :] + sources[: round_number % len(sources)]
        for src in order:
            env = server_env(src, fixed_hash=False)
            cmd = command(transport, None, ns.server)
            spent = asyncio.run(one_run(transport, cmd, env, ns.warmup, ns.calls, False, ns.era))
            per_call[src].append(spent / ns.calls * 1e6)
            print(f"  cpu {transport:5} round {round_number + 1} {src}: {per_call[src][-1]:.1f} us/call", flush=True)
    return per_call


def count_runs(sources: list[Path], transport: str, ns: argparse.Namespace) -> dict[Path, list[tuple[float, float]]]:
    """Per tree, per run: (instructions per call, instructions of the rest: start, handshake, exit)."""
    counted: dict[Path, list[tuple[float, float]]] = {src: [] for src in sources}
    with tempfile.TemporaryDirectory(prefix="echo-cost-") as tmp:
        for run_number in range(ns.count_runs):
            for src in sources:
                env = server_env(src, fixed_hash=True)
                totals = []
                for calls in (ns.short, ns.long):
                    out = Path(tmp) / f"callgrind.{run_number}.{calls}"
                    cmd = command(transport, out, ns.server)
                    asyncio.run(one_run(transport, cmd, env, 0, calls, True, ns.era))
                    totals.append(instructions(out))
                per_call = (totals[1] - totals[0]) / (ns.long - ns.short)
                counted[src].append((per_call, totals[0] - ns.short * per_call))
                print(
                    f"  instructions {transport:5} run {run_number + 1} {src}: {per_call / 1e3:.1f}k/call, "
                    f"{counted[src][-1][1] / 1e6:.2f}M the rest",
                    flush=True,
                )
    return counted


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--src", type=Path, action="append", required=True, help="a source tree (give one or more)")
    parser.add_argument("--transport", choices=["stdio", "http"], action="append", help="default: both")
    parser.add_argument("--era", choices=["handshake", "stateless"], default="handshake", help="HTTP: the echoes' era")
    parser.add_argument("--server", type=Path, default=SERVER, help="the server script (default contract_server.py)")
    parser.add_argument("--rounds", type=int, default=5, help="CPU rounds, each tree once per round (default 5)")
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--calls", type=int, default=10000, help="echoes measured per CPU run (default 10000)")
    parser.add_argument("--instructions", action="store_true", help="also count instructions under callgrind")
    parser.add_argument("--short", type=int, default=200)
    parser.add_argument("--long", type=int, default=2200)
    parser.add_argument("--count-runs", type=int, default=2, help="callgrind pairs per tree (default 2)")
    ns = parser.parse_args(argv)
    sources = [src.resolve() for src in ns.src]
    started = time.perf_counter()
    rows = []
    for transport in ns.transport or ["stdio", "http"]:
        for src, values in cpu_rounds(sources, transport, ns).items():
            rows.append(
                f"{transport} echo, server CPU us/call  {src}: min {min(values):.1f}, median "
                f"{statistics.median(values):.1f}  ({', '.join(f'{v:.1f}' for v in values)})"
            )
        if ns.instructions:
            for src, pairs in count_runs(sources, transport, ns).items():
                calls = ", ".join(f"{call / 1e3:.1f}k" for call, _ in pairs)
                rest = ", ".join(f"{other / 1e6:.2f}M" for _, other in pairs)
                rows.append(f"{transport} echo, instructions/call  {src}: {calls}; start + handshake + exit {rest}")
    print("\n".join(rows))
    print(f"({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
