"""``benchmarks/run.py --curves``'s report (``curve_report.py``): how a curve's growth is read and
told, and that its section of RESULTS.md survives the other writers of that file.

The numbers are made up (the curves themselves run only in ``run.py --curves``, never in
``.ci/run``); what is checked is the reading of slopes and where the section goes.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import curve_report
import fleet_report
import telemetry_cost

X = [10.0, 100.0, 1000.0, 10000.0]


def _entry(**series: list[float | None]) -> dict[str, Any]:
    """A tools curve where backchannel's listing grows as ``series`` says and the peers' linearly."""
    linear = [x / 10 for x in X]
    return {
        "x": X,
        "series": {
            "backchannel": {"list_cpu_ms": series.get("backchannel", linear)},
            "pysdk": {"list_cpu_ms": [v * 30 for v in linear]},
            "ts": {"list_cpu_ms": [v * 10 for v in linear]},
        },
        "runtimes": {"backchannel": "backchannel", "pysdk": "official Python SDK", "ts": "TypeScript SDK"},
        "errors": {},
        "when": "2026-12-02 00:00 UTC",
        "seconds": 12.0,
    }


def test_slope_reads_the_last_points_on_log_axes() -> None:
    assert curve_report.slope(X, [x for x in X]) == pytest.approx(1.0)
    assert curve_report.slope(X, [5.0, 5.0, 5.0 * 10, 5.0 * 100]) == pytest.approx(1.0)  # the first point left out
    assert curve_report.slope(X, [x**2 for x in X]) == pytest.approx(2.0)
    assert curve_report.slope(X, [1.0, None, None, None]) is None  # one point: no slope


def test_a_curve_that_bends_upward_is_called_so() -> None:
    view = curve_report.VIEWS["tools"]
    growth = next(g for g in view.growth if g.metric == "list_cpu_ms")
    linear = curve_report.growth_line(view, growth, _entry())
    assert "backchannel slope 1.00 (linear or better)" in linear
    assert "backchannel is 0.10x the best peer (TypeScript SDK)" in linear
    bent = curve_report.growth_line(view, growth, _entry(backchannel=[x * x / 1000 for x in X]))
    assert "backchannel slope 2.00 (**bends upward**)" in bent


def test_the_section_is_kept_through_a_full_run_and_a_fleet_splice(tmp_path: Path) -> None:
    data = {"tools": _entry()}
    section = curve_report.section(data)
    assert section.startswith(curve_report.HEADING) and "![Number of tools](curves/tools.png)" in section
    results = "# Benchmarks\n\n## Medians\n\nrows\n\n## Answers that broke the contract\n\nNone.\n"
    spliced = curve_report.splice(results, section)
    assert spliced.index(curve_report.HEADING) < spliced.index("## Answers that broke the contract")
    assert curve_report.splice(spliced, section) == spliced  # written again: replaced, not added
    # run.py's full mode writes RESULTS.md anew; the curves section of the old file is carried over
    rewritten = "# Benchmarks\n\n## Medians\n\nnew rows\n\n## Answers that broke the contract\n\nNone.\n"
    kept = curve_report.carry_over(spliced, rewritten)
    assert "new rows" in kept and kept.count(curve_report.HEADING) == 1 and "curves/tools.png" in kept
    # and run.py --fleet's splice leaves it where it is
    fleet = fleet_report.splice(kept, [], "## Fleet: 2 workers\n\nfleet text\n")
    assert fleet.count(curve_report.HEADING) == 1 and "curves/tools.png" in fleet


def test_the_telemetry_cost_section_is_kept_through_a_full_run_too() -> None:
    """``telemetry_cost.py --out`` writes its section into RESULTS.md; ``run.py``'s full mode,
    which writes the file anew, carries it over with the curves, each once and in its place."""
    results = "# Benchmarks\n\n## Medians\n\nrows\n\n## Answers that broke the contract\n\nNone.\n"
    written = curve_report.splice(results, curve_report.section({"tools": _entry()}))
    written = telemetry_cost.splice(written, f"{telemetry_cost.HEADING}\n\n| stdio | echo | 1.01x |\n")
    rewritten = "# Benchmarks\n\n## Medians\n\nnew rows\n\n## Answers that broke the contract\n\nNone.\n"
    kept = curve_report.carry_over(written, rewritten)
    assert "new rows" in kept and "| stdio | echo | 1.01x |" in kept
    assert kept.count(telemetry_cost.HEADING) == 1 and kept.count(curve_report.HEADING) == 1
    order = [kept.index(h) for h in (curve_report.HEADING, telemetry_cost.HEADING, "## Answers that broke")]
    assert order == sorted(order)
    assert curve_report.carry_over(kept, kept) == kept  # carried again: nothing added


def test_each_curve_is_drawn(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")  # the dev extra's; run.py --curves needs it, nothing else does
    path = curve_report.draw("tools", _entry(), tmp_path)
    assert path is not None and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
