"""What ``run.py`` measures and how it reports it: the metrics, the targets, and RESULTS.md's text.

A target names a measurement of backchannel and a reference in the same repetitions (``report_format.Target``);
the verdict is on the median of the per-repetition ratios, or on the worst repetition for an ``every_rep`` target.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import composition
import driver
import fleet_report
import http_floor_rows
from report_format import Samples, Target, fmt, fmt_ratio, median_of, ratios, target_row

import tasks as tasks_bench

if TYPE_CHECKING:
    from servers import Spec


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
    *(Metric(*row) for row in http_floor_rows.METRICS),  # benchmarks/http_floor_rows.py: backchannel and the floor
    *(Metric(*row) for row in tasks_bench.METRICS),  # benchmarks/tasks.py: backchannel and FastMCP only
    *(Metric(*row) for row in composition.METRICS),  # benchmarks/composition.py: proxy, middleware, mount
]

CPU_METRICS = [
    (transport, key) for transport in ("stdio", "http") for key in ("echo", "echo32", "ask", "progress", "completion")
] + [("http", "stateless_echo"), ("http", "stateless_echo32")]


TARGETS = [
    # The first benchmark issue's targets, kept; issue #19's tighter ones (ahead of TypeScript on every row, close
    # to the floor) replace a looser row of the same measurement where there was one.
    Target("stdio echo one at a time ≥ 4x official Python SDK", "stdio", "echo_per_s", "pysdk", 4, True),
    Target(
        "stdio echo one at a time ≥ 0.95x the floor, every repetition",
        "stdio",
        "echo_per_s",
        "floor",
        0.95,
        True,
        every_rep=True,
    ),
    Target("stdio echo 32 in flight ≥ 20x official Python SDK", "stdio", "echo32_per_s", "pysdk", 20, True),
    Target("stdio echo 32 in flight ≥ TypeScript SDK", "stdio", "echo32_per_s", "ts", 1, True),
    Target("HTTP echo one at a time ≥ 3x official Python SDK", "http", "echo_per_s", "pysdk", 3, True),
    Target("HTTP echo one at a time ≥ TypeScript SDK", "http", "echo_per_s", "ts", 1, True),
    Target("HTTP echo 32 in flight ≥ 3x official Python SDK", "http", "echo32_per_s", "pysdk", 3, True),
    Target("HTTP echo 32 in flight ≥ TypeScript SDK", "http", "echo32_per_s", "ts", 1, True),
    Target("stdio ask ≥ 5x official Python SDK", "stdio", "ask_per_s", "pysdk", 5, True),
    Target("stdio ask ≥ 0.9x the floor", "stdio", "ask_per_s", "floor", 0.9, True),
    Target("HTTP ask ≥ 3x official Python SDK", "http", "ask_per_s", "pysdk", 3, True),
    Target("progress notifications/s ≥ 30x official Python SDK (stdio)", "stdio", "progress_per_s", "pysdk", 30, True),
    Target("progress notifications/s ≥ 2x TypeScript SDK (stdio)", "stdio", "progress_per_s", "ts", 2, True),
    Target("progress notifications/s ≥ 0.75x the floor (stdio)", "stdio", "progress_per_s", "floor", 0.75, True),
    Target("completion p99 ≤ 0.5x official Python SDK (stdio)", "stdio", "completion_p99_ms", "pysdk", 0.5, False),
    Target("completion p99 ≤ the floor (stdio)", "stdio", "completion_p99_ms", "floor", 1, False),
    Target("cancel → next echo ≤ 0.5x official Python SDK (stdio)", "stdio", "cancel_ms", "pysdk", 0.5, False),
    Target("cold start ≤ 0.25x official Python SDK (stdio)", "stdio", "cold_start_ms", "pysdk", 0.25, False),
    Target("cold start ≤ 0.8x TypeScript SDK (stdio)", "stdio", "cold_start_ms", "ts", 0.8, False),
    Target("cold start ≤ 0.8x TypeScript SDK (HTTP)", "http", "cold_start_ms", "ts", 0.8, False),
    Target("stdin closed → process exited ≤ TypeScript SDK (stdio)", "stdio", "exit_ms", "ts", 1, False),
    Target("idle RSS ≤ 1.3x the floor (stdio)", "stdio", "idle_rss_kb", "floor", 1.3, False),
    Target("memory per idle HTTP session ≤ 0.5x official Python SDK", "http", "session_kb", "pysdk", 0.5, False),
    Target("memory per idle HTTP session ≤ TypeScript SDK", "http", "session_kb", "ts", 1, False),
    # benchmarks/tasks.py; the p99 is a row of the medians (on a loaded 2-core machine it is the machine's tail)
    Target("tasks created + completed/s ≥ 3x FastMCP (fastmcp-tasks)", "tasks", "tasks_per_s", "fastmcp", 3, True),
    Target("tasks/get p50 ≤ 0.5x FastMCP (fastmcp-tasks)", "tasks", "tasks_get_p50_ms", "fastmcp", 0.5, False),
    # benchmarks/composition.py, over stdio (issue #29's proof 6, issue #30's proof 5); "transport" names the row.
    # A proxy's rate against direct compares the proxy's repetition with the direct server's in the same one.
    Target("proxy: stdio echo one at a time ≥ 5x FastMCP's proxy", "proxy", "echo_per_s", "fastmcp", 5, True),
    Target("proxy: stdio echo 32 in flight ≥ 5x FastMCP's proxy", "proxy", "echo32_per_s", "fastmcp", 5, True),
    Target(
        "proxy: stdio echo one at a time through the proxy ≥ 0.5x direct",
        "proxy", "echo_per_s", "backchannel", 0.5, True, against_key="direct_echo_per_s",
    ),
    Target(
        "proxy: stdio echo 32 in flight through the proxy ≥ 0.5x direct",
        "proxy", "echo32_per_s", "backchannel", 0.5, True, against_key="direct_echo32_per_s",
    ),
    Target(
        "middleware: one pass-through layer ≤ 3 µs server CPU per echo (one at a time)",
        "middleware", "echo_added_cpu_us", None, 3, False,
    ),
    Target("mount: stdio echo one at a time ≥ 5x FastMCP's mount()", "mount", "echo_per_s", "fastmcp", 5, True),
    Target("mount: stdio echo 32 in flight ≥ 5x FastMCP's mount()", "mount", "echo32_per_s", "fastmcp", 5, True),
]  # fmt: skip


def scale_of(target: Target) -> float:
    """What a target's measurement is multiplied by to be shown in its unit (1 for the fleet's)."""
    found = [m.scale for m in METRICS if m.key == target.key and m.transport == target.transport]
    return found[0] if found else 1.0


def composition_target_rows(samples: Samples, rows: tuple[str, ...], labels: dict[str, str]) -> list[str]:
    """The summary table's rows of the composition targets of ``rows`` measured in ``samples``."""
    found = []
    for target in TARGETS:
        if target.transport not in rows or (target.server, target.transport) not in samples:
            continue
        if target.against is not None and (target.against, target.transport) not in samples:
            continue
        found.append(target_row(samples, target, labels, unit_of(target), scale_of(target)))
    return found


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
    for target in [*TARGETS, *http_floor_rows.TARGETS, *fleet_report.FLEET_TARGETS]:
        if (target.server, target.transport) not in samples or (
            target.against and (target.against, target.transport) not in samples
        ):
            continue  # a run with --only (or --no-composition) that left the server or the reference out
        out.append(target_row(samples, target, labels, unit_of(target), scale_of(target)))
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
            if (against, metric.transport) not in samples:
                continue  # the floor has no HTTP rows, the official SDK no tasks or composition rows
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
    if http_floor_rows.has_rows(samples):
        load = info.get("machine", {}).get("load average at start", "?")
        when = http_floor_rows.when_run(False, load, http_floor_rows.load_average())
        out += ["", http_floor_rows.section(samples, reps, when).rstrip("\n")]
    if any(row in composition.ROWS for _, row in samples):
        load = info.get("machine", {}).get("load average at start", "?")
        when = composition.when_run(False, load, composition.load_average())
        out += ["", composition.section(samples, reps, when).rstrip("\n")]
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
        "(`McpServer`, node:http, a transport per session), `benchmarks/peers/floor.py` (asyncio + orjson, stdio), "
        "`benchmarks/peers/http_floor.py` (asyncio + httptools + orjson, HTTP, the echo rows only). "
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
