"""What the OpenTelemetry instrumentation costs (issue #20), four servers in one run.

    python benchmarks/telemetry_cost.py --quick        # each server once per transport, tiny counts (< 30 s)
    python benchmarks/telemetry_cost.py                # 5 interleaved repetitions; prints a markdown table
    python benchmarks/telemetry_cost.py --out benchmarks/RESULTS.md   # ... and puts it in that file's section
    python benchmarks/telemetry_cost.py --before COMMIT   # another tree as "before" (default 96264c5)

The same contract server (``contract_server.py``) four times:

* **before**: the tree of commit ``96264c5``, the last one without instrumentation (``git archive``
  into a temporary directory, put first on ``PYTHONPATH``; left out when the checkout lacks it).
  Everything else that changed since that commit is in the difference too: to see the instrumentation
  alone, pass ``--before`` the commit just before the one that added it;
* **api**: this tree, ``opentelemetry-api`` installed, no SDK configured: the cost every user pays,
  which issue #20 bounds at 3% of every row (and cold start and idle memory must not move);
* **imported**: the same with the API imported by another library and no SDK
  (``telemetry_sdk_server.py --api-only``): backchannel then reads the API's provider globals per request;
* **sdk**: this tree under ``telemetry_sdk_server.py``, which configures the SDK (batch span
  processor, periodic metric reader, batch log processor, exporters that discard) and then runs the
  contract server unchanged: what an operator who switches telemetry on pays.

Rows: cold start, idle RSS, echo one at a time, echo 32 in flight, ask (elicitation round trip) and
progress notifications, over stdio and Streamable HTTP, driven by ``driver.py``'s measurements (raw
JSON-RPC, every answer checked). Each repetition starts every server afresh, in a rotating order. A
ratio is the median of the per-repetition ratios, its range in brackets. Besides the wall-clock rates
it reports the server process's CPU time per operation, which neighbours on a shared machine disturb
far less: read that column first on a busy machine. Nothing is asserted about speed; ``--quick`` exits
non-zero only on a wrong answer or when the SDK server exported no span (instrumentation not on).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import datetime
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import curve_report
import driver
from report_format import Samples, fmt, fmt_ratio, median_of, ratios

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BEFORE = "96264c5"
"""The default "before": the last commit without instrumentation (nor the ``opentelemetry-api`` dependency)."""
HEADING = "## Telemetry cost"
PY = sys.executable
TRANSPORTS = ("stdio", "http")
BOUND = 0.03
START_LIMIT = 30.0
"""Seconds a server may take from spawn to its ``initialize`` result before the run calls it broken."""

PLAN = dataclasses.replace(
    driver.FULL, echo_seconds=2.0, par_seconds=2.0, ask_seconds=2.0, progress_steps=10000, extra_cold_starts=2
)
QUICK = dataclasses.replace(driver.QUICK, extra_cold_starts=0)


@dataclass(frozen=True)
class Variant:
    name: str
    label: str
    script: Path
    pythonpath: Path | None = None
    options: tuple[str, ...] = ()

    def cmd(self, transport: str) -> list[str]:
        return [PY, str(self.script), *self.options, transport]

    def env(self, count_file: Path | None) -> dict[str, str]:
        env = driver.server_env()
        if self.pythonpath is not None:
            env["PYTHONPATH"] = os.pathsep.join([str(self.pythonpath), *filter(None, [env.get("PYTHONPATH")])])
        if count_file is not None:
            env["TELEMETRY_COUNT_FILE"] = str(count_file)
        return env


@dataclass(frozen=True)
class Row:
    key: str
    label: str
    unit: str
    higher_is_better: bool
    cpu_key: str | None = None


ROWS = [
    Row("cold_start_ms", "cold start (spawn → initialize result)", "ms", False),
    Row("idle_rss_kb", "idle RSS", "KiB", False),
    Row("echo_per_s", "echo, one at a time", "calls/s", True, "echo_server_cpu_us"),
    Row("echo32_per_s", "echo, 32 in flight", "calls/s", True, "echo32_server_cpu_us"),
    Row("ask_per_s", "ask (elicitation round trip)", "calls/s", True, "ask_server_cpu_us"),
    Row("progress_per_s", "progress notifications", "notif/s", True, "progress_server_cpu_us"),
]


@contextlib.contextmanager
def before_tree(commit: str) -> Iterator[Path | None]:
    """``commit``'s ``src/`` and contract server, extracted into a temporary directory; None when
    this checkout lacks the commit (a shallow clone): then the run has no "before"."""
    with tempfile.TemporaryDirectory(prefix="bc-before-") as directory:
        archive = subprocess.run(
            ["git", "archive", commit, "src", "benchmarks/contract_server.py"], cwd=ROOT, capture_output=True
        )
        if archive.returncode != 0:
            print(f"no 'before' in this run: git archive {commit}: {archive.stderr.decode().strip()}", flush=True)
            yield None
            return
        subprocess.run(["tar", "-x", "-C", directory], input=archive.stdout, check=True)
        yield Path(directory)


def variants(before: Path | None, commit: str) -> list[Variant]:
    return [
        *(
            [Variant("before", f"before ({commit})", before / "benchmarks" / "contract_server.py", before / "src")]
            if before is not None
            else []
        ),
        Variant("api", "api, no SDK", HERE / "contract_server.py"),
        Variant("imported", "api imported, no SDK", HERE / "telemetry_sdk_server.py", options=("--api-only",)),
        Variant("sdk", "SDK + batch export", HERE / "telemetry_sdk_server.py"),
    ]


# ------------------------------------------------------------------------------ measuring


async def start_stdio(cmd: list[str], env: dict[str, str], log: Any) -> tuple[driver.StdioPeer, float]:
    """``driver.cold_start_stdio``, bounded (it kills the process itself when it fails or is cancelled)."""
    async with asyncio.timeout(START_LIMIT):
        return await driver.cold_start_stdio(cmd, env, log)


async def start_http(
    cmd: list[str], env: dict[str, str], log: Any
) -> tuple[driver.HttpServer, driver.HttpPool, driver.HttpPeer, float]:
    """``driver.cold_start_http``, bounded (it stops the server itself when it fails or is cancelled)."""
    async with asyncio.timeout(START_LIMIT):
        return await driver.cold_start_http(cmd, env, log)


async def measure(peer: driver.Peer, plan: driver.Plan, metrics: dict[str, float]) -> None:
    await driver.echo_sequential(peer, plan, metrics, "echo")
    await driver.echo_parallel(peer, plan, metrics, "echo32")
    await driver.ask(peer, plan, metrics, "ask")
    async with asyncio.timeout(plan.progress_seconds + 10):
        await driver.progress(peer, plan, metrics, "progress")
    if peer.violations:
        raise driver.ContractError("; ".join(peer.violations))


async def suite(variant: Variant, transport: str, plan: driver.Plan, log: Any, count_file: Path | None) -> dict:
    """One start of ``variant`` over ``transport``: its metrics (``spans`` too, for the SDK server)."""
    metrics: dict[str, float] = {}
    cmd, env = variant.cmd(transport), variant.env(count_file)
    colds: list[float] = []
    if transport == "stdio":
        for _ in range(plan.extra_cold_starts):
            peer, seconds = await start_stdio(cmd, env, log)
            colds.append(seconds)
            await peer.close_stdin_and_wait(10.0)
        peer, seconds = await start_stdio(cmd, env, log)
        colds.append(seconds)
        try:
            await asyncio.sleep(0.2)
            metrics["idle_rss_kb"] = driver.rss_kb(peer.pid)
            await measure(peer, plan, metrics)
            await peer.close_stdin_and_wait(10.0)
        finally:
            peer.kill()
    else:
        for _ in range(plan.extra_cold_starts):
            server, pool, _, seconds = await start_http(cmd, env, log)
            colds.append(seconds)
            pool.close()
            await server.stop()
        server, pool, http_peer, seconds = await start_http(cmd, env, log)
        colds.append(seconds)
        try:
            await asyncio.sleep(0.2)
            metrics["idle_rss_kb"] = driver.rss_kb(server.pid)
            await measure(http_peer, plan, metrics)
        finally:
            pool.close()
            await server.stop()
    metrics["cold_start_ms"] = statistics.median(colds) * 1e3
    if count_file is not None:
        metrics["spans"] = exported_spans(count_file)
    return metrics


def exported_spans(count_file: Path) -> float:
    """What the SDK server's span exporter got before it exited (-1: it never wrote its counts)."""
    found = re.search(r"spans (\d+)", count_file.read_text()) if count_file.exists() else None
    count_file.unlink(missing_ok=True)
    return float(found.group(1)) if found else -1.0


async def run(plan: driver.Plan, reps: int, budget: float, logs: Path, commit: str) -> tuple[Samples, list[str], int]:
    samples: Samples = {}
    problems: list[str] = []
    started = time.perf_counter()
    done = 0
    with before_tree(commit) as before:
        every = variants(before, commit)
        for variant in every:  # one start each first: bytecode caches written, page cache warm
            with (logs / f"telemetry-{variant.name}-stdio.log").open("ab") as log:
                try:
                    peer, _ = await start_stdio(variant.cmd("stdio"), variant.env(None), log)
                except Exception as exc:
                    problems.append(f"{variant.label} does not start (see {log.name}): {exc}")
                    continue
            await peer.close_stdin_and_wait(10.0)
        if problems:
            return samples, problems, done
        for rep in range(reps):
            rep_started = time.perf_counter()
            order = every[rep % len(every) :] + every[: rep % len(every)]
            for variant in order:
                for transport in TRANSPORTS:
                    count_file = logs / f"counts-{transport}.txt" if variant.name == "sdk" else None
                    with (logs / f"telemetry-{variant.name}-{transport}.log").open("ab") as log:
                        try:
                            async with asyncio.timeout(plan.progress_seconds + 120):
                                metrics = await suite(variant, transport, plan, log, count_file)
                        except Exception as exc:
                            problems.append(f"{variant.label} {transport} (rep {rep + 1}): {type(exc).__name__}: {exc}")
                            continue
                    if metrics.get("spans", 1) <= 0:
                        problems.append(f"{variant.label} {transport} (rep {rep + 1}): no span exported")
                    samples.setdefault((variant.name, transport), []).append(metrics)
                    print(f"rep {rep + 1}: {variant.label:24} {transport:5} done", flush=True)
            done += 1
            elapsed = time.perf_counter() - started
            if rep + 1 < reps and elapsed + (time.perf_counter() - rep_started) > budget:
                print(f"stopping after {done} repetitions: another would pass the {budget:.0f} s budget", flush=True)
                break
    return samples, problems, done


# ------------------------------------------------------------------------------ report


def verdict(rate_ratios: list[float], cpu_ratios: list[float]) -> str:
    """Whether the no-SDK server is within ``BOUND`` of the one before, by wall rate and by CPU/op."""
    by_rate = statistics.median(rate_ratios) >= 1 - BOUND if rate_ratios else None
    by_cpu = statistics.median(cpu_ratios) <= 1 + BOUND if cpu_ratios else None
    if by_rate is None and by_cpu is None:
        return "-"
    if by_rate and by_cpu is not False:
        return "within 3%"
    if by_cpu:
        return "within 3% by CPU/op"
    return "**over 3%**"


COMPARED = [("api", "api, no SDK"), ("imported", "api imported, no SDK"), ("sdk", "SDK")]
"""The variants set against ``before``, in the tables' order."""


def judge(samples: Samples, transport: str, row: Row) -> str:
    """Whether the no-SDK server (``api``) keeps within ``BOUND`` of ``before`` on ``row``."""
    found = ratios(samples, transport, row.key, "api", "before")
    if not row.higher_is_better:  # cold start and memory: must not move
        return "-" if not found else ("within 3%" if statistics.median(found) <= 1 + BOUND else "**moved**")
    return verdict(found, ratios(samples, transport, row.cpu_key, "api", "before") if row.cpu_key else [])


def table(samples: Samples, reps: int, seconds: float, quick: bool, commit: str) -> str:
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "?"
    heads = "".join(f" {label} | / before |" for _, label in COMPARED)
    out = [
        HEADING,
        "",
        f"Written by `python benchmarks/telemetry_cost.py{' --quick' if quick else ''}` on {now}: {reps} "
        f"interleaved repetition(s), {seconds / 60:.1f} minutes, load average at the end {load}. "
        f"**before** = commit `{commit}`; **api, no SDK** = this tree, `opentelemetry-api` installed, nothing "
        "imports it (issue #20: within 3%); **api imported, no SDK** = the same with the API imported by "
        "someone else in the process (`telemetry_sdk_server.py --api-only`); **SDK** = the SDK configured "
        "(`telemetry_sdk_server.py`: batch span processor, metric reader every second, batch log processor, "
        "exporters that discard). A ratio is the median of the per-repetition ratios (range): for a rate, "
        "0.97x is 3% slower than before; for CPU per operation (the server process's user + system time), "
        "1.03x is 3% more.",
        "",
        *(
            [
                "`--quick` counts are far too small for these numbers to mean anything: it checks the answers and "
                "that the SDK server exported spans.",
                "",
            ]
            if quick
            else []
        ),
        f"| transport | measurement | before |{heads} api: 3% |",
        "|---|---|---|" + "---|---|" * len(COMPARED) + "---|",
    ]
    for transport in TRANSPORTS:
        for row in ROWS:
            cells = "".join(
                f" {fmt(median_of(samples, name, transport, row.key), row.unit)}"
                f" | {fmt_ratio(ratios(samples, transport, row.key, name, 'before'))} |"
                for name, _ in COMPARED
            )
            arrow = "↑" if row.higher_is_better else "↓"
            before = fmt(median_of(samples, "before", transport, row.key), row.unit)
            verdict_cell = judge(samples, transport, row)
            out.append(f"| {transport} | {row.label} ({row.unit}) {arrow} | {before} |{cells} {verdict_cell} |")
    out += [
        "",
        "Server CPU per operation (µs), the same runs:",
        "",
        f"| transport | operation | before |{heads}",
        "|---|---|---|" + "---|---|" * len(COMPARED),
    ]
    for transport in TRANSPORTS:
        for row in ROWS:
            if row.cpu_key is None:
                continue
            cells = "".join(
                f" {fmt(median_of(samples, name, transport, row.cpu_key))}"
                f" | {fmt_ratio(ratios(samples, transport, row.cpu_key, name, 'before'))} |"
                for name, _ in COMPARED
            )
            before = fmt(median_of(samples, "before", transport, row.cpu_key))
            out.append(f"| {transport} | {row.label} | {before} |{cells}")
    spans = [m["spans"] for transport in TRANSPORTS for m in samples.get(("sdk", transport), []) if "spans" in m]
    if spans:
        out += ["", f"Spans the SDK server exported per start (median): {statistics.median(spans):,.0f}."]
    return "\n".join(out) + "\n"


def splice(text: str, block: str) -> str:
    """``text`` (RESULTS.md) with its telemetry section replaced by ``block`` (or added before the
    section on broken answers, or at the end)."""
    return curve_report.splice_section(text, HEADING, block)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="each server once per transport, tiny counts")
    parser.add_argument("--reps", type=int, default=5, help="repetitions (default 5; --quick: 1)")
    parser.add_argument("--budget", type=float, default=900.0, help="start no repetition past this (s)")
    parser.add_argument("--before", default=BEFORE, help=f"the commit without instrumentation (default {BEFORE})")
    parser.add_argument("--out", type=Path, help="also write the table into this file's telemetry section")
    parser.add_argument("--logs", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "bench-logs")
    ns = parser.parse_args()
    if shutil.which("git") is None or shutil.which("tar") is None:
        print("needs git and tar (to extract the tree before the instrumentation)", file=sys.stderr)
        return 2
    ns.logs.mkdir(parents=True, exist_ok=True)
    print(f"server logs (stderr) in {ns.logs}", flush=True)
    started = time.perf_counter()
    plan, reps = (QUICK, 1) if ns.quick else (PLAN, ns.reps)
    samples, problems, done = asyncio.run(run(plan, reps, ns.budget, ns.logs, ns.before))
    text = table(samples, done, time.perf_counter() - started, ns.quick, ns.before)
    print(text)
    if ns.out is not None:
        ns.out.write_text(splice(ns.out.read_text() if ns.out.exists() else "", text))
        print(f"wrote the telemetry section of {ns.out}")
    for problem in problems:
        print(f"wrong: {problem}", file=sys.stderr)
    print(f"{(time.perf_counter() - started):.0f} s, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
