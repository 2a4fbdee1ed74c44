"""How cost grows: backchannel, the official Python SDK and the TypeScript SDK side by side as the work grows.

    python benchmarks/run.py --curves                    # every curve (about 10 minutes on the 2-core machine)
    python benchmarks/curves.py [--only tools sessions]  # some of them; the others keep their last data
    python benchmarks/curves.py --tiny                   # a few small points of each: does it all run?
    python benchmarks/curves.py --redraw                 # the PNGs and the section again, from data.json

Each curve is measured for each runtime in turn (the servers: ``curve_server.py``,
``peers/pysdk_curve_server.py``, ``peers/ts_curve_server.mjs``; the workers curve uses the contract
servers), every answer checked. The numbers go to ``benchmarks/curves/data.json`` (merged per curve, so
``--only`` keeps the rest), one PNG per curve is drawn in ``benchmarks/curves/``, and the section
"How cost grows" of ``benchmarks/RESULTS.md`` is written again from all of them (``curve_report.py``).
Nothing here asserts a speed.
"""

from __future__ import annotations

__all__ = ["CURVES", "FULL", "TINY", "Runtime", "main", "run_curves"]

import argparse
import asyncio
import datetime
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import curve_http  # noqa: E402
import curve_report  # noqa: E402
import curve_stdio  # noqa: E402
from curve_stdio import Series  # noqa: E402
from fleet_services import missing_services  # noqa: E402
from servers import node_binary  # noqa: E402

PY = sys.executable
OUT_DIR = HERE / "curves"
ALONE, ALONE_LABEL = "backchannel_alone", "backchannel, one process, no Redis"
FIXED_TOOLS = 4
"""echo, sleep, blob, curve_stats: the curve servers' tools besides the grown ones."""


@dataclass(frozen=True)
class Runtime:
    name: str
    label: str
    stdio: list[str]
    http: list[str]
    contract_http: list[str]
    missing: str | None = None


def runtimes(node: str | None) -> list[Runtime]:
    ts_missing = None if node else "no Node >= 20 or no tests/node_modules"
    return [
        Runtime(
            "backchannel",
            "backchannel",
            [PY, str(HERE / "curve_server.py"), "stdio"],
            [PY, str(HERE / "curve_server.py"), "http"],
            [PY, str(HERE / "contract_server.py"), "http"],
        ),
        Runtime(
            "pysdk",
            "official Python SDK",
            [PY, str(HERE / "peers" / "pysdk_curve_server.py"), "stdio"],
            [PY, str(HERE / "peers" / "pysdk_curve_server.py"), "http"],
            [PY, str(HERE / "peers" / "pysdk_server.py"), "http"],
        ),
        Runtime(
            "ts",
            "TypeScript SDK",
            [node or "node", str(HERE / "peers" / "ts_curve_server.mjs"), "stdio"],
            [node or "node", str(HERE / "peers" / "ts_curve_server.mjs"), "http"],
            [node or "node", str(HERE / "peers" / "ts_server.mjs"), "http"],
            missing=ts_missing,
        ),
    ]


@dataclass(frozen=True)
class Plan:
    sizes: tuple[int, ...]
    size_seconds: float
    tool_counts: tuple[int, ...]
    list_seconds: float
    widths: tuple[int, ...]
    sleep_ms: int
    width_seconds: float
    session_counts: tuple[int, ...]
    connections: int
    word_counts: tuple[int, ...]
    completions: int
    completion_seconds: float
    workers: tuple[int, ...]
    worker_in_flight: int
    worker_seconds: float


KIB = 1024
FULL = Plan(
    sizes=(KIB, 4 * KIB, 16 * KIB, 64 * KIB, 256 * KIB, KIB * KIB, 4 * KIB * KIB, 16 * KIB * KIB),
    size_seconds=0.7,
    tool_counts=(10, 100, 1000, 3000, 10000),
    list_seconds=0.7,
    widths=(1, 4, 16, 64, 256, 1000),
    sleep_ms=20,
    width_seconds=1.0,
    session_counts=(1, 10, 100, 1000, 10000),
    connections=64,
    word_counts=(1000, 10000, 100000, 1000000),
    completions=600,
    completion_seconds=2.0,
    workers=(1, 2),
    worker_in_flight=32,
    worker_seconds=2.0,
)
TINY = Plan(
    sizes=(KIB, 64 * KIB),
    size_seconds=0.1,
    tool_counts=(10, 200),
    list_seconds=0.1,
    widths=(1, 16),
    sleep_ms=5,
    width_seconds=0.2,
    session_counts=(1, 20),
    connections=8,
    word_counts=(1000, 20000),
    completions=40,
    completion_seconds=0.3,
    workers=(1, 2),
    worker_in_flight=4,
    worker_seconds=0.3,
)

Measure = Callable[[Runtime, Plan, Any, list[str]], Awaitable[Series]]


async def _result_size(rt: Runtime, plan: Plan, log: Any, errors: list[str]) -> Series:
    return await curve_stdio.result_size(rt.stdio, log, errors, plan.sizes, plan.size_seconds, 3, 2000)


async def _tools(rt: Runtime, plan: Plan, log: Any, errors: list[str]) -> Series:
    return await curve_stdio.tools(rt.stdio, log, errors, plan.tool_counts, plan.list_seconds, 3, FIXED_TOOLS)


async def _in_flight(rt: Runtime, plan: Plan, log: Any, errors: list[str]) -> Series:
    return await curve_stdio.in_flight(rt.stdio, log, errors, plan.widths, plan.sleep_ms, plan.width_seconds)


async def _completion(rt: Runtime, plan: Plan, log: Any, errors: list[str]) -> Series:
    return await curve_stdio.completion(
        rt.stdio, log, errors, plan.word_counts, plan.completions, plan.completion_seconds, 20
    )


async def _sessions(rt: Runtime, plan: Plan, log: Any, errors: list[str]) -> Series:
    return await curve_http.sessions(rt.http, log, errors, plan.session_counts, plan.connections, 600.0)


CURVES: dict[str, tuple[Measure, Callable[[Plan], tuple[int, ...]]]] = {
    "result_size": (_result_size, lambda plan: plan.sizes),
    "tools": (_tools, lambda plan: plan.tool_counts),
    "in_flight": (_in_flight, lambda plan: plan.widths),
    "sessions": (_sessions, lambda plan: plan.session_counts),
    "completion": (_completion, lambda plan: plan.word_counts),
}
ALL = [*CURVES, "workers"]


async def _workers(plan: Plan, specs: list[Runtime], log_dir: Path) -> dict[str, Any]:
    """Backchannel with 1..N workers and Redis; each peer's contract server alone, all behind nginx."""
    series: dict[str, Series] = {}
    errors: dict[str, list[str]] = {}
    missing = missing_services()
    if missing is not None:
        return {"x": list(plan.workers), "series": {}, "errors": {"backchannel": [missing]}}
    setups: list[tuple[str, list[list[str]], bool]] = []
    for rt in specs:
        if rt.name == "backchannel":
            worker = [PY, str(HERE / "contract_server.py"), "http", "--redis", "{redis}"]
            setups += [("backchannel", [worker] * count, True) for count in plan.workers]
            setups.append((ALONE, [rt.contract_http], False))  # what Redis costs, beside what a worker adds
        else:
            setups.append((rt.name, [rt.contract_http], False))
    for name, argvs, redis in setups:
        index = plan.workers.index(len(argvs))
        try:
            with curve_http.behind_nginx(argvs, log_dir, redis) as (port, pids):
                point = await curve_http.workers_point(port, pids, plan.worker_in_flight, plan.worker_seconds, 0.5)
        except Exception as exc:  # a setup that fails is a missing point, said in the section
            errors.setdefault(name, []).append(f"{len(argvs)} worker(s): {type(exc).__name__}: {exc}")
            continue
        for key, value in point.items():
            series.setdefault(name, {}).setdefault(key, [None] * len(plan.workers))[index] = value
        print(f"  workers: {name} x{len(argvs)}: " + ", ".join(f"{k} {v:,.0f}" for k, v in point.items()), flush=True)
    return {
        "x": list(plan.workers),
        "series": series,
        "errors": errors,
        "labels": {"backchannel": "backchannel workers, one Redis", ALONE: ALONE_LABEL},
    }


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


async def run_curves(names: list[str], plan: Plan, node: str | None, log_dir: Path) -> dict[str, Any]:
    """Measure the curves ``names`` for every runtime that can run here; one data entry per curve."""
    specs = [rt for rt in runtimes(node) if rt.missing is None]
    found: dict[str, Any] = {}
    for name in names:
        started = time.perf_counter()
        load = load_average()
        if name == "workers":
            entry = await _workers(plan, specs, log_dir)
        else:
            measure, points = CURVES[name]
            x = list(points(plan))
            entry = {"x": x, "series": {}, "errors": {}}
            for rt in specs:
                errors: list[str] = []
                with (log_dir / f"curve-{name}-{rt.name}.log").open("ab") as log:
                    try:
                        series = await measure(rt, plan, log, errors)
                    except Exception as exc:  # the server did not start or answer: no points for it
                        errors.append(f"{type(exc).__name__}: {exc}")
                        series = {}
                for values in series.values():
                    values.extend([None] * (len(x) - len(values)))
                entry["series"][rt.name] = series
                if errors:
                    entry["errors"][rt.name] = errors
                reached = len([v for v in next(iter(series.values()), []) if v is not None])
                print(f"  {name}: {rt.label}: {reached}/{len(x)} points" + (f" ({errors[0]})" if errors else ""))
        entry["seconds"] = time.perf_counter() - started
        entry["when"] = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
        entry["load"] = load
        entry["runtimes"] = {rt.name: rt.label for rt in specs} | entry.pop("labels", {})
        found[name] = entry
        print(f"{name}: {entry['seconds']:.0f} s", flush=True)
    return found


def curves_main(
    names: list[str], plan: Plan, node: str | None, log_dir: Path, results: Path, out_dir: Path = OUT_DIR
) -> int:
    """Measure, merge into ``out_dir/data.json``, draw every curve there, rewrite ``results``' section."""
    out_dir.mkdir(parents=True, exist_ok=True)
    log_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    fresh = asyncio.run(run_curves(names, plan, node, log_dir)) if names else {}
    data_file = out_dir / "data.json"
    data = json.loads(data_file.read_text()) if data_file.exists() else {}
    data.update(fresh)
    data_file.write_text(json.dumps(data, indent=1) + "\n")
    for name, entry in data.items():
        curve_report.draw(name, entry, out_dir)
    text = results.read_text() if results.exists() else ""
    results.write_text(curve_report.splice(text, curve_report.section(data)))
    minutes = (time.perf_counter() - started) / 60
    print(f"curves: {', '.join(names) or 'none measured'} in {minutes:.1f} min; {results} updated")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--only", nargs="*", choices=ALL, help="these curves (default: all)")
    parser.add_argument("--redraw", action="store_true", help="measure nothing: draw and write from data.json")
    parser.add_argument(
        "--tiny", action="store_true", help="a few small points of each curve, written under --logs (a smoke run)"
    )
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md", help="the RESULTS.md to update")
    parser.add_argument("--out-dir", type=Path, default=OUT_DIR, help="where data.json and the PNGs go")
    parser.add_argument("--logs", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "bench-logs")
    ns = parser.parse_args(argv)
    names = [] if ns.redraw else ns.only or ALL
    if ns.tiny:  # never over the real data: its own folder and its own copy of RESULTS.md
        tiny = ns.logs / "curves-tiny"
        return curves_main(names, TINY, node_binary(), ns.logs, tiny / "RESULTS.md", tiny)
    return curves_main(names, FULL, node_binary(), ns.logs, ns.out, ns.out_dir)


if __name__ == "__main__":
    sys.exit(main())
