"""The I/O-bound workload rows: TM Dev Lab v2's tool shape, 50 users over Streamable HTTP (issue #32).

    python benchmarks/run.py --io            # these rows alone, --reps times; splices them into RESULTS.md
    python benchmarks/run.py --io --quick    # each server once, briefly: the answers checked, no speed
    python benchmarks/io_bench.py --profile-clients   # the tools' Redis and HTTP clients, side by side

What runs (all on 127.0.0.1, each a child process, stopped on exit whatever happened):

- one ``redis-server`` (``tests/_services.py``: persistence off), holding the tools' data (db 0, laid
  out anew before each server's turn: ``io_tools.seed``) and, for the backchannel fleet, its state (db 1);
- the products API (``peers/products_api.mjs``, Node);
- one server at a time, the same three tools (``io_tools.py``; the TypeScript SDK's in
  ``peers/ts_io_server.mjs``): backchannel in one process and as ``--workers 2 --redis`` (``run_http``'s
  fleet: forked workers on one port, sessions in Redis), FastMCP 4.x under uvicorn with 1 and 2 workers,
  and the official TypeScript SDK in one Node process;
- the load: autocannon (npm) through ``peers/io_load.mjs``, 50 connections, each running the published
  benchmark's pattern (a session per tool call: initialize, initialized, the call, DELETE; then tools/list),
  for ``warmup`` seconds not counted and then ``seconds`` measured. Why autocannon: it is maintained, on
  npm, drives keep-alive connections from one Node thread at tens of thousands of requests a second
  (a Python generator would need more CPU than the servers it measures, on the same 2 cores), and its
  request sequences carry the session id from each ``initialize`` answer to the next requests.

Measured per server: the published benchmark's RPS (initialize, tools/call and tools/list answered per
second), every HTTP request per second, the tool calls' p50/p95/p99, and CPU per counted request of the
server's processes (the workers included), of Redis, of the API and of the load generator; Redis
commands per counted request (``INFO commandstats``). Every answer is checked (``io_load.mjs``).
"""

from __future__ import annotations

__all__ = ["FULL", "QUICK", "SERVERS", "IoPlan", "IoServer", "missing", "run_io"]

import argparse
import asyncio
import contextlib
import http.client
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))

import driver  # noqa: E402
from report_format import Samples  # noqa: E402
from servers import NODE_MODULES, PY, TS_SDK, node_binary  # noqa: E402

from backchannel.testing import LOOPBACK, free_port, stop_process, wait_for_port  # noqa: E402

PEERS = HERE / "peers"
AUTOCANNON = PEERS / "node_modules" / "autocannon" / "package.json"
CONNECTIONS = 50


@dataclass(frozen=True, slots=True)
class IoPlan:
    seconds: int
    warmup: int


QUICK = IoPlan(3, 2)
FULL = IoPlan(10, 3)


@dataclass(frozen=True)
class IoServer:
    name: str
    """Its key in the samples (transport "http")."""
    label: str
    kind: str
    """backchannel, fastmcp or ts."""
    workers: int
    sessions: bool
    """Keeps handshake-era sessions (the load then sends DELETE at the end of each)."""


SERVERS = [
    IoServer("io-backchannel", "backchannel, 1 process", "backchannel", 1, True),
    IoServer("io-backchannel-2w", "backchannel, --workers 2 --redis", "backchannel", 2, True),
    IoServer("io-fastmcp", "FastMCP, 1 uvicorn worker", "fastmcp", 1, False),
    IoServer("io-fastmcp-2w", "FastMCP, 2 uvicorn workers", "fastmcp", 2, False),
    IoServer("io-ts", "TypeScript SDK, 1 process", "ts", 1, False),
]
LABELS = {server.name: server.label for server in SERVERS}


def missing() -> str | None:
    """Why these rows cannot run here, or None."""
    if shutil.which("redis-server") is None and not Path("/usr/bin/redis-server").exists():
        return "redis-server is not installed (tests/peers/install-services.sh)"
    if node_binary() is None or not TS_SDK.is_file():
        return "no Node >= 20 or no tests/node_modules (tests/peers/install.sh)"
    if not AUTOCANNON.is_file():
        return "no benchmarks/peers/node_modules (npm ci in benchmarks/peers)"
    return None


def ensure_installed() -> None:
    """The load generator and the TypeScript server's Redis client (``peers/package-lock.json``)."""
    if not AUTOCANNON.is_file() and shutil.which("npm") is not None:
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=PEERS, check=False)


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def tree_cpu(pid: int) -> float:
    """User + system CPU seconds of ``pid`` and every process below it (a fleet's workers)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    total, stack = 0.0, [pid]
    while stack:
        current = stack.pop()
        total += driver.process_cpu(current)
        stack.extend(children.get(current, []))
    return total


def command(server: IoServer, port: int, state_url: str) -> list[str]:
    if server.kind == "backchannel":
        extra = ["--workers", str(server.workers), "--redis", state_url] if server.workers > 1 else []
        return [PY, str(HERE / "io_server.py"), *extra]
    if server.kind == "fastmcp":
        return [
            PY, "-m", "uvicorn", "fastmcp_io_server:app", "--app-dir", str(PEERS),
            "--host", LOOPBACK, "--port", str(port), "--workers", str(server.workers),
            "--loop", "uvloop", "--http", "httptools", "--no-access-log", "--log-level", "warning",
        ]  # fmt: skip
    return [node_binary() or "node", str(PEERS / "ts_io_server.mjs")]


def _ready(port: int, timeout: float, log: Path) -> None:
    """Until ``initialize`` is answered 200 three times in a row (each worker's turn on the port)."""
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "ready", "version": "1"},
            },
        }
    )
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    deadline = time.monotonic() + timeout
    good = 0
    while good < 3:
        connection = http.client.HTTPConnection(LOOPBACK, port, timeout=timeout)
        try:
            connection.request("POST", "/mcp", body, headers)
            status: int | str = connection.getresponse().status
        except OSError as exc:
            status = repr(exc)
        finally:
            connection.close()
        good = good + 1 if status == 200 else 0
        if good < 3 and time.monotonic() > deadline:
            tail = log.read_text(errors="replace")[-3000:]
            raise RuntimeError(f"the server on port {port} answers {status} after {timeout:.0f} s:\n{tail}")
        if status != 200:
            time.sleep(0.1)  # another process's port: no event to wait on, so poll with a deadline


@contextlib.contextmanager
def serving(server: IoServer, env: dict[str, str], state_url: str, log_dir: Path) -> Iterator[tuple[int, int]]:
    """The server started and answering; yields (port, pid); stopped on exit."""
    port = free_port()
    log = log_dir / f"{server.name}.log"
    with log.open("ab") as sink:
        process = subprocess.Popen(
            command(server, port, state_url),
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            env={**env, "PORT": str(port), "IO_SERVER_TYPE": server.kind},
        )
    try:
        wait_for_port(port, process, timeout=60.0, output=lambda: log.read_text(errors="replace")[-3000:])
        _ready(port, 60.0, log)
        yield port, process.pid
    finally:
        stop_process(process, timeout=10.0)


@contextlib.contextmanager
def products_api(log: Path | None) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """The products API (``peers/products_api.mjs``) listening; yields (port, process); stopped on exit."""
    port = free_port()
    with log.open("ab") if log is not None else contextlib.nullcontext() as sink:
        process = subprocess.Popen(
            [node_binary() or "node", str(PEERS / "products_api.mjs")],
            stdin=subprocess.DEVNULL, stdout=sink or subprocess.DEVNULL, stderr=subprocess.STDOUT,
            env={**os.environ, "PORT": str(port)},
        )  # fmt: skip
    try:
        wait_for_port(port, process, timeout=30.0, output=lambda: log.read_text(errors="replace") if log else "")
        yield port, process
    finally:
        stop_process(process)


async def measure(
    server: IoServer, port: int, pid: int, pids: dict[str, int], counts: Any, plan: IoPlan, log_dir: Path
) -> tuple[dict[str, float], list[str]]:
    """One load run against the server on ``port``: its metrics, and what was wrong."""
    options = {
        "url": f"http://{LOOPBACK}:{port}/mcp",
        "connections": CONNECTIONS,
        "seconds": plan.seconds,
        "warmup": plan.warmup,
        "sessions": server.sessions,
    }
    load = await asyncio.create_subprocess_exec(
        node_binary() or "node",
        str(PEERS / "io_load.mjs"),
        json.dumps(options),
        stdout=asyncio.subprocess.PIPE,
        stderr=(log_dir / f"{server.name}-load.log").open("ab"),
    )
    assert load.stdout is not None
    started: dict[str, float] = {}
    ended: dict[str, float] = {}
    end: dict[str, Any] = {}
    before: dict[str, float] = {}
    try:
        async with asyncio.timeout(plan.warmup + plan.seconds + 90):
            async for line in load.stdout:
                event = json.loads(line)
                if event["event"] == "start":
                    before = counts.snapshot()
                    started = {"server": tree_cpu(pid), **{k: driver.process_cpu(v) for k, v in pids.items()}}
                    started["wall"] = time.perf_counter()
                elif event["event"] == "end":
                    ended = {"server": tree_cpu(pid), **{k: driver.process_cpu(v) for k, v in pids.items()}}
                    ended["wall"] = time.perf_counter()
                    end = event
            await load.wait()
    finally:
        if load.returncode is None:
            load.kill()
            await load.wait()
    if not end:
        return {}, [f"the load generator ended without a result (exit {load.returncode})"]
    after = counts.snapshot()
    wrong = [f"{end['errors']} wrong answers, e.g. {'; '.join(end['samples'])}"] if end["errors"] else []
    if end["transport_errors"] or end["timeouts"]:
        wrong.append(f"{end['transport_errors']} connection errors, {end['timeouts']} timeouts")
    counted = end["counted"]
    calls = end["calls"]
    if not counted or not calls["count"]:
        return {}, [*wrong, f"{counted} requests and {calls['count']} tool calls answered in {plan.seconds} s"]
    metrics = {
        "io_per_s": end["counted_per_s"],
        "io_http_per_s": end["http_per_s"],
        "io_call_p50_ms": calls["p50"],
        "io_call_p95_ms": calls["p95"],
        "io_call_p99_ms": calls["p99"],
        "io_init_p50_ms": end["steps"]["initialize"]["p50"],
        "io_server_cpu_us": (ended["server"] - started["server"]) / counted * 1e6,
        "io_server_cores": (ended["server"] - started["server"]) / (ended["wall"] - started["wall"]),
        "io_load_cpu_us": end["load_cpu_s"] / max(end["http"], 1) * 1e6,
    }
    for name in pids:
        metrics[f"io_{name}_cpu_us"] = (ended[name] - started[name]) / counted * 1e6
    delta = {k: after.get(k, 0) - before.get(k, 0) for k in after if k not in ("used_memory", "keys")}
    background = sum(delta.get(name, 0) for name in ("info", "ping"))
    commands = sum(v for k, v in delta.items() if k not in ("reads", "info", "ping"))
    metrics["io_redis_commands"] = commands / counted
    metrics["io_redis_round_trips"] = (delta.get("reads", 0) - background) / counted
    for name, value in delta.items():
        if name not in ("reads", "info", "ping") and value > 0:
            metrics[f"io_cmd_{name}"] = value / counted
    return metrics, wrong


async def run_io(
    samples: Samples, problems: dict[str, list[str]], rep: int, log_dir: Path, plan: IoPlan = FULL,
    only: tuple[str, ...] = (),
) -> None:  # fmt: skip
    """One repetition: each server in turn (rotated by ``rep``), its metrics appended to ``samples``."""
    import io_tools
    from fleet_redis import RedisCounts

    from _services import redis_server

    chosen = [server for server in SERVERS if not only or server.name in only]
    if (why := missing()) is not None:
        problems.setdefault("I/O workload", []).append(f"skipped: {why}")
        return
    chosen = chosen[rep % len(chosen) :] + chosen[: rep % len(chosen)]
    with redis_server() as redis, contextlib.ExitStack() as stack:
        assert redis.process is not None
        api_port, api = stack.enter_context(products_api(log_dir / "io-api.log"))
        data_url = redis.url
        state_url = redis.url.rsplit("/", 1)[0] + "/1"
        env = {
            **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
            "IO_REDIS_URL": data_url,
            "IO_API_URL": f"http://{LOOPBACK}:{api_port}",
            "BENCH_NODE_MODULES": str(NODE_MODULES),
        }
        counts = RedisCounts(data_url)
        stack.callback(counts.close)
        for server in chosen:
            io_tools.seed(data_url)
            try:
                with serving(server, env, state_url, log_dir) as (port, pid):
                    metrics, wrong = await measure(
                        server, port, pid, {"redis": redis.process.pid, "api": api.pid}, counts, plan, log_dir
                    )
            except Exception as exc:
                metrics, wrong = {}, [f"{type(exc).__name__}: {exc}"]
            if metrics:
                samples.setdefault((server.name, "http"), []).append(metrics)
            for item in wrong:
                problems.setdefault(f"I/O workload {server.label}", []).append(f"wrong (rep {rep + 1}): {item}")
            shown = f"{metrics['io_per_s']:,.0f} req/s, p99 {metrics['io_call_p99_ms']:.1f} ms" if metrics else "-"
            print(f"rep {rep + 1}: I/O workload {server.label:34} {shown}", flush=True)


# ------------------------------------------------------------------------------ client profile


def profile_clients(calls: int, concurrency: int) -> None:
    """CPU per tool call of each client choice, the tools' bodies called directly (no MCP): Redis
    parsed by hiredis or by redis-py's own parser, HTTP by aiohttp or httpx2, and a client made per
    call. Prints one line per choice."""
    import io_tools

    from _services import redis_server

    with redis_server() as redis, products_api(None) as (api_port, _):
        io_tools.seed(redis.url)
        choices = [
            ("hiredis + aiohttp (chosen)", {"IO_HTTP_CLIENT": "aiohttp"}),
            ("redis-py's parser + aiohttp", {"IO_HTTP_CLIENT": "aiohttp", "IO_REDIS_PARSER": "python"}),
            ("hiredis + httpx2", {"IO_HTTP_CLIENT": "httpx2"}),
            ("hiredis + aiohttp, clients made per call", {"IO_HTTP_CLIENT": "aiohttp", "IO_PER_CALL": "1"}),
        ]
        for label, extra in [*choices, *choices]:  # twice, interleaved: a loaded machine drifts
            env = {
                **os.environ, **extra, "IO_REDIS_URL": redis.url, "IO_API_URL": f"http://{LOOPBACK}:{api_port}",
            }  # fmt: skip
            argv = [PY, str(Path(__file__)), "--profile-one", str(calls), str(concurrency)]
            out = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
            print(f"{label:42} {out.stdout.strip() or out.stderr.strip()[-300:]}", flush=True)


async def _profile_one(calls: int, concurrency: int) -> str:
    """In a process of its own (the clients' choice is read from the environment at the first call)."""
    import io_tools

    per_call = os.environ.get("IO_PER_CALL") == "1"
    tools = [
        lambda: io_tools.search_products(),
        lambda u: io_tools.get_user_cart(u),
        lambda u: io_tools.checkout(u),
    ]

    async def one(n: int) -> None:
        own = io_tools.Clients() if per_call else None
        io_tools.PER_CALL.set(own)  # this task's context only
        user = f"user-{n % 1000:05d}"
        kind = n % 3
        try:
            await (tools[0]() if kind == 0 else tools[kind](user))  # type: ignore[call-arg, operator]
        finally:
            if own is not None:
                await own.close()

    for n in range(300):  # warm: connections open, code paths taken
        await asyncio.create_task(one(n))
    semaphore = asyncio.Semaphore(concurrency)

    async def bounded(n: int) -> None:
        async with semaphore:
            await asyncio.create_task(one(n))  # a context of its own (``PER_CALL``)

    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.gather(*(bounded(n) for n in range(calls)))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return f"{cpu / calls * 1e6:7.0f} µs CPU per call, {calls / wall:7,.0f} calls/s ({concurrency} in flight)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--profile-clients", action="store_true", help="CPU per call of each client choice")
    parser.add_argument("--profile-one", nargs=2, type=int, help=argparse.SUPPRESS)
    parser.add_argument("--calls", type=int, default=6000)
    ns = parser.parse_args()
    if ns.profile_one:
        import uvloop

        print(uvloop.run(_profile_one(*ns.profile_one)))
        return 0
    if ns.profile_clients:
        profile_clients(ns.calls, CONNECTIONS)
        return 0
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
