"""Tasks on the bench contract: tasks created and completed per second, and ``tasks/get`` latency,
backchannel against FastMCP (``fastmcp-tasks``, the one other Python implementation).

    python benchmarks/tasks.py [--quick] [--reps N]     # both servers, a table on stdout
    python benchmarks/tasks.py serve                    # backchannel's tasks contract server (PORT env)

The contract (an addendum to ``shared/bench/CONTRACT.md`` v1, which has no tasks): Streamable HTTP
on ``127.0.0.1:$PORT/mcp``, the 2026-07-28 wire (each request its own: ``_meta`` envelope, SEP-2243
headers) with the tasks extension (SEP-2663), the only era FastMCP has tasks in. Tool ``work``
``{ms: integer}`` may run as a task, and does for a client that declares the extension; it waits
``ms`` and answers the text ``worked``. The driver (``driver.HttpPool``: raw HTTP/1.1, keep-alive)
declares the extension on every request and checks every answer:

- **created + completed per second**: 8 lanes, each ``tools/call work {ms: 0}`` (a
  ``CreateTaskResult``), then ``tasks/get`` again at once until ``completed``, its inlined result
  checked; for at most ``tasks`` tasks or ``seconds`` seconds;
- **tasks/get p50/p99**: one task held working (``ms`` 600,000), then ``gets`` ``tasks/get`` one at
  a time, each answer checked.

FastMCP's server is ``peers/fastmcp_tasks_server.py``, run from ``.venv-fastmcp-tasks``
(``tests/peers/install-fastmcp-tasks.sh``; ``fastmcp-tasks`` pins an older ``fastmcp`` than
``.venv``'s), with its in-memory Docket. ``run.py`` adds these rows to every full run.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import driver  # noqa: E402

STATELESS = "2026-07-28"
EXTENSION = "io.modelcontextprotocol/tasks"
FASTMCP_PYTHON = ROOT / ".venv-fastmcp-tasks" / "bin" / "python"
LANES = 8


@dataclass(frozen=True)
class TasksPlan:
    tasks: int
    seconds: float
    gets: int


QUICK = TasksPlan(tasks=40, seconds=5.0, gets=50)
FULL = TasksPlan(tasks=3000, seconds=8.0, gets=2000)


@dataclass
class TasksResult:
    server: str
    metrics: dict[str, float] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


def servers() -> dict[str, tuple[str, list[str], str | None]]:
    """name -> (label, command, why it cannot run here or None)."""
    fastmcp_missing = None if FASTMCP_PYTHON.is_file() else "run tests/peers/install-fastmcp-tasks.sh"
    return {
        "backchannel": ("backchannel", [sys.executable, str(Path(__file__).resolve()), "serve"], None),
        "fastmcp": (
            "FastMCP (fastmcp-tasks)",
            [str(FASTMCP_PYTHON), str(HERE / "peers" / "fastmcp_tasks_server.py")],
            fastmcp_missing,
        ),
    }


# ------------------------------------------------------------------------------- the driver


class Wire:
    """Stateless-era requests over ``driver.HttpPool``, declaring the tasks extension."""

    def __init__(self, pool: driver.HttpPool) -> None:
        self.pool = pool
        self.ids = itertools.count(1)
        self.meta = {
            "io.modelcontextprotocol/protocolVersion": STATELESS,
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXTENSION: {}}},
            "io.modelcontextprotocol/clientInfo": {"name": "bench-tasks", "version": "1"},
        }

    async def result(self, method: str, params: dict[str, Any], name: str | None = None) -> dict[str, Any]:
        request_id = next(self.ids)
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": self.meta}}
        headers = f"MCP-Protocol-Version: {STATELESS}\r\nMcp-Method: {method}\r\n"
        if name is not None:
            headers += f"Mcp-Name: {name}\r\n"
        answers: list[dict[str, Any]] = []
        await self.pool.post(headers.encode(), orjson.dumps(message), answers.append)
        answer = next((a for a in answers if a.get("id") == request_id), None)
        if answer is None or "result" not in answer:
            raise driver.ContractError(f"{method}: {answer}")
        return answer["result"]  # type: ignore[no-any-return]

    async def create(self, ms: int) -> str:
        created = await self.result("tools/call", {"name": "work", "arguments": {"ms": ms}}, "work")
        if created.get("resultType") != "task" or not isinstance(created.get("taskId"), str):
            raise driver.ContractError(f"work did not become a task: {created}")
        return created["taskId"]  # type: ignore[no-any-return]

    async def get(self, task_id: str) -> dict[str, Any]:
        task = await self.result("tasks/get", {"taskId": task_id}, task_id)
        if task.get("taskId") != task_id:
            raise driver.ContractError(f"tasks/get answered another task: {task}")
        return task


async def created_and_completed(wire: Wire, plan: TasksPlan, pid: int, metrics: dict[str, float]) -> None:
    deadline = time.perf_counter() + plan.seconds
    left = plan.tasks
    polls = 0

    async def lane() -> int:
        nonlocal left, polls
        done = 0
        while left > 0 and time.perf_counter() < deadline:
            left -= 1
            task_id = await wire.create(0)
            while True:
                task = await wire.get(task_id)
                polls += 1
                if task["status"] == "completed":
                    break
                if task["status"] != "working":
                    raise driver.ContractError(f"work(0) ended {task['status']}: {task}")
            driver.expect_text(task.get("result") or {}, "worked", "the completed task's result")
            done += 1
        return done

    with driver.Meter(pid) as meter:
        done = sum(await asyncio.gather(*(lane() for _ in range(LANES))))
    meter.record(metrics, "tasks", done)
    metrics["tasks_gets_per_task"] = polls / done if done else 0.0


async def get_latency(wire: Wire, plan: TasksPlan, pid: int, metrics: dict[str, float]) -> None:
    task_id = await wire.create(600_000)
    latencies: list[float] = []
    with driver.Meter(pid) as meter:
        for _ in range(plan.gets):
            started = time.perf_counter()
            task = await wire.get(task_id)
            latencies.append(time.perf_counter() - started)
            if task["status"] != "working":
                raise driver.ContractError(f"a held task read {task['status']}")
    latencies.sort()
    metrics["tasks_get_p50_ms"] = driver.percentile(latencies, 0.50) * 1e3
    metrics["tasks_get_p99_ms"] = driver.percentile(latencies, 0.99) * 1e3
    metrics["tasks_get_server_cpu_us"] = meter.server_cpu / len(latencies) * 1e6
    await wire.result("tasks/cancel", {"taskId": task_id}, task_id)


async def measure(name: str, cmd: list[str], plan: TasksPlan, log_path: Path) -> TasksResult:
    """Start the server, run both measurements, stop it."""
    result = TasksResult(name)
    with log_path.open("ab") as log:
        server = await driver.HttpServer.spawn(cmd, driver.server_env(), log)
        pool = driver.HttpPool(server.port)
        try:
            await server.wait_listening(30.0)
            wire = Wire(pool)
            for what, step in (("created + completed", created_and_completed), ("tasks/get", get_latency)):
                try:
                    async with asyncio.timeout(plan.seconds + 60):
                        await step(wire, plan, server.pid, result.metrics)
                except (driver.ContractError, TimeoutError, OSError) as exc:
                    result.errors.append(f"{what}: {type(exc).__name__}: {exc}")
        except driver.ContractError as exc:
            result.errors.append(str(exc))
        finally:
            pool.close()
            await server.stop()
    return result


async def run_all(plan: TasksPlan, reps: int, log_dir: Path) -> dict[str, list[TasksResult]]:
    found: dict[str, list[TasksResult]] = {}
    names = [name for name, (_, _, missing) in servers().items() if missing is None]
    for rep in range(reps):
        for name in names[rep % len(names) :] + names[: rep % len(names)]:
            _, cmd, _ = servers()[name]
            found.setdefault(name, []).append(await measure(name, cmd, plan, log_dir / f"tasks-{name}.log"))
    return found


def table(found: dict[str, list[TasksResult]]) -> str:
    rows = [("tasks created + completed", "tasks_per_s", "tasks/s"), ("tasks/get p50", "tasks_get_p50_ms", "ms")]
    rows += [("tasks/get p99", "tasks_get_p99_ms", "ms"), ("tasks/get server CPU", "tasks_get_server_cpu_us", "µs")]
    labels = {name: label for name, (label, _, _) in servers().items()}
    out = ["| measurement | unit | " + " | ".join(labels[n] for n in found) + " |", "|---|---|" + "---|" * len(found)]
    for title, key, unit in rows:
        cells = []
        for results in found.values():
            values = [r.metrics[key] for r in results if key in r.metrics]
            cells.append(f"{statistics.median(values):,.2f}" if values else "-")
        out.append(f"| {title} | {unit} | " + " | ".join(cells) + " |")
    return "\n".join(out)


# ------------------------------------------------------------------------ run.py's rows

#: ``run.py``'s rows: (transport, key, label, unit, higher is better). Keys under transport "tasks".
METRICS = [
    ("tasks", "tasks_per_s", "tasks created + completed (HTTP, 2026-07-28)", "tasks/s", True),
    ("tasks", "tasks_get_p50_ms", "tasks/get p50 (a working task)", "ms", False),
    ("tasks", "tasks_get_p99_ms", "tasks/get p99 (a working task)", "ms", False),
]


async def repetition(
    samples: dict[tuple[str, str], list[dict[str, float]]],
    problems: dict[str, list[str]],
    rep: int,
    log_dir: Path,
    names: list[str],
    plan: TasksPlan = FULL,
) -> None:
    """One repetition of the tasks rows for ``run.py``: each of ``names`` that has a tasks server."""
    for name, (label, cmd, missing) in servers().items():
        if name not in names or missing is not None:
            continue
        result = await measure(name, cmd, plan, log_dir / f"tasks-{name}.log")
        samples.setdefault((name, "tasks"), []).append(result.metrics)
        for error in result.errors:
            problems.setdefault(f"{label} tasks", []).append(f"wrong (rep {rep + 1}): {error}")
        print(f"rep {rep + 1}: {label + ' tasks':26} http  ({result.metrics.get('tasks_per_s', 0):,.0f} tasks/s)")


# ------------------------------------------------------------------------------- the server


def serve() -> None:
    """backchannel's side of the contract, on ``$PORT``."""
    from backchannel import Server

    server = Server("backchannel-bench-tasks", "1.0.0")
    # The benchmark's one anonymous caller makes many: its budget (per address since issue #26)
    # and the pool of all tasks are raised past what a run makes.
    server.tasks.limit = server.tasks.anonymous_limit = server.tasks.limit_total = 1_000_000
    server.tasks.ttl = 300.0

    @server.tool(task="optional")
    async def work(ms: int) -> str:
        """Wait ``ms`` milliseconds, then answer."""
        if ms:
            await asyncio.sleep(ms / 1000)
        return "worked"

    server.run_http("127.0.0.1", int(os.environ["PORT"]), "/mcp")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("mode", nargs="?", choices=("serve",))
    parser.add_argument("--quick", action="store_true", help="check the answers once, tiny counts")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--logs", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "bench-logs")
    ns = parser.parse_args()
    if ns.mode == "serve":
        serve()
        return 0
    ns.logs.mkdir(parents=True, exist_ok=True)
    for label, _, missing in servers().values():
        if missing:
            print(f"{label}: skipped ({missing})")
    found = asyncio.run(run_all(QUICK if ns.quick else FULL, 1 if ns.quick else ns.reps, ns.logs))
    print(table(found))
    errors = [f"{r.server}: {e}" for results in found.values() for r in results for e in r.errors]
    for error in errors:
        print(f"wrong: {error}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
