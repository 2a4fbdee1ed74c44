"""``benchmarks/run.py --io``'s report (``io_report.py``): its target rows and section go into RESULTS.md,
replace the last ones, and survive a full run that does not measure them."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import io_report
from io_bench import FULL

RESULTS = """# Results

## Targets

| target | backchannel | reference | ratio (range) | needed | result | by server CPU/op |
|---|---|---|---|---|---|---|
| stdio echo ≥ 1x floor | 1 | 1 | 1x | ≥ 1x | **pass** | - |

## Fleet

fleet text

## Answers that broke the contract

none
"""


def _samples(ours: float, fastmcp: float, ts: float, p99: float) -> dict[tuple[str, str], list[dict[str, float]]]:
    def metrics(rps: float, p99_ms: float) -> dict[str, float]:
        return {"io_per_s": rps, "io_call_p99_ms": p99_ms, "io_server_cpu_us": 1e6 / rps, "io_cmd_get": 1.0}

    return {
        ("io-backchannel", "http"): [metrics(ours, p99)],
        ("io-backchannel-2w", "http"): [metrics(ours * 1.5, p99)],
        ("io-fastmcp", "http"): [metrics(fastmcp, 100.0)],
        ("io-fastmcp-2w", "http"): [metrics(fastmcp * 1.5, 100.0)],
        ("io-ts", "http"): [metrics(ts, 20.0)],
    }


def test_rows_and_section_are_spliced_judged_and_replaced() -> None:
    first = io_report.splice(RESULTS, _samples(1000.0, 50.0, 300.0, 10.0), 1, FULL, "Measured then")
    rows = [line for line in first.splitlines() if line.startswith(io_report.ROW_PREFIX)]
    assert len(rows) == 4
    assert all("**pass**" in row for row in rows)  # 20x, 20x, 3.3x; p99 10 ms under 20 ms
    assert first.index("stdio echo") < first.index(rows[0]) < first.index("## Fleet")  # in the summary table
    assert first.index("## Fleet") < first.index(io_report.HEADING) < first.index("## Answers that broke")
    again = io_report.splice(first, _samples(100.0, 50.0, 300.0, 30.0), 1, FULL, "Measured again")
    rows = [line for line in again.splitlines() if line.startswith(io_report.ROW_PREFIX)]
    assert len(rows) == 4 and all("**MISS**" in row for row in rows)
    assert again.count(io_report.HEADING) == 1 and "Measured then" not in again and "Measured again" in again


def test_a_full_run_keeps_the_last_io_rows_and_section() -> None:
    spliced = io_report.splice(RESULTS, _samples(1000.0, 50.0, 300.0, 10.0), 1, FULL, "Measured then")
    kept = io_report.carry_over(spliced, RESULTS)
    assert [line for line in kept.splitlines() if line.startswith(io_report.ROW_PREFIX)] == [
        line for line in spliced.splitlines() if line.startswith(io_report.ROW_PREFIX)
    ]
    assert kept.count(io_report.HEADING) == 1 and "Measured then" in kept
    assert io_report.carry_over(RESULTS, RESULTS) == RESULTS  # nothing measured yet: nothing added
