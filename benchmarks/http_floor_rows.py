"""HTTP against its floor (issue #32): backchannel's echo over Streamable HTTP beside the HTTP floor.

    python benchmarks/run.py --http-floor            # these rows alone, interleaved; updates RESULTS.md
    python benchmarks/run.py --http-floor --quick    # each server once, tiny counts, answers checked

The floor is ``peers/http_floor.py``: asyncio (uvloop, as ``run_http`` serves), httptools and orjson,
answering an echo POST and nothing else the contract asks. Both servers answer the echo rows twice:
with a session (2025-11-25, the rows every HTTP server is measured on) and without one (2026-07-28,
each POST on its own: ``driver.StatelessHttpPeer``). In a full run the rows come from each server's
HTTP suite in the rotation (the floor's measures the echo rows only); ``--http-floor`` runs just the
two servers' echo rows (``driver.run_suite(..., echo_only=True, stateless=True)``), the order
alternating each repetition, and splices the target rows and this section into RESULTS.md.
"""

from __future__ import annotations

__all__ = [
    "HEADING",
    "METRICS",
    "TARGETS",
    "has_rows",
    "load_average",
    "run",
    "section",
    "splice",
    "target_lines",
    "when_run",
]

import datetime
import re
from pathlib import Path

import driver
from report_format import Samples, Target, fmt, fmt_ratio, median_of, ratios, target_row
from servers import specs

#: (transport, key, label, unit, higher is better, scale): as run_report.Metric takes them.
METRICS = [
    ("http", "stateless_echo_per_s", "echo without a session (2026-07-28), one at a time", "calls/s", True, 1.0),
    ("http", "stateless_echo32_per_s", "echo without a session (2026-07-28), 32 in flight", "calls/s", True, 1.0),
]

TARGETS = [
    Target("HTTP echo one at a time ≥ 0.8x the HTTP floor", "http", "echo_per_s", "floor", 0.8, True),
    Target("HTTP echo 32 in flight ≥ 0.8x the HTTP floor", "http", "echo32_per_s", "floor", 0.8, True),
    Target(
        "HTTP echo without a session, one at a time ≥ 0.8x the HTTP floor",
        "http",
        "stateless_echo_per_s",
        "floor",
        0.8,
        True,
    ),
    Target(
        "HTTP echo without a session, 32 in flight ≥ 0.8x the HTTP floor",
        "http",
        "stateless_echo32_per_s",
        "floor",
        0.8,
        True,
    ),
]

HEADING = "## HTTP against its floor (issue #32)"
SERVERS = ("backchannel", "floor")
_ROWS = [
    ("echo_per_s", "echo", "with a session (2025-11-25), one at a time"),
    ("echo32_per_s", "echo32", "with a session (2025-11-25), 32 in flight"),
    ("stateless_echo_per_s", "stateless_echo", "without a session (2026-07-28), one at a time"),
    ("stateless_echo32_per_s", "stateless_echo32", "without a session (2026-07-28), 32 in flight"),
]


def has_rows(samples: Samples) -> bool:
    return ("floor", "http") in samples and ("backchannel", "http") in samples


async def run(reps: int, log_dir: Path, plan: driver.Plan, problems: dict[str, list[str]]) -> tuple[Samples, list[str]]:
    """``reps`` repetitions of both servers' HTTP echo rows, the order alternating; the samples and
    a line per server run (what was printed)."""
    found = {spec.name: spec for spec in specs() if spec.name in SERVERS}
    samples: Samples = {}
    printed: list[str] = []
    for rep in range(reps):
        order = SERVERS if rep % 2 == 0 else SERVERS[::-1]
        for name in order:
            spec = found[name]
            result = await driver.run_suite(
                name,
                "http",
                spec.cmd("http"),
                plan,
                log_path=log_dir / f"{name}-http-floor-rows.log",
                seed=rep + 1,
                echo_only=True,
                stateless=True,
            )
            samples.setdefault((name, "http"), []).append(result.metrics)
            for error in result.errors:
                problems.setdefault(f"{spec.label} http", []).append(f"wrong (rep {rep + 1}): {error}")
            line = f"rep {rep + 1}: {spec.label:26} http  {result.seconds:5.1f} s" + (" WRONG" if result.errors else "")
            print(line, flush=True)
            printed.append(line)
    return samples, printed


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def when_run(alone: bool, load_start: str, load_end: str) -> str:
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    how = "run alone (`run.py --http-floor`: the two servers' echo rows only)" if alone else "run in a full run"
    return f"Measured {now}, {how}; load average {load_start} at the start, {load_end} at the end"


def section(samples: Samples, reps: int, when: str) -> str:
    out = [
        HEADING,
        "",
        f"{when}; {reps} repetition(s), the order alternating. The floor is `benchmarks/peers/http_floor.py`: "
        "one `asyncio.Protocol` per connection on uvloop (as `run_http` serves), httptools parsing, orjson in "
        "and out, each request answered in the parser's callback; it checks no Host, Origin, Accept or "
        "Content-Type, keeps a session as an id in a set, and answers nothing but `initialize` and `echo`: "
        "a lower bound, not a server. The driver is the contract's (`driver.py`, its own HTTP/1.1 client "
        "on keep-alive connections); the stateless-era rows send each echo on its own, with the "
        "`_meta` and the mirrored headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`) of 2026-07-28. "
        "Ratios are medians of the per-repetition ratios (range in brackets); CPU is the server process's "
        "own per call (from /proc, 10 ms ticks), then the driver's.",
        "",
        "| echo | backchannel | HTTP floor | ratio | server CPU/call, backchannel / floor | driver CPU/call |",
        "|---|---|---|---|---|---|",
    ]
    for key, cpu, label in _ROWS:
        ours = median_of(samples, "backchannel", "http", key)
        floor = median_of(samples, "floor", "http", key)
        ratio = fmt_ratio(ratios(samples, "http", key, "backchannel", "floor"))
        our_cpu = median_of(samples, "backchannel", "http", f"{cpu}_server_cpu_us")
        floor_cpu = median_of(samples, "floor", "http", f"{cpu}_server_cpu_us")
        driver_cpu = median_of(samples, "floor", "http", f"{cpu}_driver_cpu_us")
        out.append(
            f"| {label} | {fmt(ours, 'calls/s')} calls/s | {fmt(floor, 'calls/s')} calls/s | {ratio} | "
            f"{fmt(our_cpu)} / {fmt(floor_cpu)} µs | {fmt(driver_cpu)} µs |"
        )
    out += [
        "",
        "The two cores are shared by the driver, the server and whatever else runs (see the load average): "
        "the rates move with it, and the server CPU per call is the steadier reading. The driver is one "
        "Python process that spends more CPU per call than the floor does (last column), so against the "
        "floor a round trip is mostly the driver's and the kernel's, and the rate ratios understate the gap "
        "between the servers that the CPU column shows. `docs/performance.md` (issue #32) has the "
        "instruction counts per echo of both servers and what separates them.",
    ]
    return "\n".join(out) + "\n"


def target_lines(samples: Samples, labels: dict[str, str]) -> list[str]:
    """The summary table's rows of ``TARGETS``."""
    return [target_row(samples, target, labels, "calls/s") for target in TARGETS]


def splice(text: str, targets: list[str], block: str) -> str:
    """``text`` (a RESULTS.md) with these target rows and this section in place of their old ones."""
    lines = [line for line in text.splitlines() if not (line.startswith("| HTTP echo") and "the HTTP floor |" in line)]
    heading = next((i for i, line in enumerate(lines) if line.startswith("## Targets")), None)
    if heading is not None:
        end = next((i for i in range(heading + 1, len(lines)) if lines[i].startswith("|")), len(lines))
        while end < len(lines) and lines[end].startswith("|"):
            end += 1
        lines[end:end] = targets
    body = "\n".join(lines) + "\n"
    found = re.search(rf"^{re.escape(HEADING)}\n.*?(?=^## |\Z)", body, flags=re.MULTILINE | re.DOTALL)
    if found is not None:
        return body[: found.start()] + block.rstrip("\n") + "\n\n" + body[found.end() :]
    before = re.search(r"^## Answers that broke the contract", body, flags=re.MULTILINE)
    at = before.start() if before is not None else len(body)
    return body[:at] + block.rstrip("\n") + "\n\n" + body[at:]


def run_alone(quick: bool, reps: int, log_dir: Path, out: Path) -> int:
    """``run.py --http-floor``: these rows alone, ``reps`` times (once with tiny counts, answers checked,
    with ``quick``), spliced into ``out``; 1 when an answer was wrong."""
    import asyncio

    problems: dict[str, list[str]] = {}
    load_start = load_average()
    plan = driver.QUICK if quick else driver.FULL
    done = 1 if quick else reps
    samples, _ = asyncio.run(run(done, log_dir, plan, problems))
    labels = {spec.name: spec.label for spec in specs()}
    targets = target_lines(samples, labels)
    print("\n".join(targets))
    wrong = [f"{who}: {item}" for who, items in problems.items() for item in items]
    if quick:
        print(f"HTTP floor rows: {'WRONG' if wrong else 'ok'}")
    else:
        block = section(samples, done, when_run(True, load_start, load_average()))
        out.write_text(splice(out.read_text() if out.exists() else "", targets, block))
        print(f"updated the HTTP floor rows of {out}")
    for item in wrong:
        print(item)
    return 1 if wrong else 0
