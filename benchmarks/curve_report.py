"""The curves drawn (one PNG each, matplotlib) and told (RESULTS.md's section "How cost grows").

How a series grows is its slope on log-log axes over the last three points reached (where the work
dominates fixed costs): a total cost (time per call against the result's size, memory against the
sessions held) is linear or better at a slope ≤ 1, a cost per unit of work (server CPU per call
against the calls in flight) at a slope ≤ 0. Slopes within 0.15 of the bound are called so:
the shared machine's noise moves single points by more than that.
"""

from __future__ import annotations

__all__ = ["CARRIED", "VIEWS", "carry_over", "draw", "section", "slope", "splice", "splice_section"]

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HEADING = "## How cost grows"
COLOURS = {"backchannel": "#1f4e9c", "backchannel_alone": "#7f9fd4", "pysdk": "#e07b00", "ts": "#2a9d3c"}
MARKERS = {"backchannel": "o", "backchannel_alone": "D", "pysdk": "s", "ts": "^"}
TOLERANCE = 0.15


def size_label(x: float) -> str:
    for unit, scale in (("MiB", 1024 * 1024), ("KiB", 1024)):
        if x >= scale:
            return f"{x / scale:g} {unit}"
    return f"{x:g} B"


def count_label(x: float) -> str:
    for unit, scale in (("M", 1e6), ("k", 1e3)):
        if x >= scale:
            return f"{x / scale:g}{unit}"
    return f"{x:g}"


@dataclass(frozen=True)
class Panel:
    metric: str
    label: str
    log_y: bool = True
    ideal: str | None = None
    """A metric drawn dashed and grey beside the runtimes' (what the work allows at best)."""


@dataclass(frozen=True)
class Growth:
    metric: str
    what: str
    unit: str
    per_unit: bool = False
    """True: a cost per unit of work (linear = flat); False: a total (linear = slope 1)."""
    higher_is_better: bool = False


@dataclass(frozen=True)
class View:
    title: str
    setup: str
    x_label: str
    x_text: Callable[[float], str]
    panels: list[Panel]
    growth: list[Growth]
    log_x: bool = True
    notes: list[str] = field(default_factory=list)


VIEWS: dict[str, View] = {
    "result_size": View(
        "Result size",
        "stdio, `blob(size)` one call at a time, sizes ascending in one process; server CPU from `schedstat`; "
        "peak RSS is the process's `VmHWM`",
        "result text",
        size_label,
        [
            Panel("calls_per_s", "calls/s"),
            Panel("server_cpu_ms", "server CPU per call (ms)"),
            Panel("peak_rss_mib", "peak RSS (MiB)", log_y=False),
        ],
        [
            Growth("server_cpu_ms", "server CPU per call", "ms"),
            Growth("ms_per_call", "wall time per call", "ms"),
            Growth("peak_rss_mib", "peak RSS", "MiB"),
        ],
        notes=[
            "- The wall time at 16 MiB is the driver's reading as much as the server's writing (40-60 ms to "
            "read and parse the line); server CPU is the server's cost (`docs/performance.md`)."
        ],
    ),
    "tools": View(
        "Number of tools",
        "stdio, a fresh server per count, all tools one function under many names; registration timed by the "
        "server itself (CPU); `tools/list` across all its pages (backchannel: 100 a page, the peers: one page), "
        "server CPU per full listing; RSS after listing",
        "tools registered",
        count_label,
        [
            Panel("register_cpu_ms", "registration, CPU (ms)"),
            Panel("list_cpu_ms", "tools/list, all pages, CPU (ms)"),
            Panel("rss_mib", "RSS (MiB)", log_y=False),
        ],
        [
            Growth("register_cpu_ms", "registration (CPU)", "ms"),
            Growth("list_cpu_ms", "listing them all (CPU)", "ms"),
            Growth("list_ms", "listing them all (wall)", "ms"),
            Growth("rss_mib", "RSS", "MiB"),
        ],
    ),
    "in_flight": View(
        "Calls in flight on one connection",
        "stdio, `sleep(20 ms)` calls kept in flight for 1 s each, widths ascending in one process; "
        "the dashed line is what 20 ms sleeps allow",
        "calls in flight",
        count_label,
        [
            Panel("calls_per_s", "calls/s", ideal="ideal_per_s"),
            Panel("server_cpu_us", "server CPU per call (µs)"),
            Panel("p99_ms", "latency p99 (ms)"),
        ],
        [Growth("server_cpu_us", "server CPU per call", "µs", per_unit=True), Growth("p99_ms", "latency p99", "ms")],
        notes=[
            "- Calls/s and latency follow the machine's load (other processes share its 2 cores); server "
            "CPU per call is the stable reading."
        ],
    ),
    "sessions": View(
        "Concurrent HTTP sessions",
        "Streamable HTTP, a fresh server per count; every session does `initialize`, `initialized` and one `echo`, "
        "all of them in progress together behind a gate of 64 requests in flight (64 keep-alive connections); "
        "latency of the echo POSTs; server CPU per session; RSS when all are open",
        "sessions",
        count_label,
        [
            Panel("p99_ms", "echo latency p99 (ms)"),
            Panel("server_cpu_us", "server CPU per session (µs)"),
            Panel("rss_mib", "RSS (MiB)", log_y=False),
        ],
        [
            Growth("server_cpu_us", "server CPU per session", "µs", per_unit=True),
            Growth("p99_ms", "echo latency p99", "ms", per_unit=True),
            Growth("rss_mib", "RSS", "MiB"),
        ],
        notes=[
            "- Stopped at 10,000: backchannel's default `max_sessions`. The machine allowed it; 10,000 "
            "connections at once would measure `run_http`'s `max_connections` (1,000) and the accept "
            "queue instead of the sessions, hence the gate of 64 (`docs/performance.md`)."
        ],
    ),
    "completion": View(
        "Completion candidates",
        "stdio, a fresh server per vocabulary; seeded 1-3 letter prefixes one at a time, every answer checked; "
        "each server finds the matches with the same binary search over the sorted list",
        "candidate words",
        count_label,
        [
            Panel("p99_ms", "latency p99 (ms)"),
            Panel("server_cpu_us", "server CPU per answer (µs)"),
            Panel("rss_mib", "RSS (MiB)", log_y=False),
        ],
        [Growth("server_cpu_us", "server CPU per answer", "µs"), Growth("p99_ms", "latency p99", "ms")],
    ),
    "workers": View(
        "Workers sharing one Redis",
        "Streamable HTTP through nginx round-robin; backchannel's contract server as 1 and 2 workers with "
        "`--redis`; 32 calls in flight on one session (consecutive requests land on different workers, so an "
        "ask's answer crosses Redis); the peers' contract servers, one process each behind the same nginx; "
        "CPU per call counts every process that serves it (servers, Redis, nginx)",
        "workers",
        lambda x: f"{x:g}",
        [
            Panel("echo_per_s", "echo calls/s", log_y=False),
            Panel("ask_per_s", "ask calls/s", log_y=False),
            Panel("echo_cpu_us", "CPU per echo (µs)", log_y=False),
            Panel("ask_cpu_us", "CPU per ask (µs)", log_y=False),
        ],
        [
            Growth("echo_per_s", "echo", "calls/s", higher_is_better=True),
            Growth("ask_per_s", "ask", "calls/s", higher_is_better=True),
            Growth("echo_cpu_us", "CPU per echo", "µs", per_unit=True),
            Growth("ask_cpu_us", "CPU per ask", "µs", per_unit=True),
        ],
        log_x=False,
        notes=[
            "- The machine's 2 cores serve the driver, nginx, Redis and the workers: a second worker brings "
            "no core here, so what shows is what it costs per call (`docs/performance.md`)."
        ],
    ),
}


def _points(x: list[float], values: list[float | None]) -> list[tuple[float, float]]:
    return [(a, b) for a, b in zip(x, values, strict=False) if b is not None and b > 0]


def slope(x: list[float], values: list[float | None], last: int = 3) -> float | None:
    """The least-squares slope of log(value) against log(x) over the last ``last`` points reached."""
    points = _points(x, values)[-last:]
    if len(points) < 2:
        return None
    xs = [math.log(a) for a, _ in points]
    ys = [math.log(b) for _, b in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    spread = sum((a - mx) ** 2 for a in xs)
    return sum((a - mx) * (b - my) for a, b in zip(xs, ys, strict=True)) / spread if spread else None


def draw(name: str, entry: dict[str, Any], out_dir: Path) -> Path | None:
    """``out_dir/NAME.png``: one panel per metric of the curve's view, a line per runtime."""
    view = VIEWS.get(name)
    if view is None or not entry.get("series"):
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = entry["x"]
    figure, axes = plt.subplots(1, len(view.panels), figsize=(4.6 * len(view.panels), 3.6), squeeze=False)
    for axis, panel in zip(axes[0], view.panels, strict=True):
        for runtime, series in entry["series"].items():
            points = _points(x, series.get(panel.metric, []))
            if not points:
                continue
            label = entry.get("runtimes", {}).get(runtime, runtime)
            style = {"color": COLOURS.get(runtime), "marker": MARKERS.get(runtime, "o"), "label": label}
            axis.plot([a for a, _ in points], [b for _, b in points], **style)
            ideal = _points(x, series.get(panel.ideal, [])) if panel.ideal else []
            if ideal and runtime == "backchannel":
                axis.plot([a for a, _ in ideal], [b for _, b in ideal], "--", color="grey", label="ideal")
        if view.log_x:
            axis.set_xscale("log")
        if panel.log_y:
            axis.set_yscale("log")
        else:
            axis.set_ylim(bottom=0)
        if not view.log_x:
            axis.margins(x=0.25)
        axis.set_xticks(x, [view.x_text(v) for v in x], rotation=30 if len(x) > 5 else 0)
        if view.log_x:
            axis.minorticks_off()
        axis.set_xlabel(view.x_label)
        axis.set_title(panel.label, fontsize=10)
        axis.grid(True, which="major", alpha=0.3)
    for axis in axes[0]:  # the legend on the first panel that has lines
        if axis.get_legend_handles_labels()[0]:
            axis.legend(fontsize=8)
            break
    figure.suptitle(f"{view.title} ({entry.get('when', '')}, load {entry.get('load', '?')})", fontsize=11)
    figure.tight_layout()
    path = out_dir / f"{name}.png"
    figure.savefig(path, dpi=90)
    plt.close(figure)
    return path


def _fmt(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def _verdict(growth: Growth, exponent: float) -> str:
    if growth.higher_is_better:
        return ""
    if growth.per_unit:
        if exponent < -TOLERANCE:
            return "falling"
        return "flat" if exponent <= TOLERANCE else "**rising**"
    if exponent < 1 - 0.5:
        return "better than linear"
    return "linear or better" if exponent <= 1 + TOLERANCE else "**bends upward**"


def growth_line(view: View, growth: Growth, entry: dict[str, Any]) -> str:
    x: list[float] = entry["x"]
    labels: dict[str, str] = entry.get("runtimes", {})
    series: dict[str, dict[str, list[float | None]]] = entry["series"]
    parts: list[str] = []
    last: dict[str, tuple[float, float]] = {}
    for runtime, metrics in series.items():
        points = _points(x, metrics.get(growth.metric, []))
        if not points:
            continue
        last[runtime] = points[-1]
        label = labels.get(runtime, runtime)
        if growth.higher_is_better:
            if len(points) < 2:
                continue
            first = points[0]
            change = f"x{points[-1][1] / first[1]:.2f} from {view.x_text(first[0])} to {view.x_text(points[-1][0])}"
            parts.append(f"{label} {change}")
            continue
        exponent = slope(x, metrics.get(growth.metric, []))
        if exponent is None:
            continue
        parts.append(f"{label} slope {exponent:.2f} ({_verdict(growth, exponent)})")
    if not parts:
        return ""
    # Against the best peer at the biggest work every runtime reached.
    common = min(point[0] for point in last.values())
    at: dict[str, float] = {}
    for runtime, metrics in series.items():
        for a, b in _points(x, metrics.get(growth.metric, [])):
            if a == common:
                at[runtime] = b
    values = ", ".join(f"{labels.get(r, r)} {_fmt(v)} {growth.unit}" for r, v in at.items())
    comparison = ""
    peers = {r: v for r, v in at.items() if not r.startswith("backchannel")}
    if "backchannel" in at and peers:
        best = max(peers, key=peers.__getitem__) if growth.higher_is_better else min(peers, key=peers.__getitem__)
        ratio = at["backchannel"] / peers[best]
        comparison = f"; backchannel is {ratio:.2f}x the best peer ({labels.get(best, best)})"
    return f"- **{growth.what}**: " + "; ".join(parts) + f". At {view.x_text(common)}: {values}{comparison}."


def section(data: dict[str, Any]) -> str:
    out = [
        HEADING,
        "",
        "Written by `python benchmarks/run.py --curves` (`benchmarks/curves.py`; raw numbers in "
        "`benchmarks/curves/data.json`). Each runtime is measured in turn, every answer checked; one run per point, "
        "so on this shared 2-core machine single points are noisy (the load average at each curve's start is in its "
        "title). The slope is that of log(cost) against log(work) over the last three points: for a total, 1 is "
        "linear; for a cost per call, 0 is flat. The ratio compares backchannel with the better of the two SDKs at "
        "the largest work all reached (lower is better, except for rates). `docs/performance.md` explains the "
        "shapes.",
        "",
    ]
    for name, view in VIEWS.items():
        entry = data.get(name)
        if entry is None:
            continue
        out += [f"### {view.title}", "", f"![{view.title}](curves/{name}.png)", ""]
        out.append(f"Setup: {view.setup}. Measured {entry.get('when', '?')} in {entry.get('seconds', 0):.0f} s.")
        out.append("")
        out += [line for growth in view.growth if (line := growth_line(view, growth, entry))]
        for runtime, errors in (entry.get("errors") or {}).items():
            label = entry.get("runtimes", {}).get(runtime, runtime)
            out.append(f"- stopped: {label}: " + "; ".join(errors[:3]))
        out += [*view.notes, ""]
    return "\n".join(out).rstrip("\n") + "\n"


def splice(text: str, block: str) -> str:
    """``text`` (a RESULTS.md) with its curves section replaced by ``block`` (added before the
    section on broken answers, or at the end, when it has none)."""
    return splice_section(text, HEADING, block)


#: The sections of RESULTS.md that other scripts write, which a full ``run.py`` (it writes the
#: file anew) keeps: the curves (``run.py --curves``, here) and the telemetry cost
#: (``telemetry_cost.py --out``, whose ``HEADING`` this is).
CARRIED = (HEADING, "## Telemetry cost")


def carry_over(old: str, new: str) -> str:
    """``new`` (a RESULTS.md just written) with the sections of ``old`` named in ``CARRIED`` kept."""
    for heading in CARRIED:
        found = re.search(rf"^{heading}.*?(?=^## |\Z)", old, flags=re.MULTILINE | re.DOTALL)
        if found is not None:
            new = splice_section(new, heading, found.group(0))
    return new


def splice_section(text: str, heading: str, block: str) -> str:
    """``text`` (a RESULTS.md) with its section under ``heading`` replaced by ``block`` (added before
    the section on broken answers, or at the end, when it has none)."""
    block = block.rstrip("\n") + "\n\n"
    found = re.search(rf"^{heading}.*?(?=^## |\Z)", text, flags=re.MULTILINE | re.DOTALL)
    if found is not None:
        return text[: found.start()] + block + text[found.end() :].lstrip("\n")
    before = re.search(r"^## Answers that broke the contract", text, flags=re.MULTILINE)
    if before is not None:
        return text[: before.start()] + block + text[before.start() :]
    return (text.rstrip("\n") + "\n\n" if text.strip() else "") + block.rstrip("\n") + "\n"
