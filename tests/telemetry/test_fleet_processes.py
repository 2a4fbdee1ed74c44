"""One trace across a fleet of real processes (issue #20: "On many workers, the forwarded messages
keep their context"): a ``redis-server``, two workers (``fleet_otel_worker.py``, each its own
process and port, each writing its spans to its own file) and nginx passing each request to the
next worker in turn (``tests/_services.py``); our client in this process, its spans in memory.

- A handshake-era tool call that elicits lands on one worker, and the client's answer, POSTed
  next, on the other, which forwards it (through Redis) to the asker: the client's spans and
  every span of both workers form one trace, and the asker's elicitation span ends when the
  answer arrives, not before.
- A task's ``tasks/cancel`` sent to the worker that does not run the task is relayed to the one
  that does (``server/tasks/relay.py``), which handles it in a span that is a child of the
  relaying worker's ``tasks/cancel`` span.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import redis.asyncio as aioredis
from _otel import Otel, SpanRecord, one_span, read_span_file, render_tree

from _services import nginx_round_robin, redis_server
from backchannel import Client
from backchannel.testing import free_port, run, stop_process, wait_for_port, within
from backchannel.transports.http.client import HttpClientTransport

WORKER = Path(__file__).with_name("fleet_otel_worker.py")
HANDSHAKE = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
#: How long the person takes to answer: the asker's elicitation span lasts at least this long.
THINKING = 0.3
META_TRACE = "0af7651916cd43dd8448eb211c80319c"


@dataclass
class Fleet:
    url: str  # nginx, round robin
    workers: list[str]  # each worker's own URL
    spans: list[Path]  # each worker's span file
    redis_url: str

    def worker_spans(self) -> list[list[SpanRecord]]:
        return [read_span_file(path) for path in self.spans]


@contextlib.contextmanager
def fleet() -> Iterator[Fleet]:
    with contextlib.ExitStack() as stack:
        directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bc-otel-fleet-")))
        redis = stack.enter_context(redis_server())
        started: list[tuple[int, subprocess.Popen[bytes], Path]] = []
        for number in range(2):
            port, name = free_port(), f"w{number}"
            argv = [sys.executable, str(WORKER), "--port", str(port), "--redis", redis.url, "--name", name]
            argv += ["--spans", str(directory / f"{name}.spans")]
            out = directory / f"{name}.out"
            with out.open("wb") as sink:
                process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT)
            stack.callback(stop_process, process)
            started.append((port, process, out))
        for port, process, out in started:
            wait_for_port(port, process, timeout=30.0, output=lambda out=out: out.read_text(errors="replace"))
        nginx = stack.enter_context(nginx_round_robin([port for port, _, _ in started]))
        yield Fleet(
            f"{nginx.url}/mcp",
            [f"http://127.0.0.1:{port}/mcp" for port, _, _ in started],
            [directory / f"w{number}.spans" for number in range(2)],
            redis.url,
        )


async def _forwarded_answers(redis_url: str, seen: list[dict[str, Any]], subscribed: asyncio.Event) -> None:
    """Every answer one worker forwards to another (``http_host/fleet.py``), as Redis carries it;
    ``subscribed`` is set once Redis has confirmed the subscription."""
    link = aioredis.Redis.from_url(redis_url)
    try:
        async with link.pubsub() as pubsub:
            await pubsub.psubscribe("bc:worker:*")
            async for message in pubsub.listen():
                if message["type"] == "psubscribe":
                    subscribed.set()
                elif message["type"] == "pmessage":
                    value = json.loads(message["data"])
                    if value.get("k") == "answer":
                        seen.append(value["m"])
    finally:
        await link.aclose()


def test_an_elicitation_answered_through_another_worker_is_one_trace(otel: Otel) -> None:
    with fleet() as running:
        forwarded: list[dict[str, Any]] = []

        async def person(params: dict[str, Any]) -> dict[str, Any]:
            await asyncio.sleep(THINKING)
            return {"action": "accept", "content": {"name": "ada"}}

        async def body() -> str:
            subscribed = asyncio.Event()
            listening = asyncio.ensure_future(_forwarded_answers(running.redis_url, forwarded, subscribed))
            try:
                async with asyncio.timeout(10):  # subscribed before anything is forwarded; a bound, not an expectation
                    await subscribed.wait()
                # No GET stream: every POST of the session takes the next worker, in order (initialize,
                # initialized, the call, the answer), so the call and its answer land on different ones.
                transport = HttpClientTransport(running.url, open_get_stream=False)
                async with Client(transport, era="handshake", elicitation=person) as client:
                    otel.clear()
                    result = await client.call_tool("ask", {})
                    text = result.content[0].text  # type: ignore[union-attr]
                    ended = lambda: any(s.name == "tools/call ask" for w in running.worker_spans() for s in w)  # noqa: E731
                    await within(ended, "the asker's span (another process's file)", timeout=10)
                    return text
            finally:
                listening.cancel()

        text = run(body, timeout=60)
        theirs = running.worker_spans()
    assert text.startswith("accept:ada@w")
    asker_name = text.rsplit("@", 1)[1]
    asker, other = (0, 1) if asker_name == "w0" else (1, 0)
    assert len(forwarded) == 1 and forwarded[0]["result"]["action"] == "accept"  # it crossed workers

    mine = otel.spans()
    everything = mine + theirs[asker] + theirs[other]
    call = one_span(mine, "tools/call ask", kind="CLIENT")
    served = one_span(theirs[asker], "tools/call ask", kind="SERVER")
    asked = one_span(theirs[asker], "elicitation/create", kind="CLIENT")
    answered = one_span(mine, "elicitation/create", kind="SERVER")
    tree = render_tree(everything)
    assert call.parent_id is None
    assert (served.trace_id, served.parent_id) == (call.trace_id, call.span_id), tree
    assert (asked.trace_id, asked.parent_id) == (served.trace_id, served.span_id), tree
    assert (answered.trace_id, answered.parent_id) == (asked.trace_id, asked.span_id), tree
    assert {span.trace_id for span in (call, served, asked, answered)} == {call.trace_id}
    # The asker's span waited for the person, and ended once the answer came through the other worker.
    assert asked.duration >= THINKING
    assert answered.end_time <= asked.end_time <= served.end_time
    for span in (served, asked):
        assert span.attributes["network.transport"] == "tcp"
        assert span.attributes["network.protocol.name"] == "http"
        assert span.attributes["mcp.session.id"] == call.attributes["mcp.session.id"]


def test_a_task_cancel_relayed_to_the_running_worker_is_a_child_of_the_relaying_span(otel: Otel) -> None:
    with fleet() as running:

        async def body() -> None:
            async with httpx2.AsyncClient(timeout=10) as http:
                init = {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "t"}},
                }
                headers = {"accept": ACCEPT, "content-type": "application/json"}
                opened = await http.post(running.workers[0], json=init, headers=headers)
                assert opened.status_code == 200, opened.text
                headers |= {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": HANDSHAKE}
                done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
                assert (await http.post(running.workers[0], json=done, headers=headers)).status_code == 202
                hold = {"name": "hold", "arguments": {}, "task": {}}
                created = await http.post(
                    running.workers[0],
                    json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": hold},
                    headers=headers,
                )
                task_id = created.json()["result"]["task"]["taskId"]
                cancel = {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tasks/cancel",
                    "params": {"taskId": task_id, "_meta": {"traceparent": f"00-{META_TRACE}-b7ad6b7169203331-01"}},
                }
                cancelled = await http.post(running.workers[1], json=cancel, headers=headers)  # not the runner
                assert cancelled.status_code == 200, cancelled.text
                assert cancelled.json()["result"]["status"] == "cancelled", cancelled.text
                relayed = lambda: any(s.name == "tasks.cancel" for s in running.worker_spans()[0])  # noqa: E731
                await within(relayed, "the relayed span (another process's file)", timeout=10)

        run(body, timeout=60)
        runner, relayer = running.worker_spans()
    tree = render_tree(runner + relayer)
    asked = one_span(relayer, "tasks/cancel", kind="SERVER")
    relayed = one_span(runner, "tasks.cancel", kind="SERVER")
    assert f"{asked.trace_id:032x}" == META_TRACE, tree
    assert (relayed.trace_id, relayed.parent_id) == (asked.trace_id, asked.span_id), tree
    assert relayed.attributes["backchannel.fleet.operation"] == "tasks.cancel"
    assert relayed.start_time >= asked.start_time and relayed.end_time <= asked.end_time
