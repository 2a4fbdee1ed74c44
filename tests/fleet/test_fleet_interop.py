"""The official SDK clients against a fleet of real processes (issue #14, "Proven by"): one
``redis-server``, four workers (``fleet_fixture_server.py``, each its own process and port, all
on that Redis) and nginx passing every request to the next worker in turn (``_processes.py``).

Each client runs one plan in a subprocess, alone on the fleet: the official Python SDK client
(mcp 2.3.0, ``tests/peers/fleet_pysdk_client.py``) in ``mode="legacy"`` (handshake era) and in
``mode="2026-07-28"`` (stateless era), and the TypeScript SDK client (1.32.2,
``tests/peers/fleet_ts_client.mjs``; it speaks only the handshake era). Every worker logs each
HTTP request as it arrives, so the tests see which worker served what: consecutive requests of a
run land on different workers, and the step that matters in each case (an answer to the server's
request, a cancel, a level, a list change, a resumed stream) reached another worker than the one
it concerns.

Where a client cannot do a case: neither SDK client can ``subscriptions/listen`` in the handshake
era (mcp 2.3.0 raises ``ListenNotSupportedError``, asserted below; the TypeScript SDK has no
listen at all), so the handshake-era clients get the list change as
``notifications/tools/list_changed`` on their GET stream instead (the TypeScript client's case).
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Callable, Iterator

import httpx2
import pytest
from _interop_runs import LEVEL_CHANGES, LEVELS, ROOT_CALLS, Run, pysdk_run, ts_run
from _processes import WORKERS, ProcessFleet, process_fleet

from backchannel.testing import run as run_async
from peers.paths import have_npm_peers, have_pysdk

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module")
def fleet() -> Iterator[ProcessFleet]:
    with process_fleet() as running:
        yield running


@pytest.fixture(scope="module")
def dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    base = tmp_path_factory.mktemp("fleet-roots")
    for name in ("a", "b"):
        (base / name).mkdir()
    return {name: (base / name).as_uri() for name in ("a", "b")}


@pytest.fixture(scope="module")
def legacy(fleet: ProcessFleet, dirs: dict[str, str]) -> Run:
    if not have_pysdk():
        pytest.skip("the official Python SDK (mcp==2.3.0) is not installed")
    return pysdk_run(fleet, "legacy", dirs)


@pytest.fixture(scope="module")
def stateless(fleet: ProcessFleet, dirs: dict[str, str]) -> Run:
    if not have_pysdk():
        pytest.skip("the official Python SDK (mcp==2.3.0) is not installed")
    return pysdk_run(fleet, "2026-07-28", dirs)


@pytest.fixture(scope="module")
def ts(fleet: ProcessFleet, dirs: dict[str, str]) -> Run:
    if not have_npm_peers():
        pytest.skip("npm peers not installed (run tests/peers/install.sh)")
    return ts_run(fleet, dirs)


@pytest.fixture(params=["legacy", "stateless", "ts"])
def run(request: pytest.FixtureRequest) -> Run:
    found: Run = request.getfixturevalue(request.param)
    return found


@pytest.fixture(params=["legacy", "ts"])
def handshake(request: pytest.FixtureRequest) -> Run:
    found: Run = request.getfixturevalue(request.param)
    return found


def _eventually(condition: Callable[[], bool], seconds: float = 5.0) -> None:
    """Block until ``condition()``: it reads another process's file, so there is nothing to wait on."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"not so after {seconds}s"
        time.sleep(0.02)


def _state_of(run: Run, worker: str) -> str:
    (state,) = {str(r["state"]) for r in run.fleet.requests(0, time.monotonic_ns()) if r["worker"] == worker}
    return state


# -- where each request landed --------------------------------------------------------------------


def test_consecutive_requests_of_a_session_land_on_different_workers(run: Run) -> None:
    workers = [r["worker"] for r in run.requests]
    assert len(workers) > 2 * WORKERS
    assert all(a != b for a, b in itertools.pairwise(workers)), workers
    assert set(workers) == set(run.fleet.names)
    if run.who != "2026-07-28":  # one handshake-era session: every request after initialize names it
        assert run.requests[0]["rpc"][0]["method"] == "initialize"
        assert len({r["session"] for r in run.requests[1:]}) == 1 and run.requests[1]["session"]


def test_each_worker_says_its_name_and_process(legacy: Run) -> None:
    answers = [legacy.ok(f"whoami{i}")["structuredContent"] for i in range(WORKERS + 1)]
    assert {a["worker"] for a in answers} == set(legacy.fleet.names)
    assert len({a["pid"] for a in answers}) == WORKERS and os.getpid() not in {a["pid"] for a in answers}
    served = [r["worker"] for r in legacy.arrivals(method="tools/call", tool="whoami")]
    assert served == [a["worker"] for a in answers]  # the request log agrees with the answers
    assert all(a["state"] == _state_of(legacy, a["worker"]) for a in answers)


# -- the reverse channel --------------------------------------------------------------------------


def test_form_elicitation_accepted_declined_and_cancelled(run: Run) -> None:
    for action, name in (("accept", "ada"), ("decline", ""), ("cancel", "")):
        answer, _, worker = run.text(f"ask_{action}").partition("@")
        assert answer == f"{action}:{name}" and worker in run.fleet.names
    assert [e["message"] for e in run.out["elicitations"]] == ["Your name?"] * 3


def test_sampling(run: Run) -> None:
    assert run.text("sampled").startswith("forty-two@")
    (asked,) = run.out["samplings"]
    assert asked["messages"][0]["content"]["text"] == "six times seven?"


def test_each_answer_to_the_servers_request_reached_another_worker_than_the_asker(handshake: Run) -> None:
    """Handshake era: the ids of our requests to the client start with the asking worker's id;
    the client's answer (three forms, a sampling, roots) was POSTed to another worker, which
    forwarded it."""
    answers = [(r["state"], m["answer"]) for r in handshake.requests for m in r["rpc"] if "answer" in m]
    assert len(answers) >= 3 + 1 + 2  # the forms, the sampling, roots before and after the change
    assert all(":" in answer and answer.split(":")[0] != state for state, answer in answers), answers


def test_the_stateless_era_retries_land_on_another_worker(stateless: Run) -> None:
    """2026-07-28: an ``InputRequiredResult`` from one worker, the retry with the answer on the
    next; the work finished on the worker that took the retry (it names itself)."""
    asks = [r["worker"] for r in stateless.arrivals(method="tools/call", tool="ask")]
    assert len(asks) == 6  # three calls, each answered by a retry
    for first, retry, action in zip(asks[::2], asks[1::2], ("accept", "decline", "cancel"), strict=True):
        assert first != retry
        assert stateless.text(f"ask_{action}").endswith(f"@{retry}")


def test_roots_follow_list_changed_on_every_worker(run: Run, dirs: dict[str, str]) -> None:
    """Before the change every call sees A; the client changes its roots and says so
    (``notifications/roots/list_changed``, on one worker); every call after it, whichever worker
    runs it, sees B. Legacy: the calls reach all four workers, so a worker that cached A before
    the notification landed elsewhere would answer A (it must not)."""
    calls = ROOT_CALLS[run.who]
    before = [run.ok(f"roots_a{i}")["structuredContent"] for i in range(calls)]
    after = [run.ok(f"roots_b{i}")["structuredContent"] for i in range(calls)]
    assert [r["uris"] for r in before] == [[dirs["a"]]] * calls
    assert [r["uris"] for r in after] == [[dirs["b"]]] * calls
    asked = run.out["rootsAnswered"]
    assert asked == sorted(asked, key=lambda uris: uris != [dirs["a"]])  # no A asked for after a B
    if run.who != "2026-07-28":
        assert {r["worker"] for r in before} == {r["worker"] for r in after} == set(run.fleet.names)
        (changed,) = run.arrivals(method="notifications/roots/list_changed")
        assert {r["worker"] for r in after} - {changed["worker"]}  # served elsewhere too
        assert len(asked) < 2 * calls  # the session's roots were cached, per worker at least


# -- progress, cancel, logging ---------------------------------------------------------------------


def test_two_hundred_progress_notifications_strictly_increasing(run: Run) -> None:
    step = run.ok("count")
    values = [p[0] for p in step["progress"]]
    assert values == list(range(1, 201))
    assert {p[1] for p in step["progress"]} == {200}
    assert run.text("count").startswith("counted 200@")


def test_cancel_stops_the_call_on_the_worker_running_it(run: Run) -> None:
    step = run.ok("cancel")
    assert step.get("cancelled", step.get("aborted")) is True and "result" not in step
    tag = "ts" if run.who == "ts" else f"py-{run.who}"
    mark = run.fleet.marks / tag
    _eventually(mark.exists)  # the worker writes it as its handler unwinds
    ran_on = mark.read_text(encoding="utf-8")
    (call,) = run.arrivals(method="tools/call", tool="wait")
    assert call["worker"] == ran_on
    if run.who != "2026-07-28":  # handshake era: notifications/cancelled, POSTed to another worker
        (cancel,) = run.arrivals(method="notifications/cancelled")
        assert cancel["worker"] != ran_on


def test_log_level_set_on_one_worker_holds_on_the_others(handshake: Run) -> None:
    """``logging/setLevel`` lands on one worker; the next call, on another, logs at that level
    (the record reached every replica before the client heard the level was set)."""
    levels = handshake.arrivals(method="logging/setLevel")
    says = handshake.arrivals(method="tools/call", tool="say")
    assert len(levels) == len(says) == len(LEVEL_CHANGES)
    for i, (level, set_on, said_on) in enumerate(zip(LEVEL_CHANGES, levels, says, strict=True)):
        assert said_on["worker"] != set_on["worker"]
        logged = [(m["level"], m["data"]["worker"]) for m in handshake.out["logs"] if m["data"]["text"] == f"said{i}"]
        assert logged == [(name, said_on["worker"]) for name in LEVELS[LEVELS.index(level) :]], (i, level)


def test_stateless_log_level_travels_with_each_request(stateless: Run) -> None:
    texts = [m["data"]["text"] for m in stateless.out["logs"]]
    assert "unasked" not in texts  # no level in the request's _meta: no logs
    assert [m["level"] for m in stateless.out["logs"]] == ["warning", "error"]


# -- list changes ----------------------------------------------------------------------------------


def test_listen_receives_a_list_change_made_on_another_worker(stateless: Run) -> None:
    step = stateless.ok("listen")
    assert step["honored"] == {"toolsListChanged": True}
    assert step["call"]["content"][0]["text"].startswith("added tool_2026@")
    assert step["event"] == "ToolsListChanged"
    (listen,) = stateless.arrivals(method="subscriptions/listen")
    (added,) = stateless.arrivals(method="tools/call", tool="add_tool")
    assert listen["worker"] != added["worker"]


def test_the_handshake_era_python_client_cannot_listen(legacy: Run) -> None:
    assert legacy.steps["listen"]["error"]["type"] == "ListenNotSupportedError"
    assert not legacy.arrivals(method="subscriptions/listen")


def test_a_list_change_reaches_the_get_stream_held_by_another_worker(ts: Run) -> None:
    """Handshake era: the client's GET stream is held by one worker; tools added on two workers
    in turn (at least one of them another) each reach it as ``notifications/tools/list_changed``."""
    stream = next(r for r in ts.requests if r["http"] == "GET" and not r["last_event_id"])
    added = [r["worker"] for r in ts.arrivals(method="tools/call", tool="add_tool")]
    assert len(added) == 2 and set(added) - {stream["worker"]}
    for i in (0, 1):
        assert ts.ok(f"added{i}")["listChanged"] is True
    assert ts.out["listChanges"] == 2  # once each: one stream carries it, not every worker's replica


# -- a stream cut and resumed ----------------------------------------------------------------------


def test_a_cut_stream_resumes_on_another_worker_with_nothing_lost_or_repeated(handshake: Run) -> None:
    """``cut`` ends its POST's SSE response after progress 10 of 40 and goes on; the client
    resumes with ``Last-Event-ID`` (a GET, on another worker than the writer, which replays the
    shared log and follows it live). Every progress notification arrives once, in order."""
    step = handshake.ok("cut")
    assert [p[0] for p in step["progress"]] == list(range(1, 41))
    writer = handshake.text("cut").split("@")[1]
    (call,) = handshake.arrivals(method="tools/call", tool="cut")
    assert call["worker"] == writer
    resumed = next(r for r in handshake.requests if r["t"] > call["t"] and r["last_event_id"])
    assert resumed["http"] == "GET" and resumed["last_event_id"].split(".")[0] == call["state"]  # its writer's
    assert resumed["worker"] != writer


# -- one GET stream per session, fleet-wide -----------------------------------------------------------


def test_a_second_get_stream_of_a_session_is_refused_whichever_worker_it_reaches(fleet: ProcessFleet) -> None:
    """One process answers a second GET stream of a session 409 (``app.py``), which keeps each
    message on one stream (the spec's MUST). Behind round-robin the second GET reaches another
    worker: the claim on the stream lives in Redis (``Fleet.claim_get_stream``), so it is refused too."""
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    }

    async def body() -> int:
        async with httpx2.AsyncClient(timeout=10) as http:
            opened = await http.post(fleet.url, json=initialize, headers=headers)
            session = {
                **headers,
                "mcp-session-id": opened.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-11-25",
            }
            initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            assert (await http.post(fleet.url, json=initialized, headers=session)).status_code == 202
            async with http.stream("GET", fleet.url, headers=session) as first:
                assert first.status_code == 200
                async with http.stream("GET", fleet.url, headers=session) as second:
                    return second.status_code

    assert run_async(body) == 409
