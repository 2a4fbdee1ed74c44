"""``benchmarks/run.py``'s report: the verdict on each target, and runs that left servers out.

The numbers are made up (the measurements themselves run in ``.ci/run``'s smoke and in a
full ``run.py``); what is checked is how ratios become verdicts and which rows appear.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import run
import run_report


def _samples(factor: float, reps: int = 3) -> run.Samples:
    """backchannel ``factor`` times better than the official SDK on every metric."""
    samples: run.Samples = {}
    for metric in run_report.METRICS:
        theirs = 100.0
        mine = theirs * factor if metric.higher_is_better else theirs / factor
        for name, value in (("backchannel", mine), ("pysdk", theirs)):
            rows = samples.setdefault((name, metric.transport), [{} for _ in range(reps)])
            for row in rows:
                row[metric.key] = value
    return samples


def _target_rows(text: str) -> dict[str, str]:
    labels = {target.label for target in run_report.TARGETS}
    rows = {}
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if cells and cells[0] in labels:
            rows[cells[0]] = line
    return rows


def _specs(*names: str) -> list[run.Spec]:
    return [run.Spec(name, name, ["true"], ["true"]) for name in names]


def test_a_run_without_typescript_or_the_floor_reports_only_the_targets_it_measured() -> None:
    samples = _samples(100.0)
    text = run_report.report(_specs("backchannel", "pysdk"), samples, {}, 3, 60.0, {})
    rows = _target_rows(text)
    # Against the SDK that ran, against backchannel itself (through the proxy vs direct), or against no one.
    expected = {
        t.label
        for t in run_report.TARGETS
        if t.against in ("pysdk", "backchannel", None) and (t.server, t.transport) in samples
    }
    assert set(rows) == expected  # no row compares against a server that did not run
    against_sdk = {t.label for t in run_report.TARGETS if t.against == "pysdk"}
    assert all("**pass**" in row for label, row in rows.items() if label in against_sdk)  # 100x the SDK
    assert "on 2 servers" in text and "Ratios against the floor" not in text


@pytest.mark.parametrize(("factor", "verdict"), [(3.2, "**pass**"), (2.8, "**MISS**")])
def test_http_ask_needs_three_times_the_official_sdk(factor: float, verdict: str) -> None:
    samples = _samples(100.0)
    for row in samples[("backchannel", "http")]:
        row["ask_per_s"] = 100.0 * factor
    rows = _target_rows(run_report.report(_specs("backchannel", "pysdk"), samples, {}, 3, 60.0, {}))
    row = rows["HTTP ask ≥ 3x official Python SDK"]
    assert verdict in row and f"{factor:.2f}x" in row


def test_a_lower_is_better_target_misses_above_its_bound() -> None:
    samples = _samples(100.0)
    for row in samples[("backchannel", "stdio")]:
        row["cold_start_ms"] = 30.0  # 0.30x the official SDK's 100 ms: over the 0.25x bound
    rows = _target_rows(run_report.report(_specs("backchannel", "pysdk"), samples, {}, 3, 60.0, {}))
    assert "**MISS**" in rows["cold start ≤ 0.25x official Python SDK (stdio)"]


@pytest.mark.parametrize(("worst", "verdict"), [(0.96, "**pass**"), (0.90, "**MISS**")])
def test_an_every_rep_target_is_judged_on_its_worst_repetition(worst: float, verdict: str) -> None:
    """Echo against the floor must hold in every repetition: a median of 0.99x with one rep at 0.90x misses."""
    samples = _samples(100.0)
    for name in ("floor",):
        samples[(name, "stdio")] = [{"echo_per_s": 100.0} for _ in range(3)]
    for row, ratio in zip(samples[("backchannel", "stdio")], (0.99, worst, 1.0), strict=True):
        row["echo_per_s"] = 100.0 * ratio
    text = run_report.report(_specs("backchannel", "pysdk", "floor"), samples, {}, 3, 60.0, {})
    row = _target_rows(text)["stdio echo one at a time ≥ 0.95x the floor, every repetition"]
    assert verdict in row and "(every rep)" in row


def test_a_target_on_a_scaled_measurement_shows_it_in_its_unit() -> None:
    """Idle RSS is measured in KiB and shown in MiB, in the targets table as in the medians."""
    samples = _samples(100.0)
    samples[("floor", "stdio")] = [{"idle_rss_kb": 20480.0} for _ in range(3)]
    for row in samples[("backchannel", "stdio")]:
        row["idle_rss_kb"] = 25600.0
    text = run_report.report(_specs("backchannel", "pysdk", "floor"), samples, {}, 3, 60.0, {})
    row = _target_rows(text)["idle RSS ≤ 1.3x the floor (stdio)"]
    assert "| 25.0 MiB |" in row and ": 20.0 MiB |" in row and "1.25x" in row
