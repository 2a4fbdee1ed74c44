"""The curves measured over stdio, one server process per runtime (per point where the work is the
server's size): result size, number of tools, calls in flight, completion candidates.

Each function drives a curve server (``curve_server.py`` and its twins) through ``driver.py``'s raw
JSON-RPC peer, checks every answer, and returns the runtime's series: metric -> one value per point
(None where it could not be measured). Every loop is bounded in count and in time.
"""

from __future__ import annotations

__all__ = [
    "CpuMeter",
    "LinePeer",
    "Series",
    "completion",
    "cpu_seconds",
    "in_flight",
    "result_size",
    "status_kb",
    "stdio_server",
    "tools",
]

import asyncio
import contextlib
import json
import os
import random
import statistics
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import driver
import orjson
from curve_data import blob, expected_completion, words

Series = dict[str, list[float | None]]


class LinePeer(driver.StdioPeer):
    """``driver.StdioPeer`` that gathers a long line's pieces in a list: the driver's peer joins its
    buffer to each piece, which costs it quadratic time on a 16 MB line, and this curve is about the
    server's time."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[bytes] = []

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd != 1:
            return
        start = 0
        while (end := data.find(b"\n", start)) >= 0:
            self.parts.append(data[start:end])
            line = b"".join(self.parts)
            self.parts.clear()
            start = end + 1
            if line.strip():
                try:
                    message = orjson.loads(line)
                except orjson.JSONDecodeError:
                    self.violations.append(f"stdout line is not JSON: {line[:120]!r}")
                    continue
                self.on_message(message)
        if start < len(data):
            self.parts.append(data[start:])


def cpu_seconds(pid: int) -> float:
    """CPU time of every thread of process ``pid`` so far, to the nanosecond (``schedstat``; the
    ``/proc/PID/stat`` counts ``driver.Meter`` reads move in 10 ms ticks, coarser than most points)."""
    total = 0
    try:
        for task in os.scandir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"{task.path}/schedstat") as stat:
                total += int(stat.read().split()[0])
    except OSError:
        pass
    return total / 1e9


class CpuMeter(driver.Meter):
    """``driver.Meter`` with the server's CPU time read from ``schedstat`` (``cpu_seconds``)."""

    def __enter__(self) -> CpuMeter:
        super().__enter__()
        self._server = cpu_seconds(self.pid)
        return self

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        self.server_cpu = cpu_seconds(self.pid) - self._server


def status_kb(pid: int, field: str = "VmRSS") -> float | None:
    """A ``/proc/PID/status`` size in KiB (``VmRSS``, ``VmHWM``: the peak), None once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return float(line.split()[1])
    except OSError:
        pass
    return None


def mib(kb: float | None) -> float | None:
    return None if kb is None else kb / 1024


@contextlib.asynccontextmanager
async def stdio_server(cmd: Sequence[str], env: dict[str, str], log: Any) -> AsyncIterator[LinePeer]:
    """A curve server started, initialized, and stopped again (stdin closed; killed if it lingers)."""
    peer = await LinePeer.spawn(cmd, {**driver.server_env(), **env}, log)
    try:
        async with asyncio.timeout(120):
            await driver.handshake(peer)
        yield peer
    finally:
        await peer.close_stdin_and_wait(10.0)
    if peer.violations:
        raise driver.ContractError("; ".join(peer.violations[:3]))


def _append(series: Series, **values: float | None) -> None:
    for key, value in values.items():
        series.setdefault(key, []).append(value)


def _why(exc: BaseException) -> str:
    return "no answer in time" if isinstance(exc, TimeoutError) else str(exc)


async def result_size(
    cmd: Sequence[str],
    log: Any,
    errors: list[str],
    sizes: Sequence[int],
    seconds: float,
    min_calls: int,
    max_calls: int,
) -> Series:
    """``blob(size)`` one call at a time, sizes ascending in one process: calls/s, and the process's
    peak RSS so far (``VmHWM``; the biggest result yet dominates it)."""
    series: Series = {}
    async with stdio_server(cmd, {}, log) as peer:
        for size in sizes:
            expected = blob(size)

            async def one(size: int = size, expected: str = expected) -> None:
                text = driver.text_of(await peer.call("blob", {"size": size}), "blob")
                if text != expected:
                    raise driver.ContractError(f"blob {size}: {len(text)} characters, not the {size} expected")

            count = 0
            try:
                async with asyncio.timeout(seconds * 4 + 120):
                    await one()
                    with CpuMeter(peer.pid) as meter:
                        deadline = time.perf_counter() + seconds
                        while count < max_calls and (count < min_calls or time.perf_counter() < deadline):
                            await one()
                            count += 1
            except (driver.ContractError, TimeoutError) as exc:
                errors.append(f"{size:,} characters: {_why(exc)}")
                break
            _append(
                series,
                calls_per_s=count / meter.wall,
                ms_per_call=meter.wall / count * 1e3,
                server_cpu_ms=meter.server_cpu / count * 1e3,
                driver_cpu_ms=meter.driver_cpu / count * 1e3,
                peak_rss_mib=mib(status_kb(peer.pid, "VmHWM")),
            )
    return series


async def list_all(peer: driver.Peer) -> tuple[int, int]:
    """Every page of ``tools/list``: (tools, pages). Names must not repeat across pages."""
    names: set[str] = set()
    pages = 0
    cursor: str | None = None
    while True:
        result = await peer.result("tools/list", {"cursor": cursor} if cursor is not None else {})
        pages += 1
        for tool in result.get("tools") or []:
            if tool["name"] in names:
                raise driver.ContractError(f"tools/list: {tool['name']} on two pages")
            names.add(tool["name"])
        cursor = result.get("nextCursor")
        if not cursor:
            return len(names), pages


async def tools(
    cmd: Sequence[str], log: Any, errors: list[str], counts: Sequence[int], seconds: float, min_reps: int, fixed: int
) -> Series:
    """A fresh server per count of tools: how long it took to register them (its own clock), the time
    to list them all (every page; median of repetitions), and its RSS afterwards."""
    series: Series = {}
    for count in counts:
        try:
            async with stdio_server(cmd, {"CURVE_TOOLS": str(count)}, log) as peer:
                stats = json.loads(driver.text_of(await peer.call("curve_stats", {}), "curve_stats"))
                listed, pages = await list_all(peer)
                if listed != count + fixed:
                    raise driver.ContractError(f"tools/list: {listed} tools, not {count + fixed}")
                times: list[float] = []
                deadline = time.perf_counter() + seconds
                async with asyncio.timeout(seconds * 4 + 120):
                    with CpuMeter(peer.pid) as meter:
                        while len(times) < min_reps or (time.perf_counter() < deadline and len(times) < 200):
                            started = time.perf_counter()
                            await list_all(peer)
                            times.append(time.perf_counter() - started)
                rss = mib(status_kb(peer.pid))
        except (driver.ContractError, TimeoutError) as exc:
            errors.append(f"{count:,} tools: {_why(exc)}")
            break
        _append(
            series,
            register_ms=stats["register_ms"],
            register_cpu_ms=stats["register_cpu_ms"],
            list_ms=statistics.median(times) * 1e3,
            list_cpu_ms=meter.server_cpu / len(times) * 1e3,
            pages=pages,
            rss_mib=rss,
        )
    return series


def _percentile(ordered: list[float], q: float) -> float:
    return driver.percentile(ordered, q)


async def in_flight(
    cmd: Sequence[str], log: Any, errors: list[str], widths: Sequence[int], sleep_ms: int, seconds: float
) -> Series:
    """``width`` calls of ``sleep(sleep_ms)`` kept in flight on one connection, widths ascending in one
    process: calls/s (ideally width / sleep), server CPU per call, latency p50/p99, RSS."""
    series: Series = {}
    async with stdio_server(cmd, {}, log) as peer:
        for width in widths:
            latencies: list[float] = []

            async def worker(deadline: float, into: list[float]) -> None:
                while time.perf_counter() < deadline:
                    started = time.perf_counter()
                    driver.expect_text(await peer.call("sleep", {"ms": sleep_ms}), "slept", "sleep")
                    into.append(time.perf_counter() - started)

            try:
                async with asyncio.timeout(seconds * 4 + 60):
                    warm_deadline = time.perf_counter() + min(0.3, seconds)
                    await asyncio.gather(*(worker(warm_deadline, []) for _ in range(width)))
                    with CpuMeter(peer.pid) as meter:
                        deadline = time.perf_counter() + seconds
                        await asyncio.gather(*(worker(deadline, latencies) for _ in range(width)))
            except (driver.ContractError, TimeoutError) as exc:
                errors.append(f"{width:,} in flight: {_why(exc)}")
                break
            latencies.sort()
            _append(
                series,
                calls_per_s=len(latencies) / meter.wall,
                ideal_per_s=width / (sleep_ms / 1e3),
                server_cpu_us=meter.server_cpu / len(latencies) * 1e6,
                p50_ms=_percentile(latencies, 0.5) * 1e3,
                p99_ms=_percentile(latencies, 0.99) * 1e3,
                rss_mib=mib(status_kb(peer.pid)),
            )
    return series


async def completion(
    cmd: Sequence[str], log: Any, errors: list[str], counts: Sequence[int], requests: int, seconds: float, warmup: int
) -> Series:
    """A fresh server per vocabulary size; ``requests`` seeded 1-3 letter prefixes one at a time, every
    answer checked (values, total, hasMore): latency p50/p99, server CPU per answer, RSS."""
    series: Series = {}
    rng = random.Random(19)
    prefixes = ["".join(rng.choice("abcdefghij") for _ in range(rng.randint(1, 3))) for _ in range(requests)]
    ref = {"type": "ref/prompt", "name": "pick"}
    for count in counts:
        vocabulary = words(count)
        latencies: list[float] = []
        try:
            async with stdio_server(cmd, {"CURVE_WORDS": str(count)}, log) as peer:

                async def one(prefix: str, peer: driver.Peer = peer, vocabulary: list[str] = vocabulary) -> float:
                    started = time.perf_counter()
                    params = {"ref": ref, "argument": {"name": "word", "value": prefix}}
                    got = (await peer.result("completion/complete", params)).get("completion") or {}
                    elapsed = time.perf_counter() - started
                    values, total = expected_completion(vocabulary, prefix)
                    if got.get("values") != values or got.get("total") != total or got.get("hasMore") != (total > 100):
                        raise driver.ContractError(f"completion {prefix!r}: total {got.get('total')}, not {total}")
                    return elapsed

                async with asyncio.timeout(seconds * 4 + 60):
                    for prefix in prefixes[:warmup]:
                        await one(prefix)
                    with CpuMeter(peer.pid) as meter:
                        deadline = time.perf_counter() + seconds
                        for prefix in prefixes:
                            if time.perf_counter() >= deadline:
                                break
                            latencies.append(await one(prefix))
                rss = mib(status_kb(peer.pid))
        except (driver.ContractError, TimeoutError) as exc:
            errors.append(f"{count:,} words: {_why(exc)}")
            break
        latencies.sort()
        _append(
            series,
            p50_ms=_percentile(latencies, 0.5) * 1e3,
            p99_ms=_percentile(latencies, 0.99) * 1e3,
            server_cpu_us=meter.server_cpu / len(latencies) * 1e6,
            answers=len(latencies),
            rss_mib=rss,
        )
    return series
