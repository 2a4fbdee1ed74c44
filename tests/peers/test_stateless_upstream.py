"""The 2026-07-28-only upstream (``stateless_upstream.py``) behaves as the spec says, on the wire.

It is the upstream of ``backchannel proxy``'s proof 1 (issue #29), so it must be right by itself:
these tests drive it with raw JSON-RPC only (subprocess pipes for stdio, httpx for Streamable HTTP),
no backchannel client and no SDK. Most run over both transports; the spec lines each test follows
are in the peer's docstring (paths under ``/work/shared/spec/2026-07-28/docs/``).
"""

from __future__ import annotations

import base64
import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx2 as httpx
import pytest

from peers.paths import PEERS_DIR

UPSTREAM = [sys.executable, str(PEERS_DIR / "stateless_upstream.py")]
VERSION = "2026-07-28"
PV, CAPS, LOG_LEVEL = (
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/clientCapabilities",
    "io.modelcontextprotocol/logLevel",
)
TASKS = "io.modelcontextprotocol/tasks"
BOUND = 30.0  # seconds: a bound on every wait, never an expectation
ALL = {"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}, "extensions": {TASKS: {}}}

Message = dict[str, Any]


def meta(caps: Message | None = None, **extra: Any) -> Message:
    return {
        PV: VERSION,
        CAPS: ALL if caps is None else caps,
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
        **extra,
    }


def lines_of(stream: Any, into: queue.Queue[bytes | None]) -> None:
    for line in stream:
        into.put(line)
    into.put(None)


class Peer:
    """One upstream process; ``call`` sends one request and returns (its notifications, its answer)."""

    def __init__(self, *options: str) -> None:
        self.proc = subprocess.Popen(
            [*UPSTREAM, *options], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.out: queue.Queue[bytes | None] = queue.Queue()
        self.err: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=lines_of, args=(self.proc.stdout, self.out), daemon=True).start()
        threading.Thread(target=lines_of, args=(self.proc.stderr, self.err), daemon=True).start()
        self.ids = 0

    def next_id(self) -> int:
        self.ids += 1
        return self.ids

    def call(self, method: str, params: Message | None = None, rid: Any = None) -> tuple[list[Message], Message]:
        raise NotImplementedError

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=BOUND)


class Stdio(Peer):
    def __init__(self) -> None:
        super().__init__("--stdio")

    def send(self, message: Message) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def read(self) -> Message:
        line = self.out.get(timeout=BOUND)
        assert line is not None, "the upstream closed its stdout"
        message: Message = json.loads(line)
        return message

    def call(self, method: str, params: Message | None = None, rid: Any = None) -> tuple[list[Message], Message]:
        rid = self.next_id() if rid is None else rid
        self.send(
            {"jsonrpc": "2.0", "id": rid, "method": method, "params": {"_meta": meta()} if params is None else params}
        )
        notes = []
        while "method" in (message := self.read()):
            notes.append(message)
        assert message["id"] == rid, message
        return notes, message


class Http(Peer):
    def __init__(self) -> None:
        super().__init__("--http", "0")
        line = self.err.get(timeout=BOUND)
        assert line is not None and line.startswith(b"listening on http://127.0.0.1:"), line
        self.url = line.decode().split()[-1]
        self.client = httpx.Client(timeout=BOUND)
        self.last: httpx.Response | None = None

    def headers(self, message: Message) -> dict[str, str]:
        params = message.get("params") or {}
        found = {"Accept": "application/json, text/event-stream", "Mcp-Method": message["method"]}
        if isinstance(params.get("_meta"), dict) and PV in params["_meta"]:
            found["MCP-Protocol-Version"] = params["_meta"][PV]
        if "name" in params or "taskId" in params:
            found["Mcp-Name"] = params.get("name", params.get("taskId"))
        return found

    def post(self, message: Message, **headers: str) -> httpx.Response:
        self.last = self.client.post(self.url, json=message, headers={**self.headers(message), **headers})
        return self.last

    def call(self, method: str, params: Message | None = None, rid: Any = None) -> tuple[list[Message], Message]:
        rid = self.next_id() if rid is None else rid
        message = {
            "jsonrpc": "2.0",
            "id": rid,
            "method": method,
            "params": {"_meta": meta()} if params is None else params,
        }
        response = self.post(message)
        if response.headers["content-type"] == "application/json":
            return [], response.json()
        assert response.headers["content-type"] == "text/event-stream" and response.headers["x-accel-buffering"] == "no"
        events = sse(response.text)
        assert events[-1].get("id") == rid and all("method" in event for event in events[:-1]), events
        return events[:-1], events[-1]

    def stop(self) -> None:
        self.client.close()
        super().stop()


def sse(body: str) -> list[Message]:
    events = []
    for block in body.split("\n\n"):
        data = [line[5:].strip() for line in block.splitlines() if line.startswith("data:")]
        if data:
            events.append(json.loads("\n".join(data)))
    return events


@pytest.fixture(params=["stdio", "http"])
def peer(request: pytest.FixtureRequest) -> Iterator[Peer]:
    started = Stdio() if request.param == "stdio" else Http()
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture
def stdio() -> Iterator[Stdio]:
    started = Stdio()
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture
def http() -> Iterator[Http]:
    started = Http()
    try:
        yield started
    finally:
        started.stop()


def tool(name: str, caps: Message | None = None, args: Message | None = None, **more: Any) -> Message:
    return {"name": name, "arguments": args or {}, "_meta": meta(caps, **more.pop("extra_meta", {})), **more}


def result_of(answer: Message) -> Message:
    assert "error" not in answer, answer
    result: Message = answer["result"]
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "stateless-upstream"
    return result


def error_of(answer: Message, code: int) -> Message:
    assert answer.get("error", {}).get("code") == code, answer
    error: Message = answer["error"]
    return error


def text_of(result: Message) -> str:
    assert result["resultType"] == "complete" and not result.get("isError"), result
    return str(result["content"][0]["text"])


def status(peer: Peer) -> int | None:
    return peer.last.status_code if isinstance(peer, Http) and peer.last is not None else None


# ------------------------------------------------------------------ versions and discovery


def test_initialize_is_refused_naming_the_version(peer: Peer) -> None:
    legacy = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}
    _, answer = peer.call("initialize", legacy)
    error = error_of(answer, -32022)
    assert error["data"] == {"supported": [VERSION], "requested": "2025-11-25"}
    assert status(peer) in (None, 400)


def test_discover_answers_the_one_version_and_capabilities(peer: Peer) -> None:
    _, answer = peer.call("server/discover")
    result = result_of(answer)
    assert result["resultType"] == "complete" and result["supportedVersions"] == [VERSION]
    assert result["capabilities"] == {"tools": {}, "logging": {}, "extensions": {TASKS: {}}}
    assert result["ttlMs"] >= 0 and result["cacheScope"] in ("public", "private")
    _, listed = peer.call("tools/list")
    names = [entry["name"] for entry in result_of(listed)["tools"]]
    assert names == [
        "su_form",
        "su_url",
        "su_sample",
        "su_roots",
        "su_multi",
        "su_progress",
        "su_slow",
        "su_cancelled",
        "su_log",
        "su_task",
    ]


def test_requests_without_their_meta_or_version_are_refused(peer: Peer) -> None:
    _, answer = peer.call("tools/list", {})
    error_of(answer, -32602)
    assert status(peer) in (None, 400)
    _, answer = peer.call("tools/list", {"_meta": {PV: VERSION}})
    error_of(answer, -32602)
    _, answer = peer.call("tools/list", {"_meta": {**meta(), PV: "2025-11-25"}})
    assert error_of(answer, -32022)["data"] == {"supported": [VERSION], "requested": "2025-11-25"}
    _, answer = peer.call("tools/list", {"_meta": meta(**{LOG_LEVEL: "loud"})})
    error_of(answer, -32602)
    _, answer = peer.call("ping", {"_meta": meta()})
    error_of(answer, -32601)
    assert status(peer) in (None, 404)
    _, answer = peer.call("tools/call", tool("no_such_tool"))
    error_of(answer, -32602)
    _, answer = peer.call("tools/call", {"name": "su_form", "arguments": [1], "_meta": meta()})
    error_of(answer, -32602)
    _, answer = peer.call("tools/call", tool("su_progress", args={"steps": "many"}))
    assert result_of(answer)["isError"] is True  # a bad argument is the tool's error (tools.mdx:760-785)


# ------------------------------------------------------------------ multi round-trip requests


def test_form_elicitation_round_trip_with_the_exact_request_state(peer: Peer) -> None:
    _, answer = peer.call("tools/call", tool("su_form"))
    first = result_of(answer)
    assert first["resultType"] == "input_required" and isinstance(first["requestState"], str)
    asked = first["inputRequests"]["form"]
    assert asked["method"] == "elicitation/create" and asked["params"]["mode"] == "form"
    properties = asked["params"]["requestedSchema"]["properties"]
    assert {name: spec["type"] for name, spec in properties.items()} == {"name": "string", "subscribe": "boolean"}

    content = {"name": "Ada", "subscribe": True}
    reply = {"form": {"action": "accept", "content": content}}
    _, answer = peer.call("tools/call", tool("su_form", inputResponses=reply, requestState=first["requestState"]))
    result = result_of(answer)
    assert text_of(result) == 'action=accept content={"name": "Ada", "subscribe": true}'
    assert result["structuredContent"] == {"action": "accept", "content": content}

    _, answer = peer.call(
        "tools/call",
        tool("su_form", inputResponses={"form": {"action": "decline"}}, requestState=first["requestState"]),
    )
    assert text_of(result_of(answer)) == "action=decline content=null"
    tampered = first["requestState"][:-1] + ("0" if first["requestState"][-1] != "0" else "1")
    _, answer = peer.call("tools/call", tool("su_form", inputResponses=reply, requestState=tampered))
    error_of(answer, -32602)
    _, answer = peer.call(
        "tools/call",
        tool("su_form", {"elicitation": {}}, {"other": 1}, inputResponses=reply, requestState=first["requestState"]),
    )
    error_of(answer, -32602)  # the state is bound to the call's arguments
    _, answer = peer.call("tools/call", tool("su_form", inputResponses={}, requestState=first["requestState"]))
    assert result_of(answer)["inputRequests"]["form"] == asked  # a missing answer is asked again


def test_input_requests_need_the_capability_declared_on_that_request(peer: Peer) -> None:
    for name, caps, needed in [
        ("su_form", {}, {"elicitation": {"form": {}}}),
        ("su_form", {"elicitation": {"url": {}}}, {"elicitation": {"form": {}}}),
        ("su_url", {"elicitation": {}}, {"elicitation": {"url": {}}}),
        ("su_sample", {"roots": {}}, {"sampling": {}}),
        ("su_roots", {"sampling": {}}, {"roots": {}}),
        ("su_task", {"elicitation": {}}, {"extensions": {TASKS: {}}}),
    ]:
        _, answer = peer.call("tools/call", tool(name, caps))
        assert error_of(answer, -32021)["data"] == {"requiredCapabilities": needed}, name
        assert status(peer) in (None, 400)
    _, answer = peer.call("tools/call", tool("su_form", {"elicitation": {}}))
    assert result_of(answer)["resultType"] == "input_required"  # {} is form mode


def test_url_elicitation_then_retries_until_done(peer: Peer) -> None:
    _, answer = peer.call("tools/call", tool("su_url", args={"pending": 1}))
    first = result_of(answer)
    asked = first["inputRequests"]["url"]
    assert asked["method"] == "elicitation/create" and asked["params"]["mode"] == "url"
    assert asked["params"]["url"].startswith("http://127.0.0.1/") and "elicitationId" not in asked["params"]
    accept = {"url": {"action": "accept"}}
    _, answer = peer.call(
        "tools/call", tool("su_url", args={"pending": 1}, inputResponses=accept, requestState=first["requestState"])
    )
    waiting = result_of(answer)
    assert waiting["resultType"] == "input_required" and "inputRequests" not in waiting and waiting["requestState"]
    _, answer = peer.call("tools/call", tool("su_url", args={"pending": 1}, requestState=waiting["requestState"]))
    assert text_of(result_of(answer)) == "url done"

    _, answer = peer.call("tools/call", tool("su_url"))
    state = result_of(answer)["requestState"]
    _, answer = peer.call("tools/call", tool("su_url", inputResponses=accept, requestState=state))
    assert text_of(result_of(answer)) == "url done"
    _, answer = peer.call(
        "tools/call", tool("su_url", inputResponses={"url": {"action": "cancel"}}, requestState=state)
    )
    assert text_of(result_of(answer)) == "url cancel"
    _, answer = peer.call("tools/call", tool("su_url", args={"required": True}))
    assert result_of(answer)["resultType"] == "input_required"  # never -32042: reserved in 2026-07-28


def test_sampling_and_roots_round_trips(peer: Peer) -> None:
    _, answer = peer.call("tools/call", tool("su_sample", args={"prompt": "Capital of France?"}))
    first = result_of(answer)
    asked = first["inputRequests"]["sample"]
    assert asked["method"] == "sampling/createMessage" and asked["params"]["maxTokens"] > 0
    assert asked["params"]["messages"] == [{"role": "user", "content": {"type": "text", "text": "Capital of France?"}}]
    said = {"role": "assistant", "content": {"type": "text", "text": "Paris."}, "model": "m-1", "stopReason": "endTurn"}
    retry = tool(
        "su_sample",
        args={"prompt": "Capital of France?"},
        inputResponses={"sample": said},
        requestState=first["requestState"],
    )
    _, answer = peer.call("tools/call", retry)
    assert text_of(result_of(answer)) == "Paris."

    _, answer = peer.call("tools/call", tool("su_roots"))
    first = result_of(answer)
    assert first["inputRequests"] == {"roots": {"method": "roots/list"}}
    roots = {"roots": {"roots": [{"uri": "file:///a", "name": "a"}, {"uri": "file:///b"}]}}
    _, answer = peer.call("tools/call", tool("su_roots", inputResponses=roots, requestState=first["requestState"]))
    assert text_of(result_of(answer)) == "file:///a, file:///b"


def test_two_rounds_carry_the_first_answer_in_the_request_state(peer: Peer) -> None:
    _, answer = peer.call("tools/call", tool("su_multi"))
    one = result_of(answer)
    assert list(one["inputRequests"]) == ["first"]
    reply = {"first": {"action": "accept", "content": {"name": "Ada"}}}
    _, answer = peer.call("tools/call", tool("su_multi", inputResponses=reply, requestState=one["requestState"]))
    two = result_of(answer)
    assert two["resultType"] == "input_required" and list(two["inputRequests"]) == ["second"]
    assert two["requestState"] != one["requestState"]
    reply2 = {"second": {"action": "accept", "content": {"colour": "green"}}}
    _, answer = peer.call("tools/call", tool("su_multi", inputResponses=reply2, requestState=two["requestState"]))
    assert text_of(result_of(answer)) == 'first=accept:{"name": "Ada"} second=accept:{"colour": "green"}'


# ------------------------------------------------------------------ request-scoped notifications


def test_progress_comes_before_the_answer_strictly_increasing(peer: Peer) -> None:
    notes, answer = peer.call("tools/call", tool("su_progress", args={"steps": 4}, extra_meta={"progressToken": "p-1"}))
    assert text_of(result_of(answer)) == "progress done: 4 steps"
    assert [note["method"] for note in notes] == ["notifications/progress"] * 4
    assert [note["params"]["progress"] for note in notes] == [1, 2, 3, 4]
    assert {note["params"]["progressToken"] for note in notes} == {"p-1"}
    notes, answer = peer.call("tools/call", tool("su_progress"))
    assert notes == [] and text_of(result_of(answer)) == "progress done: 3 steps"
    if isinstance(peer, Http):
        assert peer.last is not None and peer.last.headers["content-type"] == "application/json"


def test_logs_only_at_or_above_the_request_level(peer: Peer) -> None:
    for level, expected in [
        ("warning", ["warning", "error"]),
        ("debug", ["debug", "info", "warning", "error"]),
        ("error", ["error"]),
    ]:
        notes, answer = peer.call("tools/call", tool("su_log", extra_meta={LOG_LEVEL: level}))
        assert [note["params"]["level"] for note in notes] == expected
        assert {note["method"] for note in notes} == {"notifications/message"}
        assert result_of(answer)["structuredContent"] == {"sent": expected}
    notes, answer = peer.call("tools/call", tool("su_log"))
    assert notes == [] and text_of(result_of(answer)) == "sent: none"


# ------------------------------------------------------------------ cancellation


def cancelled(peer: Peer) -> list[Message]:
    _, answer = peer.call("tools/call", tool("su_cancelled"))
    found: list[Message] = result_of(answer)["structuredContent"]["cancelled"]
    return found


def test_stdio_cancellation_stops_the_request_and_is_recorded(stdio: Stdio) -> None:
    stdio.send(
        {
            "jsonrpc": "2.0",
            "id": "slow-1",
            "method": "tools/call",
            "params": tool("su_slow", extra_meta={"progressToken": 7}),
        }
    )
    started = stdio.read()
    assert started["method"] == "notifications/progress" and started["params"]["progressToken"] == 7
    stdio.send(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "slow-1", "reason": "test"}}
    )
    stdio.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "never-sent"}})
    assert cancelled(stdio) == [
        {"requestId": "slow-1", "method": "tools/call", "tool": "su_slow", "via": "notifications/cancelled"}
    ]

    stdio.send(
        {
            "jsonrpc": "2.0",
            "id": 99,
            "method": "subscriptions/listen",
            "params": {"_meta": meta(), "notifications": {"toolsListChanged": True}},
        }
    )
    ack = stdio.read()
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"] == {"_meta": {"io.modelcontextprotocol/subscriptionId": 99}, "notifications": {}}
    stdio.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}})
    assert [entry["requestId"] for entry in cancelled(stdio)] == ["slow-1", 99]

    assert stdio.proc.stdin is not None
    stdio.proc.stdin.close()  # stdin's end is the shutdown signal (stdio.mdx:102-104)
    assert stdio.proc.wait(timeout=BOUND) == 0
    assert stdio.out.get(timeout=BOUND) is None  # nothing was ever written for the cancelled requests


def test_http_closing_the_post_cancels_it(http: Http) -> None:
    message = {"jsonrpc": "2.0", "id": "slow-h", "method": "tools/call", "params": tool("su_slow")}
    with http.client.stream("POST", http.url, json=message, headers=http.headers(message)) as response:
        assert response.status_code == 200 and response.headers["content-type"] == "text/event-stream"
        next(response.iter_bytes())  # the stream is open: the request is running upstream
    listen = {"jsonrpc": "2.0", "id": "listen-h", "method": "subscriptions/listen", "params": {"_meta": meta()}}
    with http.client.stream("POST", http.url, json=listen, headers=http.headers(listen)) as response:
        ack = json.loads(next(response.iter_lines()).removeprefix("data: "))
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert ack["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": "listen-h"}
    deadline = time.monotonic() + BOUND
    while len(found := cancelled(http)) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert sorted(found, key=lambda entry: entry["requestId"]) == [
        {"requestId": "listen-h", "method": "subscriptions/listen", "tool": None, "via": "disconnect"},
        {"requestId": "slow-h", "method": "tools/call", "tool": "su_slow", "via": "disconnect"},
    ]


# ------------------------------------------------------------------ the tasks extension


def poll(peer: Peer, task_id: str, until: str) -> Message:
    deadline = time.monotonic() + BOUND
    while True:
        _, answer = peer.call("tasks/get", {"taskId": task_id, "_meta": meta()})
        task = result_of(answer)
        assert task["resultType"] == "complete" and task["taskId"] == task_id
        if task["status"] == until or time.monotonic() > deadline:
            assert task["status"] == until, task
            return task
        time.sleep(task["pollIntervalMs"] / 1000)


def test_a_task_is_created_polled_answered_and_cancelled(peer: Peer) -> None:
    _, answer = peer.call("tools/call", tool("su_task"))
    created = result_of(answer)
    assert created["resultType"] == "task" and created["status"] in ("working", "completed")
    assert {"taskId", "createdAt", "lastUpdatedAt", "ttlMs"} <= set(created)
    done = poll(peer, created["taskId"], "completed")
    assert done["result"]["content"] == [{"type": "text", "text": "task done"}]

    _, answer = peer.call("tools/call", tool("su_task", args={"ask": True}))
    task_id = result_of(answer)["taskId"]
    waiting = poll(peer, task_id, "input_required")
    assert waiting["inputRequests"]["confirm"]["method"] == "elicitation/create"
    update = {
        "taskId": task_id,
        "inputResponses": {"confirm": {"action": "accept", "content": {"go": True}}},
        "_meta": meta(),
    }
    _, answer = peer.call("tasks/update", update)
    assert result_of(answer)["resultType"] == "complete"
    assert poll(peer, task_id, "completed")["result"]["content"][0]["text"] == 'task done: accept:{"go": true}'

    _, answer = peer.call("tools/call", tool("su_task", args={"ms": 60_000}))
    task_id = result_of(answer)["taskId"]
    _, answer = peer.call("tasks/cancel", {"taskId": task_id, "_meta": meta()})
    assert result_of(answer)["resultType"] == "complete"
    assert poll(peer, task_id, "cancelled")["status"] == "cancelled"

    _, answer = peer.call("tasks/get", {"taskId": "no-such-task", "_meta": meta()})
    error_of(answer, -32602)
    _, answer = peer.call("tasks/get", {"taskId": task_id, "_meta": meta({})})
    assert error_of(answer, -32021)["data"] == {"requiredCapabilities": {"extensions": {TASKS: {}}}}
    _, answer = peer.call("tasks/result", {"taskId": task_id, "_meta": meta()})
    error_of(answer, -32601)  # removed by the extension (SEP-2663, backward compatibility)


# ------------------------------------------------------------------ Streamable HTTP only


def test_http_headers_must_mirror_the_body(http: Http) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": tool("su_log")}
    for wrong in ({"MCP-Protocol-Version": "2025-11-25"}, {"Mcp-Method": "tools/list"}, {"Mcp-Name": "su_form"}):
        response = http.post(message, **wrong)
        assert response.status_code == 400 and response.json()["error"]["code"] == -32020, wrong
    bare = http.client.post(http.url, json=message, headers={"Accept": "application/json, text/event-stream"})
    assert bare.status_code == 400 and bare.json()["error"]["code"] == -32020
    encoded = "=?base64?" + base64.b64encode(b"su_log").decode() + "?="
    assert http.post(message, **{"Mcp-Name": encoded}).json()["result"]["content"][0]["text"] == "sent: none"


def test_http_speaks_post_only_without_sessions(http: Http) -> None:
    assert http.client.get(http.url).status_code == 405
    assert http.client.delete(http.url).status_code == 405
    assert http.client.post(http.url.removesuffix("/mcp") + "/other", json={}).status_code == 404
    legacy = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}},
    }
    refused = http.client.post(http.url, json=legacy, headers={"Accept": "application/json, text/event-stream"})
    assert refused.status_code == 400 and refused.json()["error"]["code"] == -32022
    assert "mcp-session-id" not in refused.headers
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 12345}}
    accepted = http.client.post(http.url, json=note, headers={"Accept": "application/json, text/event-stream"})
    assert accepted.status_code == 202 and accepted.content == b""
    evil = http.client.post(http.url, json=legacy, headers={"Origin": "http://evil.example"})
    assert evil.status_code == 403
