"""What composing servers costs, over stdio: a proxy (issue #29), a middleware layer and a mount (issue #30).

``run.py`` runs these rows in every repetition of a full run; ``run.py --composition [ROW ...]``
runs only the rows named (``proxy``, ``middleware``, ``mount``; all three when none is named) and
splices their target rows and their part of the section into ``RESULTS.md``. Every server is a
child process spoken to over stdio by ``driver.py``'s raw JSON-RPC peer, every answer checked; in
each repetition the servers of a row run one after the other, in a rotating order.

- **proxy**: echo through ``backchannel proxy -- python contract_server.py stdio``, through
  FastMCP's ``create_proxy`` in front of the same upstream (``peers/fastmcp_composition.py proxy``),
  and from ``contract_server.py`` directly: one at a time and 32 in flight. The proxy's CPU per call
  is the proxy process's own (its upstream is another process, measured apart): what the hop adds.
- **middleware**: CPU per echo of ``contract_server.py`` and of the same server with one pass-through
  middleware (``composition_server.py middleware``), each a fixed number of calls; the plain server
  runs twice per repetition, so the difference between its two runs (the noise) stands beside the
  difference the middleware makes; and with two (``middleware2``): what a further layer adds.
- **mount**: echo of ``m_echo`` through ``Server.mount("m", inner)`` (``composition_server.py mount``)
  and through FastMCP's ``main.mount(sub, namespace="m")`` (``peers/fastmcp_composition.py mount``),
  with ``contract_server.py`` directly for what the mount adds.

CPU is read from ``schedstat`` (every thread, to the nanosecond), of the process the driver started
and, for a proxy, of the processes it started. Every loop is bounded in count and in time; nothing
listens anywhere (stdio only).
"""

from __future__ import annotations

__all__ = [
    "FULL",
    "METRICS",
    "QUICK",
    "ROWS",
    "CompositionPlan",
    "carry_over",
    "load_average",
    "missing",
    "repetition",
    "section",
    "splice",
    "when_run",
]

import asyncio
import contextlib
import datetime
import gc
import itertools
import os
import re
import signal
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import driver
from curve_stdio import cpu_seconds
from report_format import Samples, fmt, fmt_ratio, median_of, ratios

HERE = Path(__file__).resolve().parent
PY = sys.executable
CONTRACT = [PY, str(HERE / "contract_server.py"), "stdio"]
ROWS = ("proxy", "middleware", "mount")


@dataclass(frozen=True)
class CompositionPlan:
    warmup: int
    echo_calls: int
    echo_seconds: float
    par_calls: int
    par_seconds: float
    in_flight: int
    #: The middleware row: this many calls for every server, whatever they take (up to ``cpu_seconds``).
    cpu_calls: int
    cpu_par_calls: int
    cpu_seconds: float


QUICK = CompositionPlan(
    warmup=5,
    echo_calls=20,
    echo_seconds=2.0,
    par_calls=200,
    par_seconds=2.0,
    in_flight=32,
    cpu_calls=50,
    cpu_par_calls=200,
    cpu_seconds=10.0,
)
FULL = CompositionPlan(
    warmup=200,
    echo_calls=40000,
    echo_seconds=2.0,
    par_calls=200000,
    par_seconds=2.5,
    in_flight=32,
    cpu_calls=20000,
    cpu_par_calls=60000,
    cpu_seconds=20.0,
)


@dataclass(frozen=True)
class Runner:
    """One server of a row: where its measurements go (``key_prefix`` in ``(server, row)``'s metrics)."""

    server: str
    key_prefix: str
    cmd: list[str]
    tool: str


def _fastmcp_missing() -> str | None:
    import importlib.util

    return None if importlib.util.find_spec("fastmcp") else "fastmcp is not installed"


def missing() -> str | None:
    """Why FastMCP's side cannot run here, or None."""
    return _fastmcp_missing()


def runners(row: str) -> list[Runner]:
    """The servers of ``row``, FastMCP's left out when it is not installed."""
    fastmcp_peer = [PY, str(HERE / "peers" / "fastmcp_composition.py")]
    ours = str(HERE / "composition_server.py")
    found = {
        "proxy": [
            Runner("backchannel", "direct_", CONTRACT, "echo"),
            Runner("backchannel", "", [PY, "-m", "backchannel", "proxy", "--", *CONTRACT], "echo"),
            Runner("fastmcp", "", [*fastmcp_peer, "proxy", "--", *CONTRACT], "echo"),
        ],
        "middleware": [
            Runner("backchannel", "plain_", CONTRACT, "echo"),
            Runner("backchannel", "", [PY, ours, "middleware"], "echo"),
            Runner("backchannel", "again_", CONTRACT, "echo"),
            Runner("backchannel", "two_", [PY, ours, "middleware2"], "echo"),
        ],
        "mount": [
            Runner("backchannel", "direct_", CONTRACT, "echo"),
            Runner("backchannel", "", [PY, ours, "mount"], "m_echo"),
            Runner("fastmcp", "", [*fastmcp_peer, "mount"], "m_echo"),
        ],
    }[row]
    return [r for r in found if r.server != "fastmcp" or missing() is None]


# ----------------------------------------------------------------------------- measuring


def descendants(pid: int) -> list[int]:
    """The processes ``pid`` started, and theirs (from each process's ppid in ``/proc``)."""
    parents: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as stat:
                parents[int(entry.name)] = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    found: list[int] = []
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        children = [child for child, ppid in parents.items() if ppid == parent]
        found += children
        frontier += children
    return found


class StackMeter:
    """Wall time, the driver's CPU, the CPU of process ``pid`` and of ``others`` (its children) across one run."""

    def __init__(self, pid: int, others: Sequence[int]) -> None:
        self.pid = pid
        self.others = list(others)

    def __enter__(self) -> StackMeter:
        gc.collect()
        gc.disable()
        self._own = cpu_seconds(self.pid)
        self._others = sum(cpu_seconds(p) for p in self.others)
        self._driver = time.process_time()
        self._wall = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self._wall
        self.driver_cpu = time.process_time() - self._driver
        self.own_cpu = cpu_seconds(self.pid) - self._own
        self.others_cpu = sum(cpu_seconds(p) for p in self.others) - self._others
        gc.enable()

    def record(self, metrics: dict[str, float], name: str, count: int) -> None:
        if not count:
            return
        metrics[f"{name}_per_s"] = count / self.wall
        metrics[f"{name}_calls"] = count
        metrics[f"{name}_server_cpu_us"] = (self.own_cpu + self.others_cpu) / count * 1e6
        metrics[f"{name}_driver_cpu_us"] = self.driver_cpu / count * 1e6
        if self.others:
            metrics[f"{name}_proxy_cpu_us"] = self.own_cpu / count * 1e6
            metrics[f"{name}_upstream_cpu_us"] = self.others_cpu / count * 1e6


async def handshake(peer: driver.Peer) -> None:
    """``initialize`` as the contract's driver sends it; a proxy or a mount need offer only ``tools``."""
    params = {
        "protocolVersion": driver.PROTOCOL,
        "capabilities": driver.CLIENT_CAPABILITIES,
        "clientInfo": driver.CLIENT_INFO,
    }
    result = await peer.result("initialize", params)
    if result.get("protocolVersion") != driver.PROTOCOL:
        raise driver.ContractError(f"initialize: protocolVersion {result.get('protocolVersion')!r}")
    if "tools" not in (result.get("capabilities") or {}):
        raise driver.ContractError(f"initialize: no tools capability ({result.get('capabilities')!r:.200})")
    await peer.notify("notifications/initialized")


async def echo_one(peer: driver.Peer, tool: str, text: str) -> None:
    driver.expect_text(await peer.call(tool, {"text": text}), text, tool)


async def sequential(
    peer: driver.Peer, tool: str, others: list[int], calls: int, seconds: float, metrics: dict[str, float], name: str
) -> None:
    count = 0
    with StackMeter(peer.pid, others) as meter:
        deadline = time.perf_counter() + seconds
        while count < calls and time.perf_counter() < deadline:
            await echo_one(peer, tool, f"bench {count}")
            count += 1
    meter.record(metrics, name, count)


async def parallel(
    peer: driver.Peer,
    tool: str,
    others: list[int],
    calls: int,
    seconds: float,
    in_flight: int,
    metrics: dict[str, float],
    name: str,
) -> None:
    counter = itertools.count()

    async def worker(deadline: float) -> int:
        done = 0
        while time.perf_counter() < deadline and next(counter) < calls:
            await echo_one(peer, tool, f"par {done}")
            done += 1
        return done

    with StackMeter(peer.pid, others) as meter:
        deadline = time.perf_counter() + seconds
        done = await asyncio.gather(*(worker(deadline) for _ in range(in_flight)))
    meter.record(metrics, name, sum(done))


def _pin(server_pid: int) -> set[int] | None:
    """For the middleware row: the server and the driver on one CPU, the same in every run, so that
    where the scheduler puts the two (together, apart, moving) does not enter the difference of two
    runs' server CPU per call (apart, the noise between two runs of one server was about 7 µs per
    call; together, about 1). The driver's CPUs before (for ``_unpin``); None with fewer than 2."""
    mine = os.sched_getaffinity(0)
    if len(mine) < 2:
        return None
    first = min(mine)
    os.sched_setaffinity(server_pid, {first})
    os.sched_setaffinity(0, {first})
    return mine


def _unpin(before: set[int] | None) -> None:
    if before is not None:
        os.sched_setaffinity(0, before)


async def measure(runner: Runner, plan: CompositionPlan, log: Any, fixed_count: bool) -> dict[str, float]:
    """Start ``runner``'s server, warm it, echo one at a time then ``in_flight`` at once, stop it."""
    metrics: dict[str, float] = {}
    others: list[int] = []
    pinned: set[int] | None = None
    async with asyncio.timeout(60):
        peer = await driver.StdioPeer.spawn(runner.cmd, driver.server_env(), log)
    try:
        async with asyncio.timeout(60):
            await handshake(peer)
            for i in range(plan.warmup):
                await echo_one(peer, runner.tool, f"warm {i}")
        others[:] = descendants(peer.pid)  # a proxy's upstream has started by now (FastMCP's at its first call)
        if fixed_count:
            pinned = _pin(peer.pid)
            calls, seconds = plan.cpu_calls, plan.cpu_seconds
            par_calls, par_seconds = plan.cpu_par_calls, plan.cpu_seconds
        else:
            calls, seconds = plan.echo_calls, plan.echo_seconds
            par_calls, par_seconds = plan.par_calls, plan.par_seconds
        async with asyncio.timeout(seconds * 5 + 30):
            await sequential(peer, runner.tool, others, calls, seconds, metrics, "echo")
        async with asyncio.timeout(par_seconds * 5 + 30):
            await parallel(peer, runner.tool, others, par_calls, par_seconds, plan.in_flight, metrics, "echo32")
        if peer.violations:
            raise driver.ContractError("; ".join(peer.violations[:3]))
        if await peer.close_stdin_and_wait(20.0) is None:
            raise driver.ContractError("stdin closed: the server did not exit within 20 s (killed)")
    finally:
        if fixed_count:
            _unpin(pinned)
        if not peer.exited.done():  # killed: its upstream too, which would wait for stdin forever
            peer.kill()
            for pid in others:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
    return metrics


async def repetition(
    samples: Samples,
    problems: dict[str, list[str]],
    rep: int,
    log_dir: Path,
    rows: Sequence[str] = ROWS,
    plan: CompositionPlan = FULL,
) -> None:
    """One repetition of ``rows``: each row's servers in turn (order rotated by ``rep``), into ``samples``
    under ``(server, row)``; the middleware row adds its per-repetition differences."""
    for row in rows:
        found = runners(row)
        order = found[rep % len(found) :] + found[: rep % len(found)]
        by_server: dict[str, dict[str, float]] = {}
        started = time.perf_counter()
        with (log_dir / f"composition-{row}.log").open("ab") as log:
            for runner in order:
                try:
                    measured = await measure(runner, plan, log, fixed_count=row == "middleware")
                except (driver.ContractError, TimeoutError, OSError) as exc:
                    problems.setdefault(f"{LABELS[runner.server]} {row}", []).append(
                        f"wrong (rep {rep + 1}): {runner.key_prefix or 'through'} {type(exc).__name__}: {exc}"
                    )
                    continue
                into = by_server.setdefault(runner.server, {})
                into.update({runner.key_prefix + key: value for key, value in measured.items()})
        if row == "middleware":
            _differences(by_server.get("backchannel", {}))
        for server, metrics in by_server.items():
            samples.setdefault((server, row), []).append(metrics)
        print(f"rep {rep + 1}: {'composition: ' + row:26} stdio {time.perf_counter() - started:5.1f} s", flush=True)


def _differences(metrics: dict[str, float]) -> None:
    """The middleware's added CPU per call (against the mean of the two plain runs), the plain runs' noise,
    and what a second layer adds to the first."""
    for name in ("echo", "echo32"):
        key = f"{name}_server_cpu_us"
        plain = [metrics[p + key] for p in ("plain_", "again_") if p + key in metrics]
        if key in metrics and plain:
            metrics[f"{name}_added_cpu_us"] = metrics[key] - statistics.fmean(plain)
            metrics[f"plain_{name}_server_cpu_us"] = statistics.fmean(plain)
        if len(plain) == 2:
            metrics[f"{name}_noise_cpu_us"] = abs(plain[0] - plain[1])
        if key in metrics and f"two_{key}" in metrics:
            metrics[f"{name}_second_cpu_us"] = metrics[f"two_{key}"] - metrics[key]


# ----------------------------------------------------------------------------- reporting


LABELS = {"backchannel": "backchannel", "fastmcp": "FastMCP"}

#: ``run.py``'s rows (``run_report.METRICS``; their targets are in ``run_report.TARGETS``):
#: (row as transport, key, label, unit, higher is better).
METRICS = [
    ("proxy", "echo_per_s", "echo one at a time through the proxy", "calls/s", True),
    ("proxy", "echo32_per_s", "echo, 32 in flight through the proxy", "calls/s", True),
    ("proxy", "echo_proxy_cpu_us", "the proxy process's CPU per echo (one at a time)", "µs", False),
    ("proxy", "echo32_proxy_cpu_us", "the proxy process's CPU per echo (32 in flight)", "µs", False),
    ("middleware", "echo_added_cpu_us", "server CPU one pass-through middleware adds per echo", "µs", False),
    ("middleware", "echo32_added_cpu_us", "the same, 32 in flight", "µs", False),
    ("mount", "echo_per_s", "m_echo one at a time through a mount", "calls/s", True),
    ("mount", "echo32_per_s", "m_echo, 32 in flight through a mount", "calls/s", True),
]

HEADING = "## Composition: a proxy, a middleware layer, a mount (issues #29, #30)"
_SUBHEADINGS = {
    "proxy": "### Proxy",
    "middleware": "### One middleware layer",
    "mount": "### Mount",
}


def _cell(samples: Samples, server: str, row: str, key: str, unit: str = "") -> str:
    value = median_of(samples, server, row, key)
    return f"{fmt(value, unit)} {unit}".strip() if value is not None else "-"


def _spread(samples: Samples, server: str, row: str, key: str) -> str:
    values = [m[key] for m in samples.get((server, row), []) if key in m]
    return fmt_ratio(values, "") if values else "-"


def _ratio(samples: Samples, row: str, key: str, against: str, against_key: str | None = None) -> str:
    return fmt_ratio(ratios(samples, row, key, "backchannel", against, against_key))


def row_section(row: str, samples: Samples, reps: int, when: str) -> str:
    """``row``'s subsection: how it was run (``when``: alone or in a full run, the date and load), its numbers."""
    out = [_SUBHEADINGS[row], "", f"{when}; {reps} repetition(s).", ""]
    if row == "proxy":
        out += [
            "Over stdio: the driver → the proxy → `contract_server.py` (its upstream, over stdio). backchannel: "
            "`backchannel proxy -- python contract_server.py stdio`; FastMCP 4: `create_proxy(StdioTransport(...))` "
            "(`peers/fastmcp_composition.py proxy`); direct: `contract_server.py` alone. *Proxy CPU* is the proxy "
            "process's own, *upstream CPU* its upstream's, per call: the proxy's CPU is what the hop adds.",
            "",
            "| measurement | backchannel proxy | FastMCP proxy | direct (no proxy) | ours / FastMCP | ours / direct |",
            "|---|---|---|---|---|---|",
        ]
        for name, title in (("echo", "one at a time"), ("echo32", "32 in flight")):
            out.append(
                f"| echo {title} ↑ | {_cell(samples, 'backchannel', row, f'{name}_per_s', 'calls/s')} "
                f"| {_cell(samples, 'fastmcp', row, f'{name}_per_s', 'calls/s')} "
                f"| {_cell(samples, 'backchannel', row, f'direct_{name}_per_s', 'calls/s')} "
                f"| {_ratio(samples, row, f'{name}_per_s', 'fastmcp')} "
                f"| {_ratio(samples, row, f'{name}_per_s', 'backchannel', f'direct_{name}_per_s')} |"
            )
            for part, what in (("proxy", "proxy CPU per call"), ("upstream", "upstream CPU per call")):
                out.append(
                    f"| {what}, {title} (µs) ↓ | {_cell(samples, 'backchannel', row, f'{name}_{part}_cpu_us')} "
                    f"| {_cell(samples, 'fastmcp', row, f'{name}_{part}_cpu_us')} | - "
                    f"| {_ratio(samples, row, f'{name}_{part}_cpu_us', 'fastmcp')} | - |"
                )
            out.append(
                f"| server CPU per call, {title}, all processes (µs) ↓ "
                f"| {_cell(samples, 'backchannel', row, f'{name}_server_cpu_us')} "
                f"| {_cell(samples, 'fastmcp', row, f'{name}_server_cpu_us')} "
                f"| {_cell(samples, 'backchannel', row, f'direct_{name}_server_cpu_us')} "
                f"| {_ratio(samples, row, f'{name}_server_cpu_us', 'fastmcp')} "
                f"| {_ratio(samples, row, f'{name}_server_cpu_us', 'backchannel', f'direct_{name}_server_cpu_us')} |"
            )
    elif row == "middleware":
        out += [
            "Server CPU per echo (`schedstat`, every thread) of `contract_server.py` and of the same server with "
            "`server.add_middleware(passthrough)` (`async def passthrough(call, call_next): return await "
            "call_next(call)`; `composition_server.py middleware`), each answering the same number of echoes "
            "one at a time, then with 32 in flight, the server and the driver pinned to one CPU in every run "
            "(`_pin`). The plain server runs twice per repetition: *added* is the "
            "middleware's run less the mean of the two plain runs, *noise* the difference between the two plain "
            "runs (the same server, the same work); *a second layer* is the run with two such middleware "
            "less the run with one. Median (range) over the repetitions.",
            "",
            "| echo | plain server CPU/call (µs) | with the middleware (µs) | added (µs) | noise: plain - plain "
            "again (µs) | a second layer (µs) | calls per run |",
            "|---|---|---|---|---|---|---|",
        ]
        for name, title in (("echo", "one at a time"), ("echo32", "32 in flight")):
            out.append(
                f"| {title} | {_cell(samples, 'backchannel', row, f'plain_{name}_server_cpu_us')} "
                f"| {_cell(samples, 'backchannel', row, f'{name}_server_cpu_us')} "
                f"| {_spread(samples, 'backchannel', row, f'{name}_added_cpu_us')} "
                f"| {_spread(samples, 'backchannel', row, f'{name}_noise_cpu_us')} "
                f"| {_spread(samples, 'backchannel', row, f'{name}_second_cpu_us')} "
                f"| {_cell(samples, 'backchannel', row, f'{name}_calls')} |"
            )
    else:
        out += [
            'Over stdio, `m_echo`: backchannel\'s `Server.mount("m", contract_server.build())` in one process '
            '(`composition_server.py mount`); FastMCP 4\'s `main.mount(fastmcp_server.build(), namespace="m")` '
            "(`peers/fastmcp_composition.py mount`); direct: `contract_server.py`'s `echo`.",
            "",
            "| measurement | backchannel mount | FastMCP mount | backchannel direct | ours / FastMCP | ours / direct |",
            "|---|---|---|---|---|---|",
        ]
        for name, title in (("echo", "one at a time"), ("echo32", "32 in flight")):
            out.append(
                f"| echo {title} ↑ | {_cell(samples, 'backchannel', row, f'{name}_per_s', 'calls/s')} "
                f"| {_cell(samples, 'fastmcp', row, f'{name}_per_s', 'calls/s')} "
                f"| {_cell(samples, 'backchannel', row, f'direct_{name}_per_s', 'calls/s')} "
                f"| {_ratio(samples, row, f'{name}_per_s', 'fastmcp')} "
                f"| {_ratio(samples, row, f'{name}_per_s', 'backchannel', f'direct_{name}_per_s')} |"
            )
            out.append(
                f"| server CPU per call, {title} (µs) ↓ "
                f"| {_cell(samples, 'backchannel', row, f'{name}_server_cpu_us')} "
                f"| {_cell(samples, 'fastmcp', row, f'{name}_server_cpu_us')} "
                f"| {_cell(samples, 'backchannel', row, f'direct_{name}_server_cpu_us')} "
                f"| {_ratio(samples, row, f'{name}_server_cpu_us', 'fastmcp')} "
                f"| {_ratio(samples, row, f'{name}_server_cpu_us', 'backchannel', f'direct_{name}_server_cpu_us')} |"
            )
    return "\n".join(out) + "\n"


def section(samples: Samples, reps: int, when: str, rows: Sequence[str] = ROWS) -> str:
    """The whole section, with a subsection for each of ``rows`` that was measured."""
    out = [
        HEADING,
        "",
        "Written by `python benchmarks/run.py` (`benchmarks/composition.py`): echo over stdio through a "
        "composition of servers, against FastMCP 4's equivalent in the same repetitions, every answer "
        "checked. Each subsection says when and how its row was run. The targets are in the summary table "
        "(rows `proxy:`, `middleware:`, `mount:`).",
        "",
    ]
    for row in rows:
        if any(key[1] == row for key in samples):
            out.append(row_section(row, samples, reps, when))
    return "\n".join(out)


def when_run(alone: bool, load_start: str, load_end: str) -> str:
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    how = "run alone (`run.py --composition`)" if alone else "run in the full run's repetitions"
    return f"Measured {now}, {how}; load average {load_start} at the start, {load_end} at the end"


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def splice(text: str, targets: list[str], samples: Samples, rows: Sequence[str], reps: int, when: str) -> str:
    """``text`` (a RESULTS.md) with the target rows (``targets``: ``run_report.composition_target_rows``)
    and the subsections of ``rows`` replaced by these; the other rows' stay as they are."""
    prefixes = tuple(f"| {row}: " for row in rows)
    lines = [line for line in text.splitlines() if not line.startswith(prefixes)]
    heading = next((i for i, line in enumerate(lines) if line.startswith("## Targets")), None)
    if heading is not None:
        end = next((i for i in range(heading + 1, len(lines)) if lines[i].startswith("|")), len(lines))
        while end < len(lines) and lines[end].startswith("|"):
            end += 1
        lines[end:end] = targets
    body = "\n".join(lines) + "\n"
    found = re.search(rf"^{re.escape(HEADING)}\n.*?(?=^## |\Z)", body, flags=re.MULTILINE | re.DOTALL)
    if found is None:
        block = section(samples, reps, when, rows).rstrip("\n") + "\n\n"
        before = re.search(r"^## Answers that broke the contract", body, flags=re.MULTILINE)
        at = before.start() if before is not None else len(body)
        return body[:at] + block + body[at:]
    old = found.group(0)
    for row in rows:
        if not any(key[1] == row for key in samples):
            continue
        new = row_section(row, samples, reps, when).rstrip("\n") + "\n\n"
        sub = re.search(rf"^{re.escape(_SUBHEADINGS[row])}\n.*?(?=^##|\Z)", old, flags=re.MULTILINE | re.DOTALL)
        old = old[: sub.start()] + new + old[sub.end() :] if sub else old.rstrip("\n") + "\n\n" + new
    return body[: found.start()] + old.rstrip("\n") + "\n\n" + body[found.end() :]


def carry_over(old: str, new: str) -> str:
    """``new`` (a RESULTS.md written without these rows) with ``old``'s composition target rows and section."""
    kept = [line for line in old.splitlines() if line.startswith(tuple(f"| {row}: " for row in ROWS))]
    found = re.search(rf"^{re.escape(HEADING)}\n.*?(?=^## |\Z)", old, flags=re.MULTILINE | re.DOTALL)
    if not kept and found is None:
        return new
    lines = new.splitlines()
    heading = next((i for i, line in enumerate(lines) if line.startswith("## Targets")), None)
    if heading is not None:
        end = next((i for i in range(heading + 1, len(lines)) if lines[i].startswith("|")), len(lines))
        while end < len(lines) and lines[end].startswith("|"):
            end += 1
        lines[end:end] = kept
    body = "\n".join(lines) + "\n"
    if found is None:
        return body
    before = re.search(r"^## Answers that broke the contract", body, flags=re.MULTILINE)
    at = before.start() if before is not None else len(body)
    return body[:at] + found.group(0).rstrip("\n") + "\n\n" + body[at:]
