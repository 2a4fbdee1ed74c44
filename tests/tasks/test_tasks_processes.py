"""Tasks in a fleet of real processes sharing one ``redis-server``: the worker running a task is
killed (SIGKILL: no shutdown, its lease not given back), and another worker reports the task
failed, naming the worker, within the lease (1.5 s) and a poll; in both eras.

Each worker listens on its own port, so each request goes to the worker the test names."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
from _wire import Session, Stateless

from _services import RedisServer
from _subprocesses import checkout_env
from backchannel.testing import free_port, run, stop_process, wait_for_port

WORKER = Path(__file__).with_name("tasks_worker.py")
#: A dead worker's tasks must read failed within this (its lease is 1.5 s; then one tasks/get).
BOUND = 10.0


@contextlib.contextmanager
def workers(redis_url: str, count: int, directory: Path) -> Iterator[list[tuple[str, subprocess.Popen[bytes]]]]:
    started: list[tuple[str, subprocess.Popen[bytes]]] = []
    try:
        for number in range(count):
            port = free_port()
            log = open(directory / f"worker-{number}.log", "wb")  # noqa: SIM115 - closed with the process
            argv = [sys.executable, str(WORKER), "--port", str(port), "--redis", redis_url, "--name", f"w{number}"]
            process = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=checkout_env()
            )
            started.append((f"http://127.0.0.1:{port}/mcp", process))
        for url, process in started:
            wait_for_port(int(url.split(":")[2].split("/")[0]), process, timeout=30.0)
        yield started
    finally:
        for _, process in started:
            stop_process(process)


def test_a_killed_workers_tasks_read_failed_on_another_worker_in_both_eras(
    tasks_redis: RedisServer, tmp_path: Path
) -> None:
    async def body(urls: list[str], owner: subprocess.Popen[bytes]) -> None:
        async with httpx2.AsyncClient(timeout=10) as http:
            on_owner, on_other = Stateless(http, urls[0]), Stateless(http, urls[1])
            created = await on_owner.call("tools/call", {"name": "hold", "arguments": {}})
            await on_other.until(created["taskId"], lambda t: t["status"] == "working")
            session = Session(http, urls[0])
            await session.open()
            handshake = (await session.call("tools/call", {"name": "hold", "arguments": {}, "task": {}}))["task"]

            killed = time.monotonic()
            os.kill(owner.pid, signal.SIGKILL)
            owner.wait(timeout=10)
            task = await on_other.until(created["taskId"], lambda t: t["status"] != "working", timeout=BOUND)
            assert time.monotonic() - killed < BOUND
            assert task["status"] == "failed" and task["error"]["code"] == -32603
            assert "stopped before the task finished" in task["error"]["message"]

            session.url = urls[1]  # the session, taken up by the other worker from Redis
            polled = await session.call("tasks/get", {"taskId": handshake["taskId"]})
            assert polled["status"] == "failed" and "stopped before the task finished" in polled["statusMessage"]
            error = (await session.send("tasks/result", {"taskId": handshake["taskId"]}))["error"]
            assert error["code"] == -32603

    with workers(tasks_redis.url, 2, tmp_path) as started:
        urls = [url for url, _ in started]
        run(body(urls, started[0][1]), timeout=30)
