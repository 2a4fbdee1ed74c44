"""The fleet rows: two backchannel workers sharing one Redis behind nginx round-robin, measured
with the bench driver's own HTTP client (``driver.py``), every answer checked.

    python benchmarks/run.py --fleet     # these rows and the official SDK's reference, side by side
    python benchmarks/run.py --quick     # ... includes a one-shot check of them

Measured (``run_fleet``), each through nginx, so consecutive requests land on different workers:

- handshake-era ``ask``: the call runs on one worker, the client's answer (the next request) reaches
  the other, which forwards it through Redis. Every call/answer pair is checked on the wire to have
  crossed (nginx's ``X-Upstream``) and Redis counts one ``PUBLISH`` per answer;
- stateless-era ``ask``: the call and its retry with ``inputResponses`` on different workers;
- progress: a handshake-era call streaming N notifications, each written to the Redis event log
  (checked: N log entries); and the same call resumed (``Last-Event-ID``) on the other worker,
  which reads every notification back from the Redis log;
- Redis round trips per forwarded answer: asks are left waiting for their answers, then each
  answer is POSTed to the worker that did not ask, one at a time, each call's response awaited;
  ``INFO stats`` (``total_reads_processed``: one per command or pipeline a client sends) and
  ``INFO commandstats`` around exactly those answers, the background subtracted (the workers'
  lease renewals ``SET``, the subscribers' ``PING``, this driver's ``INFO``);
- Redis memory per idle session: ``used_memory`` and key count before and after K sessions.
"""

from __future__ import annotations

__all__ = ["FULL_FLEET", "QUICK_FLEET", "FleetPlan", "run_fleet"]

import asyncio
import gc
import itertools
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import driver
import orjson
from fleet_redis import RedisCounts, per
from fleet_resume import resumed_progress
from fleet_services import Fleet, fleet_services

STATELESS = "2026-07-28"
STATELESS_HEADERS = f"MCP-Protocol-Version: {STATELESS}\r\nMcp-Method: tools/call\r\nMcp-Name: ask\r\n".encode()
STATELESS_META = {
    "io.modelcontextprotocol/protocolVersion": STATELESS,
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
}


@dataclass(frozen=True, slots=True)
class FleetPlan:
    warmup: int
    ask_calls: int
    ask_seconds: float
    progress_steps: int
    progress_seconds: float
    answers: int
    sessions: int
    sessions_seconds: float


QUICK_FLEET = FleetPlan(3, 6, 5.0, 200, 10.0, 4, 10, 10.0)
# As the contract's single-process rows (driver.FULL): the same ask budget and progress steps,
# 1,000 idle sessions. 100 answers held open at once (fewer than the 128 finished streams after
# which a session forgets its oldest, so the window holds only what the answers cause).
FULL_FLEET = FleetPlan(50, 20000, 2.0, 10000, 40.0, 100, 1000, 60.0)


class TapPool(driver.HttpPool):
    """A pool that notes, with ``log`` set, what each POST carried and which worker served it."""

    def __init__(self, port: int) -> None:
        super().__init__(port)
        self.log: list[list[str]] | None = None

    async def post(
        self, extra_headers: bytes, body: bytes, on_message: Any, timeout: float = 120.0
    ) -> tuple[int, dict[str, str]]:
        entry = None
        if self.log is not None:
            entry = ["answer" if b'"method"' not in body else "call", "?"]
            self.log.append(entry)  # in the order sent: a call, then its answer
        status, headers = await super().post(extra_headers, body, on_message, timeout)
        if entry is not None:
            entry[1] = headers.get("x-upstream", "?")
        return status, headers


def crossings(log: list[list[str]]) -> tuple[int, int]:
    """(pairs, pairs served by one worker) over ``log`` read two by two: (call, its answer) in
    the handshake era, (call, its retry) in the stateless era."""
    pairs = list(zip(log[0::2], log[1::2], strict=False))
    return len(pairs), sum(first[1] == second[1] for first, second in pairs)


class HoldingPeer(driver.HttpPeer):
    """A session that notes who asked each elicitation (``asked_by``); with ``held`` set, it
    keeps them there unanswered instead of answering."""

    def __init__(self, pool: driver.HttpPool) -> None:
        super().__init__(pool, 0)
        self.asked_by: list[str] = []
        self.held: list[dict[str, Any]] | None = None

    async def _answer(self, message: dict[str, Any]) -> None:
        if message.get("method") == "elicitation/create":
            self.asked_by.append(str(message.get("id")).partition(":")[0])
            if self.held is not None:
                driver.check_elicitation(message.get("params"))
                self.held.append(message)
                return
        await super()._answer(message)


class FleetMeter(driver.Meter):
    """``driver.Meter`` over every process of the fleet (workers, Redis, nginx)."""

    def __init__(self, pids: list[int]) -> None:
        super().__init__(0)
        self.pids = pids

    def __enter__(self) -> FleetMeter:
        gc.collect()
        gc.disable()
        self._server = sum(driver.process_cpu(pid) for pid in self.pids)
        self._driver = time.process_time()
        self._wall = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self._wall
        self.driver_cpu = time.process_time() - self._driver
        self.server_cpu = sum(driver.process_cpu(pid) for pid in self.pids) - self._server
        gc.enable()


async def ask_one(peer: driver.HttpPeer) -> None:
    before = peer.elicitations
    driver.expect_text(await peer.call("ask", {}), "hello bench", "ask")
    if peer.elicitations != before + 1:
        raise driver.ContractError(f"ask: {peer.elicitations - before} elicitation requests for one call")


async def handshake_ask(fleet: Fleet, counts: RedisCounts, plan: FleetPlan, metrics: dict[str, float]) -> None:
    pool = TapPool(fleet.port)
    peer = HoldingPeer(pool)
    await driver.handshake(peer)
    for _ in range(plan.warmup):
        await ask_one(peer)
    pool.log = []
    count = 0
    before = counts.snapshot()
    with FleetMeter(fleet.pids) as meter:
        deadline = time.perf_counter() + plan.ask_seconds
        while count < plan.ask_calls and time.perf_counter() < deadline:
            await ask_one(peer)
            count += 1
    await asyncio.gather(*peer.answering)  # the last answer's 202 (and its worker) may still be on the way
    pairs, same = crossings(pool.log)
    if any(entry[0] != ("call", "answer")[i % 2] for i, entry in enumerate(pool.log)):
        raise driver.ContractError("ask: the POSTs were not a call, then its answer, in turn")
    if pairs != count or same:
        raise driver.ContractError(f"ask: {same} of {pairs} answers reached the worker that asked ({count} calls)")
    await counts.wait_for(before, "xadd", 4 * count)  # each call's stream: its request, question, answer, end
    after = counts.snapshot()
    published = after.get("publish", 0) - before.get("publish", 0)
    if published < count:
        raise driver.ContractError(f"ask: {published:.0f} PUBLISH for {count} answers: some were not forwarded")
    meter.record(metrics, "ask", count)
    per(before, after, count, "ask", metrics)
    pool.close()


async def stateless_ask(fleet: Fleet, plan: FleetPlan, metrics: dict[str, float]) -> None:
    pool = TapPool(fleet.port)
    ids = itertools.count(1)

    async def post(params: dict[str, Any]) -> dict[str, Any]:
        got: list[dict[str, Any]] = []
        message = {"jsonrpc": "2.0", "id": next(ids), "method": "tools/call", "params": params}
        status, _ = await pool.post(STATELESS_HEADERS, orjson.dumps(message), got.append)
        if status != 200 or len(got) != 1 or "result" not in got[0]:
            raise driver.ContractError(f"stateless ask: HTTP {status}, {got!r:.300}")
        result: dict[str, Any] = got[0]["result"]
        return result

    async def one() -> None:
        params = {"name": "ask", "arguments": {}, "_meta": STATELESS_META}
        first = await post(params)
        requests = first.get("inputRequests") or {}
        if first.get("resultType") != "input_required" or len(requests) != 1:
            raise driver.ContractError(f"stateless ask: expected one input request, got {first!r:.300}")
        ((key, question),) = requests.items()
        if question.get("method") != "elicitation/create":
            raise driver.ContractError(f"stateless ask: input request {question!r:.200}")
        driver.check_elicitation(question.get("params"))
        retry = {**params, "inputResponses": {key: driver.ELICIT_ANSWER}}
        if first.get("requestState") is not None:
            retry["requestState"] = first["requestState"]
        driver.expect_text(await post(retry), "hello bench", "stateless ask")

    for _ in range(plan.warmup):
        await one()
    pool.log = []
    count = 0
    with FleetMeter(fleet.pids) as meter:
        deadline = time.perf_counter() + plan.ask_seconds
        while count < plan.ask_calls and time.perf_counter() < deadline:
            await one()
            count += 1
    pairs, same = crossings(pool.log)
    if pairs != count or same:
        raise driver.ContractError(f"stateless ask: {same} of {pairs} retries reached the worker of their call")
    meter.record(metrics, "stateless_ask", count)
    pool.close()


async def progress(fleet: Fleet, counts: RedisCounts, plan: FleetPlan, metrics: dict[str, float]) -> None:
    pool = TapPool(fleet.port)
    peer = driver.HttpPeer(pool, 0)
    await driver.handshake(peer)
    steps = plan.progress_steps
    log = driver.ProgressLog(steps)
    peer.track_progress("fleet-progress", log)
    before = counts.snapshot()
    with FleetMeter(fleet.pids) as meter:
        async with asyncio.timeout(plan.progress_seconds):
            result = await peer.call("progress", {"steps": steps}, {"progressToken": "fleet-progress"})
    driver.expect_text(result, "done", "progress")
    log.check()
    await counts.wait_for(before, "xadd", steps)  # every notification went into the Redis event log
    metrics["progress_per_s"] = steps / meter.wall
    metrics["progress_server_cpu_us"] = meter.server_cpu / steps * 1e6
    metrics["resumed_progress_per_s"] = await resumed_progress(fleet.port, peer.session_headers, steps, plan)
    pool.close()


async def forwarded_answers(fleet: Fleet, counts: RedisCounts, plan: FleetPlan, metrics: dict[str, float]) -> None:
    """Round trips around exactly ``plan.answers`` forwarded answers (see the module)."""
    pools = {port: driver.HttpPool(port) for port in fleet.worker_ports}
    port_of: dict[str, int] = {}
    for port, direct_pool in pools.items():  # which worker id serves which port: one ask each, directly
        direct = HoldingPeer(direct_pool)
        await driver.handshake(direct)
        await ask_one(direct)
        port_of[direct.asked_by[-1]] = port
    pool = TapPool(fleet.port)
    peer = HoldingPeer(pool)
    await driver.handshake(peer)  # initialize on one worker, initialized on the other: both serve it
    for _ in range(2):  # a call on each worker first: what a replica does once is not per answer
        await ask_one(peer)
    held: list[dict[str, Any]] = []
    peer.held = held
    opened = counts.snapshot()
    finished = 0
    progressed = asyncio.Event()

    async def call() -> None:
        nonlocal finished
        try:
            driver.expect_text(await peer.call("ask", {}), "hello bench", "ask")
            finished += 1
        finally:
            progressed.set()

    calls = [asyncio.create_task(call()) for _ in range(plan.answers)]
    try:
        while len(held) < plan.answers:
            if any(task.done() for task in calls):  # an answer without a question: the error says why
                await next(task for task in calls if task.done())
                raise driver.ContractError("forwarded answers: a call was answered before it was asked")
            await asyncio.sleep(0.01)
        await counts.wait_for(opened, "xadd", 2 * plan.answers)  # each stream's request and question
        before = counts.snapshot()
        for number, question in enumerate(held):
            asker = str(question["id"]).partition(":")[0]
            other = next(port for worker, port in port_of.items() if worker != asker)
            answer = orjson.dumps(driver.answer_to(question, peer))
            status, _ = await pools[other].post(peer.session_headers, answer, lambda message: None)
            if status != 202:
                raise driver.ContractError(f"forwarded answer: HTTP {status}, not 202")
            while finished <= number:  # this call's response is out before the next answer goes
                progressed.clear()
                failed = [task for task in calls if task.done() and task.exception() is not None]
                if failed:
                    await failed[0]
                await progressed.wait()
        await asyncio.gather(*calls)
        await counts.wait_for(before, "xadd", 2 * plan.answers)  # each stream's answer and end
        after = counts.snapshot()
    finally:
        for task in calls:
            task.cancel()
        for each in (*pools.values(), pool):
            each.close()
    published = after.get("publish", 0) - before.get("publish", 0)
    if published != plan.answers:
        seen = {k: after[k] - before.get(k, 0) for k in after if k not in ("used_memory", "keys")}
        raise driver.ContractError(
            f"forwarded answers: {published:.0f} PUBLISH for {plan.answers} answers; Redis served "
            + ", ".join(f"{count:.0f} {name}" for name, count in seen.items() if count)
        )
    per(before, after, plan.answers, "answer", metrics)


async def idle_sessions(fleet: Fleet, counts: RedisCounts, plan: FleetPlan, metrics: dict[str, float]) -> None:
    pool = TapPool(fleet.port)
    before = await counts.settled()
    opened: list[driver.HttpPeer] = []
    started = time.perf_counter()
    deadline = started + plan.sessions_seconds
    while len(opened) < plan.sessions and time.perf_counter() < deadline:
        peer = driver.HttpPeer(pool, 0)
        await driver.handshake(peer)  # initialize on one worker, initialized on the other
        opened.append(peer)
    elapsed = time.perf_counter() - started
    if len(opened) < plan.sessions:
        raise driver.ContractError(f"opened only {len(opened)} of {plan.sessions} sessions in {elapsed:.0f} s")
    after = await counts.settled()
    metrics["session_redis_kb"] = (after["used_memory"] - before["used_memory"]) / len(opened) / 1024
    metrics["session_redis_keys"] = (after["keys"] - before["keys"]) / len(opened)
    metrics["session_open_per_s"] = len(opened) / elapsed
    # One record's own size, as Redis counts it: the rest of the growth is the two workers'
    # subscriptions to the session's channel.
    session_id = opened[0].session_headers.split(b"\r\n", 1)[0].split(b": ", 1)[1].decode()
    record: int | None = counts.client.memory_usage(f"bc:session:{{{session_id}}}")  # type: ignore[assignment]
    if record is None:
        raise driver.ContractError(f"idle sessions: no record of session {session_id[:8]}... in Redis")
    metrics["session_record_bytes"] = float(record)
    await driver.echo_one(opened[len(opened) // 2], "still here")  # an idle session still answers
    pool.close()


async def run_fleet(plan: FleetPlan, log_dir: Path) -> driver.SuiteResult:
    """Start the fleet, measure every row, stop it; wrong answers land in ``errors``."""
    result = driver.SuiteResult("fleet", "http")
    started = time.perf_counter()
    m = result.metrics
    try:
        with fleet_services(log_dir) as fleet:
            counts = RedisCounts(fleet.redis_url)
            try:
                steps = [
                    ("handshake ask", handshake_ask(fleet, counts, plan, m), plan.ask_seconds * 5 + 30),
                    ("stateless ask", stateless_ask(fleet, plan, m), plan.ask_seconds * 5 + 30),
                    ("progress", progress(fleet, counts, plan, m), plan.progress_seconds * 2 + 30),
                    ("forwarded answers", forwarded_answers(fleet, counts, plan, m), 60),
                    ("idle sessions", idle_sessions(fleet, counts, plan, m), plan.sessions_seconds + 30),
                ]
                for number, (what, work, limit) in enumerate(steps):
                    if not await driver._step(result, what, work, limit):
                        for _, rest, _ in steps[number + 1 :]:
                            rest.close()
                        break
            finally:
                counts.close()
    except Exception as exc:
        result.errors.append(f"{type(exc).__name__}: {exc}")
    result.seconds = time.perf_counter() - started
    return result
