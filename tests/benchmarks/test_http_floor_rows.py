"""``benchmarks/http_floor_rows.py``: the HTTP echo rows against the HTTP floor (issue #32), in a
full run's report and spliced alone (``run.py --http-floor``) into a RESULTS.md.

The numbers are made up; what is checked is which rows appear, their verdicts, and that a splice
replaces the rows and the section of the run before it and touches nothing else.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import http_floor_rows
import run
import run_report

KEYS = ("echo_per_s", "echo32_per_s", "stateless_echo_per_s", "stateless_echo32_per_s")


def _samples(ours: float, floor: float) -> run.Samples:
    def row(rate: float) -> dict[str, float]:
        found = {key: rate for key in KEYS}
        found.update({key.replace("_per_s", "_server_cpu_us"): 1e6 / rate for key in KEYS})
        return found

    return {("backchannel", "http"): [row(ours)] * 3, ("floor", "http"): [row(floor)] * 3}


def _specs() -> list[run.Spec]:
    return [run.Spec(name, name, ["true"], ["true"]) for name in ("backchannel", "floor")]


def test_the_report_has_the_four_floor_targets_and_the_section() -> None:
    text = run_report.report(_specs(), _samples(90.0, 100.0), {}, 3, 60.0, {})
    rows = [line for line in text.splitlines() if "the HTTP floor |" in line]
    assert [row.split("|")[1].strip() for row in rows] == [t.label for t in http_floor_rows.TARGETS]
    assert all("**pass**" in row and "0.90x" in row for row in rows)
    assert http_floor_rows.HEADING in text and "without a session (2026-07-28), 32 in flight" in text


def test_below_the_bound_is_a_miss() -> None:
    lines = http_floor_rows.target_lines(_samples(70.0, 100.0), {"floor": "floor", "backchannel": "backchannel"})
    assert len(lines) == 4 and all("**MISS**" in line and "0.70x" in line for line in lines)


def test_a_splice_replaces_the_rows_and_the_section_of_the_run_before() -> None:
    labels = {"floor": "floor", "backchannel": "backchannel"}
    other = "| stdio echo one at a time ≥ 4x official Python SDK | 1 | 2 | 3 | 4 | **pass** | - |"
    text = "\n".join(
        [
            "# Benchmarks",
            "",
            "## Targets",
            "",
            "| target | a |",
            "|---|---|",
            other,
            "",
            "## Answers that broke the contract",
            "",
        ]
    )
    first = http_floor_rows.splice(
        text,
        http_floor_rows.target_lines(_samples(50.0, 100.0), labels),
        http_floor_rows.section(_samples(50.0, 100.0), 3, "first"),
    )
    second = http_floor_rows.splice(
        first,
        http_floor_rows.target_lines(_samples(90.0, 100.0), labels),
        http_floor_rows.section(_samples(90.0, 100.0), 3, "second"),
    )
    assert second.count("the HTTP floor |") == 4 and "0.50x" not in second and "0.90x" in second
    assert second.count(http_floor_rows.HEADING) == 1 and "first" not in second and "second" in second
    assert other in second and second.index(other) < second.index("the HTTP floor |")
    assert second.index(http_floor_rows.HEADING) < second.index("## Answers that broke the contract")
