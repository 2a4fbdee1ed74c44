"""Issue #30, proof 3: a gateway on two workers sharing one Redis, behind nginx round robin, keeps
a mounted upstream's questions working.

Two ``backchannel gateway FILE --http --redis URL`` processes (the workers), each on its own port,
and nginx passing every request to the next of them in turn, so a client's consecutive requests
land on different workers. The file mounts two upstreams over stdio, so each worker starts its own
process of each:

* ``our``: a backchannel server that serves the stateless era only, started with a sealing key
  (``--key``) its processes share, as every process of one stateless server must;
* ``sdk``: an mcp 2.3.0 server, spoken to in the handshake era (its questions are requests of its
  own, asked while its call waits in the worker that made it).

What each client gets, its requests alternating workers:

* a handshake-era client (a session the workers share through Redis) is asked each upstream's
  form and its answers reach the upstream: the call waits in one worker, and the answer, posted
  to the other, is passed to it through Redis (``answer`` counts, any worker);
* a stateless-era client is asked the stateless upstream's form in one worker's answer and retries
  with its answer at the other worker: the upstream's ``requestState`` travels sealed inside the
  gateway's, which every worker opens (the fleet's keyring; a mounted server seals with its
  mounting server's sealer), and the other worker's upstream process opens the upstream's own;
* a stateless-era client asked a handshake-era upstream's form cannot be answered at another worker:
  the upstream's call is held in the worker that asked (docs/gateway.md, "Several workers"). The
  retry that reaches the other worker is refused with -32602 saying to send the request again.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from _services import nginx_round_robin, redis_server
from _subprocesses import checkout_env
from backchannel import Client
from backchannel.testing import free_port, run, stop_process, wait_for_port
from backchannel.types.errors import MCPError

HERE = Path(__file__).resolve().parent
UPSTREAMS = HERE / "gateway_upstreams.py"
NAME = "Ada Lovelace"
CALLS = 3
START_TIMEOUT = 90.0


@dataclass
class Fleet:
    url: str
    logs: list[Path]

    def lines(self, worker: int, text: str) -> int:
        return sum(text in line for line in self.logs[worker].read_text(errors="replace").splitlines())


def _config(key: str) -> str:
    python = sys.executable
    ours = [python, str(UPSTREAMS), "ours", "--key", key]
    sdk = [python, str(UPSTREAMS), "pysdk"]
    return f"""
[gateway]
name = "fleet-gateway"

[[upstream]]
name = "our"
command = {json.dumps(ours)}
era = "stateless"

[[upstream]]
name = "sdk"
command = {json.dumps(sdk)}
era = "handshake"

[middleware]
log_requests = true
"""


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    work = tmp_path_factory.mktemp("gateway-fleet")
    config = work / "gateway.toml"
    config.write_text(_config(os.urandom(32).hex()))
    env = checkout_env()
    with contextlib.ExitStack() as stack:
        redis = stack.enter_context(redis_server())
        ports = [free_port(), free_port()]
        logs = [work / f"worker-{number}.log" for number in range(2)]
        for port, log in zip(ports, logs, strict=True):
            argv = [sys.executable, "-m", "backchannel", "gateway", str(config), "--http", "--port", str(port)]
            argv += ["--redis", redis.url]
            stack.enter_context(_logged(argv, port, log, env))
        nginx = stack.enter_context(nginx_round_robin(ports))
        yield Fleet(f"{nginx.url}/mcp", logs)


@contextlib.contextmanager
def _logged(argv: list[str], port: int, log: Path, env: dict[str, str]) -> Iterator[None]:
    """``argv`` running, its output in ``log`` (the tests read its lines), until the block ends."""
    with log.open("wb") as out:
        process = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, process, timeout=START_TIMEOUT, output=lambda: log.read_text(errors="replace"))
        yield
    finally:
        stop_process(process, timeout=10)


def _person(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": NAME}}


def _text(result: Any) -> str:
    return str(result.content[0].text)


def test_a_handshake_client_answers_both_upstreams_across_workers(fleet: Fleet) -> None:
    async def body() -> list[str]:
        async with Client.http(fleet.url, era="handshake", elicitation=_person) as client:
            return [
                _text(await client.call_tool(f"{prefix}_ask", {})) for prefix in ("our", "sdk") for _ in range(CALLS)
            ]

    assert run(body, timeout=120) == [f"accept:{NAME}"] * (2 * CALLS)
    for worker in (0, 1):  # the session's requests went to both workers (its initialize to one)
        assert fleet.lines(worker, "era=handshake") >= 1, fleet.logs[worker].read_text()


def test_a_stateless_client_retries_at_the_other_worker(fleet: Fleet) -> None:
    async def body() -> list[str]:
        async with Client.http(fleet.url, era="stateless", elicitation=_person) as client:
            return [_text(await client.call_tool("our_ask", {})) for _ in range(CALLS)]

    assert run(body, timeout=120) == [f"accept:{NAME}"] * CALLS
    asked = [
        fleet.lines(worker, "tools/call our_ask era=stateless principal=- outcome=input_required") for worker in (0, 1)
    ]
    answered = [fleet.lines(worker, "tools/call our_ask era=stateless principal=- outcome=ok") for worker in (0, 1)]
    # Each call asked at one worker and was answered at the other (round robin, one request at a time).
    assert sum(asked) == CALLS and answered == asked[::-1], (asked, answered)


def test_a_held_call_is_answered_only_by_the_worker_that_holds_it(fleet: Fleet) -> None:
    async def body() -> MCPError:
        async with Client.http(fleet.url, era="stateless", elicitation=_person) as client:
            with pytest.raises(MCPError) as refused:
                await client.call_tool("sdk_ask", {})
            return refused.value

    error = run(body, timeout=120)
    assert error.code == -32602, error
    assert "again without requestState" in error.message, error.message
