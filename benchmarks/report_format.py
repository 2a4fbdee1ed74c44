"""What ``run.py``'s report and the fleet section (``fleet_report.py``) share: the samples, their
medians and per-repetition ratios, and how numbers are written."""

from __future__ import annotations

__all__ = ["CPU_KEYS", "Samples", "Target", "cpu_ratios", "fmt", "fmt_ratio", "median_of", "ratios", "target_row"]

import statistics
from dataclasses import dataclass

Samples = dict[tuple[str, str], list[dict[str, float]]]
"""(server, transport) → one metrics dict per repetition."""


def median_of(samples: Samples, server: str, transport: str, key: str) -> float | None:
    values = [m[key] for m in samples.get((server, transport), []) if key in m]
    return statistics.median(values) if values else None


def ratios(
    samples: Samples, transport: str, key: str, server: str, against: str, against_key: str | None = None
) -> list[float]:
    """Per-repetition ratios server/against (both measured in the same repetition); the
    reference's ``against_key`` when it is another measurement (default: ``key``)."""
    theirs_key = against_key or key
    mine = samples.get((server, transport), [])
    theirs = samples.get((against, transport), [])
    found = []
    for a, b in zip(mine, theirs, strict=False):
        if key in a and theirs_key in b and b[theirs_key] > 0:
            found.append(a[key] / b[theirs_key])
    return found


def fmt(value: float | None, unit: str = "") -> str:
    if value is None:
        return "-"
    if unit in ("calls/s", "notif/s", "sessions/s") or abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 100:
        return f"{value:.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def fmt_ratio(values: list[float], suffix: str = "x") -> str:
    if not values:
        return "-"
    middle = statistics.median(values)
    if len(values) == 1:
        return f"{middle:.2f}{suffix}"
    return f"{middle:.2f}{suffix} ({min(values):.2f}-{max(values):.2f})"


@dataclass(frozen=True)
class Target:
    """``server``'s ``key`` against ``against``'s (its ``against_key``, default the same key) in the
    same repetitions, at least or at most ``bound`` times it; ``against`` None: ``bound`` is an
    absolute bound on the measurement itself."""

    label: str
    transport: str
    key: str
    against: str | None
    bound: float
    at_least: bool
    server: str = "backchannel"
    against_key: str | None = None
    #: Judge the worst repetition instead of the median ("≥ 0.95x the floor on every rep").
    every_rep: bool = False


CPU_KEYS = {
    "echo_per_s": "echo_server_cpu_us",
    "echo32_per_s": "echo32_server_cpu_us",
    "direct_echo_per_s": "direct_echo_server_cpu_us",  # composition.py: the proxy's and the mount's direct runs
    "direct_echo32_per_s": "direct_echo32_server_cpu_us",
    "ask_per_s": "ask_server_cpu_us",
    "stateless_ask_per_s": "stateless_ask_server_cpu_us",
    "stateless_echo_per_s": "stateless_echo_server_cpu_us",  # http_floor_rows.py: HTTP echo without a session
    "stateless_echo32_per_s": "stateless_echo32_server_cpu_us",
    "progress_per_s": "progress_server_cpu_us",
    "completion_p99_ms": "completion_server_cpu_us",
}


def cpu_ratios(samples: Samples, target: Target) -> list[float]:
    """The target's comparison made with server CPU per operation, oriented like the target's ratio."""
    key = CPU_KEYS.get(target.key)
    theirs = CPU_KEYS.get(target.against_key or target.key)
    if key is None or theirs is None or target.against is None:
        return []
    found = ratios(samples, target.transport, key, target.server, target.against, theirs)
    if target.at_least:  # a rate: less CPU per operation is the same direction as a higher rate
        return [1 / r for r in found if r > 0]
    return found


def target_row(samples: Samples, target: Target, labels: dict[str, str], unit: str, scale: float = 1.0) -> str:
    """The summary table's row for ``target``: the numbers (times ``scale``, into ``unit``: an RSS is
    measured in KiB and shown in MiB), the ratio, the verdict, the CPU cross-check."""
    mine = _scaled(median_of(samples, target.server, target.transport, target.key), scale)
    if target.against is None:
        found = [m[target.key] for m in samples.get((target.server, target.transport), []) if target.key in m]
        reference, shown, bound = "-", fmt_ratio(found, ""), f"{target.bound:g}"
    else:
        theirs = _scaled(median_of(samples, target.against, target.transport, target.against_key or target.key), scale)
        found = ratios(samples, target.transport, target.key, target.server, target.against, target.against_key)
        reference = f"{labels[target.against]}: {fmt(theirs, unit)} {unit}"
        shown, bound = fmt_ratio(found), f"{target.bound:g}x"
    if found:
        worst = min(found) if target.at_least else max(found)
        judged = worst if target.every_rep else statistics.median(found)
        ok = judged >= target.bound if target.at_least else judged <= target.bound
        verdict = "**pass**" if ok else "**MISS**"
    else:
        verdict = "not measured"
    needed_when = " (every rep)" if target.every_rep else ""
    return (
        f"| {target.label} | {fmt(mine, unit)} {unit} | {reference} | {shown} "
        f"| {'≥' if target.at_least else '≤'} {bound}{needed_when} | {verdict} "
        f"| {fmt_ratio(cpu_ratios(samples, target))} |"
    )


def _scaled(value: float | None, scale: float) -> float | None:
    return value * scale if value is not None else None
