"""The curves measured over Streamable HTTP: concurrent sessions, and workers sharing one Redis.

- ``sessions``: a fresh server per count S; S sessions each do ``initialize``, ``initialized`` and one
  ``echo``, all S of them in progress together (their requests queued FIFO behind a gate of
  ``connections`` requests in flight over as many keep-alive connections, as a proxy in front of the
  server would hold them), so every echo is answered while all S sessions are open. Latency is the
  echo's POST on the wire (the wait at the gate is the driver's, not counted).
- ``workers``: 1 and 2 backchannel workers (``contract_server.py http --redis``) sharing one Redis
  behind nginx round-robin (``fleet_services.py``'s configuration), echo and ask with ``in_flight``
  calls at a time on one session; the official Python SDK's and the TypeScript SDK's contract servers,
  one process each behind the same nginx, are the reference (they have no way to share a session
  between processes).
"""

from __future__ import annotations

__all__ = ["GatedPool", "behind_nginx", "sessions", "workers_point"]

import asyncio
import contextlib
import itertools
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import driver
from curve_stdio import CpuMeter, Series, cpu_seconds, status_kb
from fleet_services import _nginx_config, _wait_ready

from backchannel.testing import free_port, stop_process, wait_for_port

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from _services import redis_server  # noqa: E402  (tests/ is not a package)


class GatedPool(driver.HttpPool):
    """An ``HttpPool`` with at most ``limit`` POSTs in flight, queued FIFO; it notes how long each
    ``tools/call`` POST took once through the gate."""

    def __init__(self, port: int, limit: int) -> None:
        super().__init__(port)
        self.gate = asyncio.Semaphore(limit)
        self.call_seconds: list[float] = []

    async def post(
        self, extra_headers: bytes, body: bytes, on_message: Callable[[dict[str, Any]], None], timeout: float = 120.0
    ) -> tuple[int, dict[str, str]]:
        async with self.gate:
            started = time.perf_counter()
            answer = await super().post(extra_headers, body, on_message, timeout)
            if b'"tools/call"' in body:
                self.call_seconds.append(time.perf_counter() - started)
            return answer


async def sessions(
    cmd: Sequence[str], log: Any, errors: list[str], counts: Sequence[int], connections: int, seconds: float
) -> Series:
    """Per count S, a fresh server: S concurrent sessions, each handshake + one echo."""
    series: Series = {}
    env = driver.server_env()
    for count in counts:
        server = await driver.HttpServer.spawn(cmd, env, log)
        pool = GatedPool(server.port, connections)
        try:
            await server.wait_listening(60.0)
            await asyncio.sleep(0.3)  # let the process settle before its idle RSS is read
            before = status_kb(server.pid) or 0.0

            async def session(number: int, pool: driver.HttpPool = pool, pid: int = server.pid) -> None:
                peer = driver.HttpPeer(pool, pid)
                await driver.handshake(peer)
                await driver.echo_one(peer, f"session {number}")

            async with asyncio.timeout(seconds):
                with CpuMeter(server.pid) as meter:
                    await asyncio.gather(*(session(number) for number in range(count)))
            after = status_kb(server.pid) or 0.0
        except (driver.ContractError, TimeoutError, OSError) as exc:
            why = f"not all done within {seconds:.0f} s" if isinstance(exc, TimeoutError) else str(exc)
            errors.append(f"{count:,} sessions: {why}")
            break
        finally:
            pool.close()
            await server.stop()
        latencies = sorted(pool.call_seconds)
        series.setdefault("p50_ms", []).append(driver.percentile(latencies, 0.5) * 1e3)
        series.setdefault("p99_ms", []).append(driver.percentile(latencies, 0.99) * 1e3)
        series.setdefault("rss_mib", []).append(after / 1024)
        series.setdefault("kib_per_session", []).append((after - before) / count)
        series.setdefault("sessions_per_s", []).append(count / meter.wall)
        series.setdefault("server_cpu_us", []).append(meter.server_cpu / count * 1e6)
    return series


@contextlib.contextmanager
def behind_nginx(argvs: Sequence[Sequence[str]], log_dir: Path, redis: bool) -> Iterator[tuple[int, list[int]]]:
    """These servers (``{port}`` and ``{redis}`` filled in) behind one nginx, round-robin, with one
    Redis when ``redis``: (nginx's port, the pids of the servers, Redis and nginx). Everything is
    stopped on exit."""
    env = driver.server_env()
    with contextlib.ExitStack() as stack:
        store = stack.enter_context(redis_server()) if redis else None
        redis_url = store.url if store is not None else ""
        others = [store.process.pid] if store is not None and store.process is not None else []
        started: list[tuple[int, subprocess.Popen[bytes], Path]] = []
        for number, argv in enumerate(argvs):
            port = free_port()
            out = log_dir / f"curve-worker{number}.log"
            filled = [part.replace("{port}", str(port)).replace("{redis}", redis_url) for part in argv]
            with out.open("ab") as sink:
                process = subprocess.Popen(
                    filled,
                    stdin=subprocess.DEVNULL,
                    stdout=sink,
                    stderr=subprocess.STDOUT,
                    env={**env, "PORT": str(port)},
                )
            stack.callback(stop_process, process)
            started.append((port, process, out))
        for port, process, out in started:
            wait_for_port(port, process, timeout=60.0, output=partial(out.read_text, errors="replace"))
            _wait_ready(port, 60.0, out)
        directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bc-curve-nginx-")))
        port = free_port()
        config = directory / "nginx.conf"
        config.write_text(_nginx_config(port, [p for p, _, _ in started], directory), encoding="utf-8")
        argv = ["nginx", "-p", str(directory), "-c", str(config), "-e", str(directory / "error.log")]
        proxy = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        stack.callback(stop_process, proxy)
        wait_for_port(port, proxy, timeout=10.0, output=lambda: (directory / "error.log").read_text(errors="replace"))
        yield port, [process.pid for _, process, _ in started] + others + [proxy.pid]


async def _rate(
    work: Callable[[int], Coroutine[Any, Any, None]], in_flight: int, seconds: float, warmup: float, pids: list[int]
) -> tuple[float, float]:
    """Calls per second of ``work`` kept ``in_flight`` at a time for ``seconds`` (after ``warmup``),
    and the CPU time of the processes ``pids`` per call (µs)."""
    counter = itertools.count()

    async def worker(deadline: float) -> int:
        done = 0
        while time.perf_counter() < deadline:
            await work(next(counter))
            done += 1
        return done

    await asyncio.gather(*(worker(time.perf_counter() + warmup) for _ in range(in_flight)))
    cpu = sum(cpu_seconds(pid) for pid in pids)
    started = time.perf_counter()
    done = sum(await asyncio.gather(*(worker(started + seconds) for _ in range(in_flight))))
    wall = time.perf_counter() - started
    return done / wall, (sum(cpu_seconds(pid) for pid in pids) - cpu) / done * 1e6


async def workers_point(port: int, pids: list[int], in_flight: int, seconds: float, warmup: float) -> dict[str, float]:
    """echo/s and ask/s through nginx at ``port``, ``in_flight`` calls at a time on one session, and
    the CPU per call of ``pids`` (the servers, Redis and nginx: all a call costs the machine)."""
    pool = driver.HttpPool(port)
    try:
        peer = driver.HttpPeer(pool, 0)
        await driver.handshake(peer)

        async def echo(i: int) -> None:
            await driver.echo_one(peer, f"echo {i}")

        async def ask(i: int) -> None:
            driver.expect_text(await peer.call("ask", {}), "hello bench", "ask")

        async with asyncio.timeout((seconds + warmup) * 2 * 4 + 60):
            echo_rate, echo_cpu = await _rate(echo, in_flight, seconds, warmup, pids)
            ask_rate, ask_cpu = await _rate(ask, in_flight, seconds, warmup, pids)
        if peer.violations:
            raise driver.ContractError("; ".join(peer.violations[:3]))
        return {"echo_per_s": echo_rate, "ask_per_s": ask_rate, "echo_cpu_us": echo_cpu, "ask_cpu_us": ask_cpu}
    finally:
        pool.close()
