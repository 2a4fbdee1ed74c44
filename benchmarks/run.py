"""Run the bench contract against every contract server and compare them in one run.

    python benchmarks/run.py --quick     # each server answers the whole contract once per transport
    python benchmarks/run.py             # interleaved repetitions; writes benchmarks/RESULTS.md
    python benchmarks/run.py --fleet     # only the fleet rows and their reference; updates RESULTS.md
    python benchmarks/run.py --curves    # how cost grows (curves.py): benchmarks/curves/*.png + RESULTS.md section
    python benchmarks/run.py --http-floor   # only HTTP echo against its floor (http_floor_rows.py); updates RESULTS.md
    python benchmarks/run.py --composition [proxy middleware mount]   # only those rows; updates RESULTS.md
    python benchmarks/run.py --io        # only the I/O-bound workload's rows (io_bench.py); updates RESULTS.md

Servers: backchannel (``contract_server.py``), the official Python SDK (``peers/pysdk_server.py``),
FastMCP (``peers/fastmcp_server.py``), the official TypeScript SDK (``peers/ts_server.mjs``) over
stdio and Streamable HTTP, and the floor (``peers/floor.py`` over stdio; over HTTP ``peers/http_floor.py``,
the echo rows only: ``http_floor_rows.py``). ``--quick`` checks the
answers, never the speed (timings on shared 2-core machines are noise), and exits non-zero on any
wrong answer. The full mode runs every server once per repetition, in a rotating order (A B C, B C A,
...), and reports medians and the median of the per-repetition ratios. Everything listens on
127.0.0.1 only; every loop is bounded in count and time (see ``driver.Plan``).

The fleet rows (``fleet_bench.py``: two backchannel workers, one Redis, nginx round-robin) run in every
repetition of a full run, as one more server in the rotation; ``--fleet`` runs them with the official
Python SDK's HTTP server alone (their reference) and splices their rows and section into RESULTS.md.

The composition rows (``composition.py``: echo through a proxy, a middleware layer, a mount, over stdio,
against FastMCP's proxy and mount) also run in every repetition of a full run (``--no-composition``
leaves them out); ``--composition ROW ...`` runs only the rows named (``--quick``: checks their answers
once; ``--quick`` includes that) and splices their target rows and subsections into RESULTS.md.

The I/O-bound workload rows (``io_bench.py``: TM Dev Lab v2's tool shape, 50 users, against backchannel,
FastMCP and the TypeScript SDK) run with ``--io`` alone (``--io --quick``: each server briefly, answers
checked; ``--quick`` includes that); a full run keeps the rows and section of the last ``--io`` run.
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import importlib.metadata
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import composition
import curve_report
import driver
import fleet_report
import http_floor_rows
import io_bench
import io_report
import run_report
from fleet_services import missing_services
from report_format import Samples
from run_report import report
from servers import HERE, PY, ROOT, TS_SDK, Spec, node_binary, specs

import tasks as tasks_bench

FASTMCP_REQUIREMENT = "fastmcp>=4,<5"


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
    io_bench.ensure_installed()  # the I/O workload's load generator (npm ci in benchmarks/peers)


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


async def quick_io(log_dir: Path) -> int:
    """The I/O workload's servers once, briefly: 1 when an answer was wrong."""
    missing = io_bench.missing()
    if missing is not None:
        print(f"{'I/O workload':26} {'-':9} {'SKIPPED':8} ({missing})")
        return 0
    samples: Samples = {}
    problems: dict[str, list[str]] = {}
    started = time.perf_counter()
    await io_bench.run_io(samples, problems, 0, log_dir, io_bench.QUICK)
    wrong = [f"{who}: {item}" for who, items in problems.items() for item in items]
    verdict = "WRONG" if wrong else "ok"
    print(f"{'I/O workload':26} {'http':9} {verdict:8} {time.perf_counter() - started:.1f}", flush=True)
    for item in wrong:
        print(f"    wrong: {item}")
    return int(bool(wrong))


def io_only(ns: argparse.Namespace) -> int:
    """``--io``: only the I/O workload's rows, ``ns.reps`` times (``--quick``: once, answers checked);
    their target rows and section spliced into ``ns.out``."""
    if ns.quick:
        return asyncio.run(quick_io(ns.logs))
    missing = io_bench.missing()
    if missing is not None:
        print(f"the I/O workload cannot run here: {missing}", file=sys.stderr)
        return 1
    load_start = io_bench.load_average()
    started = time.perf_counter()
    samples: Samples = {}
    problems: dict[str, list[str]] = {}

    async def run_all() -> None:
        for rep in range(ns.reps):
            await io_bench.run_io(samples, problems, rep, ns.logs, io_bench.FULL)

    asyncio.run(run_all())
    (ns.logs / "io-samples.json").write_text(json.dumps({f"{n} {t}": r for (n, t), r in samples.items()}, indent=1))
    when = (
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, run alone (`run.py --io`) on "
        f"{machine().get('cpu', 'this machine')} ({os.cpu_count()} cores); load average {load_start} at the start, "
        f"{io_bench.load_average()} at the end"
    )
    text = ns.out.read_text() if ns.out.exists() else ""
    ns.out.write_text(io_report.splice(text, samples, ns.reps, io_bench.FULL, when))
    print("\n".join(io_report.target_rows(samples)))
    print(f"updated the I/O workload rows of {ns.out} ({(time.perf_counter() - started) / 60:.1f} min)")
    wrong = [f"{who}: {item}" for who, items in problems.items() for item in items]
    for item in wrong:
        print(item, file=sys.stderr)
    return 1 if wrong else 0


async def quick_composition(log_dir: Path) -> int:
    """The composition rows once, with tiny counts: 1 when an answer was wrong."""
    samples: Samples = {}
    problems: dict[str, list[str]] = {}
    await composition.repetition(samples, problems, 0, log_dir, composition.ROWS, composition.QUICK)
    wrong = [f"{who}: {item}" for who, items in problems.items() for item in items]
    print(f"{'composition rows':26} {'stdio':9} {'WRONG' if wrong else 'ok':8}", flush=True)
    for item in wrong:
        print(f"    wrong: {item}")
    return int(bool(wrong))


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
                **spec.options(transport),
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
    failures += await quick_io(log_dir)
    failures += await quick_composition(log_dir)
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


async def full(
    spec_list: list[Spec],
    reps: int,
    budget: float,
    log_dir: Path,
    *,
    fleet: bool = True,
    transports: frozenset[str] = frozenset({"stdio", "http"}),
    tasks: bool = True,
    composition_rows: tuple[str, ...] = (),
) -> tuple[Samples, dict[str, list[str]], int]:
    """``reps`` repetitions of every server (over ``transports``), with ``fleet`` the fleet, and the
    ``composition_rows``."""
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
                    **spec.options(transport),
                )
                samples.setdefault((spec.name, transport), []).append(result.metrics)
                for error in result.errors:
                    problems.setdefault(f"{spec.label} {transport}", []).append(f"wrong (rep {rep + 1}): {error}")
                for deviation in result.deviations:
                    problems.setdefault(f"{spec.label} {transport}", []).append(f"SDK deviation: {deviation}")
                print(f"rep {rep + 1}: {spec.label:26} {transport:5} {result.seconds:5.1f} s", flush=True)
        if tasks:
            await tasks_bench.repetition(samples, problems, rep, log_dir, [s.name for s in spec_list if not s.missing])
        if composition_rows:
            await composition.repetition(samples, problems, rep, log_dir, composition_rows)
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


def composition_only(ns: argparse.Namespace) -> int:
    """``--composition ROW ...``: only those rows, ``ns.reps`` times (once, answers checked, with ``--quick``);
    their target rows and subsections spliced into ``ns.out``."""
    rows = tuple(ns.composition or composition.ROWS)
    if composition.missing() is not None:
        print(f"FastMCP's side is skipped: {composition.missing()}", flush=True)
    load_start = composition.load_average()
    started = time.perf_counter()
    plan = composition.QUICK if ns.quick else composition.FULL
    reps = 1 if ns.quick else ns.reps
    samples: Samples = {}
    problems: dict[str, list[str]] = {}

    async def run_all() -> None:
        for rep in range(reps):
            await composition.repetition(samples, problems, rep, ns.logs, rows, plan)

    asyncio.run(run_all())
    wrong = [f"{who}: {item}" for who, items in problems.items() for item in items]
    labels = {spec.name: spec.label for spec in specs()}
    targets = run_report.composition_target_rows(samples, rows, labels)
    print("\n".join(targets))
    if ns.quick:
        print(f"composition rows {', '.join(rows)}: {'WRONG' if wrong else 'ok'}")
    else:
        when = composition.when_run(True, load_start, composition.load_average())
        text = ns.out.read_text() if ns.out.exists() else ""
        ns.out.write_text(composition.splice(text, targets, samples, rows, reps, when))
        print(f"updated the rows {', '.join(rows)} of {ns.out} ({(time.perf_counter() - started) / 60:.1f} min)")
    for item in wrong:
        print(item, file=sys.stderr)
    return 1 if wrong else 0


def compiled_sources() -> None:
    """Every module of ``src/`` and ``benchmarks/`` compiled to bytecode before a server starts: where
    ``PYTHONDONTWRITEBYTECODE`` is set (this machine sets it), a module changed since its ``.pyc``
    was written would be compiled again at every start, in the cold start and the idle RSS."""
    for tree in (HERE.parent / "src", HERE):
        compileall.compile_dir(tree, quiet=1, workers=1)


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
    parser.add_argument(
        "--composition",
        nargs="*",
        choices=composition.ROWS,
        help="only these composition rows (all when none is named); splice them into --out",
    )
    parser.add_argument("--no-composition", action="store_true", help="leave the composition rows out")
    parser.add_argument(
        "--io", action="store_true", help="only the I/O-bound workload's rows (io_bench.py); splice them into --out"
    )
    parser.add_argument(
        "--http-floor", action="store_true", help="only HTTP echo against the HTTP floor; splice them into --out"
    )
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    parser.add_argument("--logs", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "bench-logs")
    ns = parser.parse_args()
    ensure_installed(lambda line: print(line, flush=True))
    compiled_sources()
    spec_list = specs()
    if ns.only:
        spec_list = [spec for spec in spec_list if spec.name in ns.only]
    ns.logs.mkdir(parents=True, exist_ok=True)
    print(f"server logs (stderr) in {ns.logs}", flush=True)
    if ns.composition is not None:
        return composition_only(ns)
    if ns.io:
        return io_only(ns)
    if ns.http_floor:
        return http_floor_rows.run_alone(ns.quick, ns.reps, ns.logs, ns.out)
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
    rows = () if ns.no_composition else composition.ROWS
    samples, problems, done = asyncio.run(
        full(spec_list, ns.reps, ns.budget, ns.logs, fleet=with_fleet, composition_rows=rows)
    )
    raw = {f"{name} {transport}": reps for (name, transport), reps in samples.items()}
    (ns.logs / "samples.json").write_text(json.dumps(raw, indent=1))
    text = report(spec_list, samples, problems, done, time.perf_counter() - started, info)
    old = ns.out.read_text() if ns.out.exists() else ""
    text = curve_report.carry_over(old, text)
    text = io_report.carry_over(old, text)  # measured by --io alone
    if not rows:  # --no-composition: the rows and section of the last run that had them stay
        text = composition.carry_over(old, text)
    ns.out.write_text(text)
    print(f"wrote {ns.out} ({(time.perf_counter() - started) / 60:.1f} min)")
    wrong = [item for items in problems.values() for item in items if item.startswith("wrong")]
    for item in wrong:
        print(item, file=sys.stderr)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
