"""The fleet rows of ``benchmarks/RESULTS.md`` (issue #14): their verdicts in the summary table,
the ``--fleet`` splice into a file as it stands, and the driver's check that a call and its
answer reached different workers.

The numbers are made up (the fleet itself runs in ``.ci/run``'s ``run.py --quick`` and in a full
``run.py``); what is checked is how measurements become verdicts and where the rows go.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import fleet_bench
import fleet_redis
import fleet_report
import run

REFERENCE = {"ask_per_s": 400.0, "progress_per_s": 7000.0, "session_open_per_s": 400.0}
GOOD = {
    "ask_per_s": 440.0,  # 1.1x
    "stateless_ask_per_s": 880.0,  # 2.2x
    "progress_per_s": 38500.0,  # 5.5x
    "resumed_progress_per_s": 9000.0,
    "answer_round_trips": 2.0,
    "answer_commands": 4.0,
    "answer_cmd_publish": 1.0,
    "ask_round_trips": 5.0,
    "ask_cmd_get": 1.0,
    "session_redis_kb": 0.5,
}
LABELS = {spec.name: spec.label for spec in run.specs()}


def _samples(**changes: float) -> run.Samples:
    return {
        ("pysdk", "http"): [dict(REFERENCE) for _ in range(3)],
        (fleet_report.FLEET, "http"): [{**GOOD, **changes} for _ in range(3)],
    }


def _rows(samples: run.Samples) -> dict[str, str]:
    rows = {}
    for line in fleet_report.target_rows(samples, LABELS):
        rows[line.strip("|").split("|")[0].strip()] = line
    return rows


def test_every_fleet_target_passes_at_its_bound_and_is_in_the_summary() -> None:
    rows = _rows(_samples())
    assert set(rows) == {target.label for target in fleet_report.FLEET_TARGETS}
    assert all("**pass**" in row for row in rows.values())
    text = run.report([spec for spec in run.specs() if spec.name == "pysdk"], _samples(), {}, 3, 60.0, {"machine": {}})
    summary = text.split("## Medians")[0]
    assert all(label in summary for label in rows)  # the summary table's verdicts cover the fleet
    assert "## Fleet: 2 workers" in text


@pytest.mark.parametrize(
    ("key", "value", "label"),
    [
        ("ask_per_s", 380.0, "fleet: handshake-era ask, answered on the other worker ≥ official Python SDK HTTP ask"),
        ("stateless_ask_per_s", 780.0, "fleet: stateless-era ask across workers ≥ 2x official Python SDK HTTP ask"),
        (
            "progress_per_s",
            34000.0,
            "fleet: progress through the Redis event log ≥ 5x official Python SDK HTTP progress",
        ),
        ("answer_round_trips", 2.5, "fleet: Redis round trips per forwarded answer ≤ 2"),
    ],
)
def test_a_fleet_target_misses_past_its_bound(key: str, value: float, label: str) -> None:
    rows = _rows(_samples(**{key: value}))
    assert "**MISS**" in rows[label]
    assert sum("**MISS**" in row for row in rows.values()) == 1


def test_a_run_without_the_fleet_has_no_fleet_rows_or_section() -> None:
    samples = _samples()
    del samples[(fleet_report.FLEET, "http")]
    text = run.report([spec for spec in run.specs() if spec.name == "pysdk"], samples, {}, 3, 60.0, {})
    assert "fleet:" not in text and "## Fleet" not in text


OLD = """# Benchmarks

## Targets (backchannel, ratios in the same run)

| target | backchannel | reference | ratio (range) | needed | result | by server CPU/op |
|---|---|---|---|---|---|---|
| HTTP ask ≥ 3x official Python SDK | 1 | 2 | 3 | 4 | **pass** | - |
{old_row}
## Medians

kept

{old_section}## Answers that broke the contract

None.
"""


@pytest.mark.parametrize("before", ["fresh", "again"])
def test_fleet_splices_its_rows_and_section_into_results_as_they_stand(before: str) -> None:
    old_row = "| fleet: an old row | 0 | 0 | 0 | 0 | **MISS** | - |\n" if before == "again" else ""
    old_section = "## Fleet: the old section\n\nold numbers\n\n" if before == "again" else ""
    text = OLD.format(old_row=old_row, old_section=old_section)
    rows = fleet_report.target_rows(_samples(), LABELS)
    section = fleet_report.section(_samples(), LABELS, 3, {"cpus": "2"}, [])
    spliced = fleet_report.splice(text, rows, section)
    lines = spliced.splitlines()
    table = lines[lines.index("| HTTP ask ≥ 3x official Python SDK | 1 | 2 | 3 | 4 | **pass** | - |") :]
    assert table[1 : 1 + len(rows)] == rows  # right under the other targets, in the same table
    assert "old" not in spliced and spliced.count("## Fleet") == 1
    assert spliced.index("## Medians") < spliced.index("## Fleet") < spliced.index("## Answers that broke")
    assert "kept" in spliced and spliced.endswith("None.\n")


def test_the_driver_counts_a_call_and_its_answer_served_by_one_worker() -> None:
    apart = [["call", "127.0.0.1:1"], ["answer", "127.0.0.1:2"], ["call", "127.0.0.1:1"], ["answer", "127.0.0.1:2"]]
    assert fleet_bench.crossings(apart) == (2, 0)
    together = [["call", "127.0.0.1:1"], ["answer", "127.0.0.1:2"], ["call", "127.0.0.1:2"], ["answer", "127.0.0.1:2"]]
    assert fleet_bench.crossings(together) == (2, 1)


def test_round_trips_leave_out_what_redis_serves_whatever_the_clients_do() -> None:
    before = {"reads": 100.0, "publish": 0.0, "xadd": 0.0, "set": 10.0, "ping": 3.0, "info": 5.0}
    # 10 answers: 10 PUBLISH + 10 pipelines (20 XADD), during which 4 lease renewals, 1 ping, 1 INFO
    after = {"reads": 100.0 + 20 + 4 + 1 + 1, "publish": 10.0, "xadd": 20.0, "set": 14.0, "ping": 4.0, "info": 6.0}
    metrics: dict[str, float] = {}
    fleet_redis.per(before, after, 10, "answer", metrics)
    assert metrics["answer_round_trips"] == 2.0
    assert metrics["answer_commands"] == 3.0
    assert metrics == {**metrics, "answer_cmd_publish": 1.0, "answer_cmd_xadd": 2.0}
    assert "answer_cmd_set" not in metrics
