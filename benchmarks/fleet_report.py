"""The fleet rows in ``RESULTS.md``: their targets (in the summary table), and their own section.

``python benchmarks/run.py`` writes both into a new ``RESULTS.md``; ``--fleet`` measures only the
fleet and its reference and ``splice``s the new rows and section into the file as it stands.
"""

from __future__ import annotations

__all__ = ["FLEET", "FLEET_METRICS", "FLEET_TARGETS", "FleetMetric", "section", "splice", "target_rows"]

import datetime
import re
from dataclasses import dataclass

from report_format import Samples, Target, fmt, fmt_ratio, median_of, ratios, target_row

FLEET = "fleet"
"""The fleet's name in the samples (transport "http")."""
REFERENCE = "pysdk"

FLEET_TARGETS = [
    Target(
        "fleet: handshake-era ask, answered on the other worker ≥ official Python SDK HTTP ask",
        "http", "ask_per_s", REFERENCE, 1, True, server=FLEET,
    ),
    Target(
        "fleet: stateless-era ask across workers ≥ 2x official Python SDK HTTP ask",
        "http", "stateless_ask_per_s", REFERENCE, 2, True, server=FLEET, against_key="ask_per_s",
    ),
    Target(
        "fleet: progress through the Redis event log ≥ 5x official Python SDK HTTP progress",
        "http", "progress_per_s", REFERENCE, 5, True, server=FLEET,
    ),
    Target(
        "fleet: Redis round trips per forwarded answer ≤ 2",
        "http", "answer_round_trips", None, 2, False, server=FLEET,
    ),
]  # fmt: skip


@dataclass(frozen=True)
class FleetMetric:
    key: str
    label: str
    unit: str
    higher_is_better: bool
    reference_key: str | None = None
    """The official SDK's single-process measurement it is compared with, if any."""


FLEET_METRICS = [
    FleetMetric("ask_per_s", "handshake-era ask, the answer POSTed to the other worker", "calls/s", True, "ask_per_s"),
    FleetMetric("stateless_ask_per_s", "stateless-era ask, retried on the other worker", "calls/s", True, "ask_per_s"),
    FleetMetric(
        "progress_per_s", "progress (10,000 steps), every event into the Redis log", "notif/s", True, "progress_per_s"
    ),
    FleetMetric(
        "resumed_progress_per_s",
        "the same progress resumed on the other worker, read back from the Redis log",
        "notif/s",
        True,
        "progress_per_s",
    ),
    FleetMetric(
        "session_open_per_s", "sessions opened (initialize and initialized)", "sessions/s", True, "session_open_per_s"
    ),
    FleetMetric("session_redis_kb", "Redis memory per idle session (used_memory)", "KiB", False),
    FleetMetric("session_redis_keys", "Redis keys per idle session", "keys", False),
    FleetMetric("session_record_bytes", "one session's record (MEMORY USAGE)", "bytes", False),
    FleetMetric("answer_round_trips", "Redis round trips per forwarded answer", "round trips", False),
    FleetMetric("answer_commands", "Redis commands per forwarded answer", "commands", False),
    FleetMetric("ask_round_trips", "Redis round trips per handshake-era ask, every cause", "round trips", False),
    FleetMetric("ask_commands", "Redis commands per handshake-era ask, every cause", "commands", False),
]

UNITS = {metric.key: metric.unit for metric in FLEET_METRICS}
_CPU = {"ask_per_s": "ask", "stateless_ask_per_s": "stateless_ask", "progress_per_s": "progress"}
_ROW_PREFIX = "| fleet: "
_TARGETS_HEAD = "| target | fleet | reference | ratio (range) | needed | result | by server CPU/op |"


def target_rows(samples: Samples, labels: dict[str, str]) -> list[str]:
    """The summary table's fleet rows, for the targets measured in ``samples``."""
    rows = []
    for target in FLEET_TARGETS:
        if (FLEET, "http") not in samples or (target.against and (target.against, "http") not in samples):
            continue
        rows.append(target_row(samples, target, labels, UNITS[target.key]))
    return rows


def _commands(samples: Samples) -> list[str]:
    """Redis commands by name, per forwarded answer and per ask."""
    names = sorted(
        {key.split("_cmd_", 1)[1] for metrics in samples.get((FLEET, "http"), []) for key in metrics if "_cmd_" in key}
    )
    out = ["| Redis command | per forwarded answer | per handshake-era ask |", "|---|---|---|"]
    for name in names:
        answer = median_of(samples, FLEET, "http", f"answer_cmd_{name}")
        ask = median_of(samples, FLEET, "http", f"ask_cmd_{name}")
        out.append(f"| `{name.upper()}` | {fmt(answer)} | {fmt(ask)} |")
    return out


def section(samples: Samples, labels: dict[str, str], reps: int, machine: dict[str, str], rows: list[str]) -> str:
    """The fleet section; ``rows``, the fleet's target rows, are repeated at its head only when the
    file has no summary table to hold them (see ``splice``)."""
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    where = "; ".join(f"{k} {v}" for k, v in machine.items())
    reference = labels.get(REFERENCE, REFERENCE)
    out = [
        "## Fleet: 2 workers, one Redis, nginx round-robin (issue #14)",
        "",
        f"Measured on {now}, {reps} repetitions, with the {reference}'s single-process HTTP server measured in "
        f"the same repetitions (the ratios' reference, as in the summary's fleet rows). Machine: {where}.",
        "",
        "Two `benchmarks/contract_server.py http --redis URL` processes, each on its own port "
        "(`Server.run_http(port=P, redis=URL)`), one `redis-server` (persistence off) and nginx passing each "
        "request to the next worker (`benchmarks/fleet_services.py`: `tests/_services.py`'s and "
        "`docs/deploy.md`'s configuration, plus `keepalive 32` in the upstream block, so nginx reuses its "
        "connections to the workers, and an `X-Upstream` header naming the worker). Five processes "
        "and the driver on 2 cores. The driver (`benchmarks/fleet_bench.py`) checks every answer, and on the "
        "wire that each call and its answer (handshake era) or its retry (stateless era) reached different "
        "workers; Redis counts one `PUBLISH` per forwarded answer. Server CPU is that of all four processes: "
        "on a loaded machine the wall-clock ratios swing widely, the CPU per operation less, and the Redis "
        "counts not at all.",
        "",
        *([_TARGETS_HEAD, "|---|---|---|---|---|---|---|", *rows, ""] if rows else []),
        f"| measurement | fleet | {reference}, one process | ratio (range) | server CPU/op, fleet / {reference} (µs) |",
        "|---|---|---|---|---|",
    ]  # fmt: skip
    for metric in FLEET_METRICS:
        mine = median_of(samples, FLEET, "http", metric.key)
        theirs = median_of(samples, REFERENCE, "http", metric.reference_key) if metric.reference_key else None
        found = ratios(samples, "http", metric.key, FLEET, REFERENCE, metric.reference_key) if theirs else []
        cpu = _CPU.get(metric.key)
        cpus = "-"
        if cpu is not None and metric.reference_key is not None:
            their_cpu = median_of(samples, REFERENCE, "http", metric.reference_key.replace("_per_s", "_server_cpu_us"))
            cpus = f"{fmt(median_of(samples, FLEET, 'http', f'{cpu}_server_cpu_us'))} / {fmt(their_cpu)}"
        arrow = "↑" if metric.higher_is_better else "↓"
        out.append(
            f"| {metric.label} {arrow} | {fmt(mine, metric.unit)} {metric.unit} "
            f"| {f'{fmt(theirs, metric.unit)} {metric.unit}' if theirs else '-'} | {fmt_ratio(found)} | {cpus} |"
        )
    out += [
        "",
        "Redis, by `INFO commandstats` and `INFO stats` (`total_reads_processed`: one per command, or per "
        "pipeline, a client sends) around exactly the operations counted, less the background (the "
        "workers' lease renewals `SET`, their subscribers' `PING`, the driver's `INFO`). *Per forwarded "
        "answer*: asks left waiting for their answers, then each answer POSTed to the worker that did not "
        "ask, one at a time, each call's response awaited: the answer's `PUBLISH` to the asking worker, and "
        "that worker's write of the response and the stream's end to the event log. *Per ask*: the whole "
        "measured ask loop, which adds the decline-memory `GET` before each question, the stream's first "
        "entry (written, and waited for, before the client hears of the stream), the question's log write, "
        "and the `DEL`s of the streams a session forgets (64 at a time, in one round trip). Memory: "
        "`used_memory` and the key count before and after opening the idle sessions; the growth beyond the "
        "record is the two workers' subscriptions to the session's channel.",
        "",
        *_commands(samples),
        "",
    ]
    return "\n".join(out)


def splice(text: str, rows: list[str], fleet_section: str) -> str:
    """``text`` (a RESULTS.md) with its fleet target rows and fleet section replaced by these."""
    lines = [line for line in text.splitlines() if not line.startswith(_ROW_PREFIX)]
    heading = next((i for i, line in enumerate(lines) if line.startswith("## Targets")), None)
    if heading is not None:
        end = next((i for i in range(heading + 1, len(lines)) if lines[i].startswith("|")), len(lines))
        while end < len(lines) and lines[end].startswith("|"):
            end += 1
        lines[end:end] = rows
    body = "\n".join(lines) + "\n"
    found = re.search(r"^## Fleet.*?(?=^## |\Z)", body, flags=re.MULTILINE | re.DOTALL)
    block = fleet_section.rstrip("\n") + "\n\n"
    if found is not None:
        return body[: found.start()] + block + body[found.end() :].lstrip("\n")
    before = re.search(r"^## Answers that broke the contract", body, flags=re.MULTILINE)
    if before is not None:
        return body[: before.start()] + block + body[before.start() :]
    return body.rstrip("\n") + "\n\n" + block.rstrip("\n") + "\n"
