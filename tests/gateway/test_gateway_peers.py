"""Issue #30, proof 1: one gateway in front of four real servers, three real clients in front of it.

``backchannel gateway gateway.toml --http`` (the command, in a process of its own) mounts:

* ``ev``: server-everything over stdio (handshake era only; its ``get-env`` and
  ``gzip-file-as-resource`` are switched off in the file, so no client can call them);
* ``sdk``: an mcp 2.3.0 server over Streamable HTTP (``gateway_upstreams.py pysdk --http``),
  spoken to in the handshake era (its imperative questions need that era's back-channel);
* ``fm``: a FastMCP 4.2.3 server over stdio, in the handshake era for the same reason;
* ``our``: a backchannel server that serves the stateless era only (its questions are
  ``InputRequiredResult``s), over stdio.

In front, one after the other: the official Python SDK client in its handshake mode (``legacy``)
and in its ``2026-07-28`` mode (``tests/peers/pysdk_client.py``), and the TypeScript SDK client
(``tests/peers/fleet_ts_client.mjs``, handshake era). Each lists the tools of all four and calls,
on each upstream, a tool that asks a form, one that samples the client's model and one that
reports progress: the client's answers come back inside the results and the progress reaches
the client's token. Each then cancels a waiting call on each of the three upstreams that can
tell (``wait(tag)``, which notes the tag of a cancelled call in that upstream's own file), and
each upstream's file lists exactly the tags of the calls cancelled on it: a cancel reaches the
right upstream. (server-everything's long operation cannot
tell whether it was cancelled; its progress is checked.)

Every process starts once for the module; each test checks one thing of the runs.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from _subprocesses import checkout_env
from backchannel.testing import free_port, run, running_process, within
from peers.paths import EVERYTHING_STDIO_CMD, NODE22, PEERS_DIR, PYSDK_CLIENT, TESTS_DIR, have_npm_peers, have_pysdk

pytestmark = pytest.mark.interop

HERE = Path(__file__).resolve().parent
UPSTREAMS = HERE / "gateway_upstreams.py"
#: Seconds: bounds, not expectations (four upstreams start on a busy machine).
START_TIMEOUT = 90.0
RUN_TIMEOUT = 300.0
REQUEST_TIMEOUT = 60.0
STEPS = 3
NAME = "Grace Hopper"
MODEL_TEXT = "forty-two, said the client's model"
ELICIT_ANSWER = {"action": "accept", "content": {"name": NAME}}
SAMPLE_ANSWER = {
    "role": "assistant",
    "content": {"type": "text", "text": MODEL_TEXT},
    "model": "downstream-model",
    "stopReason": "endTurn",
}
PREFIXES = ("ev", "sdk", "fm", "our")
#: The upstreams whose ``wait`` notes its cancellation.
WAITERS = ("sdk", "fm", "our")
#: Per upstream: (the tool that asks a form, its arguments, what its result says of the answer).
ELICIT = {
    "ev": ("ev_trigger-elicitation-request", {}, f"- Name: {NAME}"),
    **{prefix: (f"{prefix}_ask", {}, f"accept:{NAME}") for prefix in WAITERS},
}
SAMPLE = {
    "ev": ("ev_trigger-sampling-request", {"prompt": "What is six times seven?", "maxTokens": 16}),
    **{prefix: (f"{prefix}_sample", {"prompt": "What is six times seven?"}) for prefix in WAITERS},
}
PROGRESS = {
    "ev": ("ev_trigger-long-running-operation", {"duration": 1, "steps": STEPS}),
    **{prefix: (f"{prefix}_steps", {"count": STEPS}) for prefix in WAITERS},
}
CLIENTS = ("py-legacy", "py-2026", "ts")


def _toml(value: Any) -> str:
    return json.dumps(value)  # a JSON string or list of strings is TOML too


def _config(sdk_url: str, work: Path) -> str:
    python = sys.executable
    return f"""
[gateway]
name = "proof-gateway"
instructions = "four servers behind one endpoint"

[[upstream]]
name = "ev"
command = {_toml(EVERYTHING_STDIO_CMD)}
disabled = ["get-env", "gzip-file-as-resource"]

[[upstream]]
name = "sdk"
url = {_toml(sdk_url)}
era = "handshake"

[[upstream]]
name = "fm"
command = {_toml([python, str(UPSTREAMS), "fastmcp", "--record", str(work / "fm.cancelled")])}
era = "handshake"

[[upstream]]
name = "our"
command = {_toml([python, str(UPSTREAMS), "ours", "--record", str(work / "our.cancelled")])}
era = "stateless"
"""


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("gateway")


@pytest.fixture(scope="module")
def gateway_url(work: Path) -> Iterator[str]:
    if not have_npm_peers():
        pytest.fail("server-everything and the TypeScript SDK are not installed: run tests/peers/install.sh")
    if not have_pysdk():
        pytest.fail("the official Python SDK (mcp==2.3.0) is not installed: pip install -e '.[dev]'")
    env = checkout_env()
    sdk_port, gateway_port = free_port(), free_port()
    sdk = [sys.executable, str(UPSTREAMS), "pysdk", "--http", str(sdk_port), "--record", str(work / "sdk.cancelled")]
    with running_process(sdk, port=sdk_port, env=env, cwd=work, start_timeout=START_TIMEOUT):
        config = work / "gateway.toml"
        config.write_text(_config(f"http://127.0.0.1:{sdk_port}/mcp", work))
        gateway = [sys.executable, "-m", "backchannel", "gateway", str(config), "--http", "--port", str(gateway_port)]
        with running_process(gateway, port=gateway_port, env=env, cwd=work, start_timeout=START_TIMEOUT):
            yield f"http://127.0.0.1:{gateway_port}/mcp"


def _sdk_plan(client: str) -> list[tuple[str, str, dict[str, Any]]]:
    steps: list[tuple[str, str, dict[str, Any]]] = [
        ("listed", "list_tools", {}),
        ("queue", "answer_elicitation", {"answers": [ELICIT_ANSWER] * len(PREFIXES)}),
        ("queue_sampling", "answer_sampling", {"answers": [SAMPLE_ANSWER] * len(PREFIXES)}),
    ]
    for prefix in PREFIXES:
        name, arguments, _ = ELICIT[prefix]
        steps.append((f"elicit_{prefix}", "call_tool", {"name": name, "arguments": arguments}))
        name, arguments = SAMPLE[prefix]
        steps.append((f"sample_{prefix}", "call_tool", {"name": name, "arguments": arguments}))
        name, arguments = PROGRESS[prefix]
        steps.append((f"progress_{prefix}", "call_tool_progress", {"name": name, "arguments": arguments}))
    for prefix in WAITERS:
        wait = {"name": f"{prefix}_wait", "arguments": {"tag": f"{client}-{prefix}"}, "after_progress": 1}
        steps.append((f"cancel_{prefix}", "call_tool_cancel", wait))
    return steps


def _sdk_run(url: str, mode: str, client: str) -> dict[str, Any]:
    steps = _sdk_plan(client)
    plan = json.dumps([{"op": op, "args": args} for _, op, args in steps])
    argv = [sys.executable, str(PYSDK_CLIENT), "--mode", mode, "--timeout", str(REQUEST_TIMEOUT)]
    argv += ["--plan", plan, "--url", url]
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=RUN_TIMEOUT, cwd=TESTS_DIR, env=checkout_env(), check=False
    )
    assert done.returncode == 0, f"pysdk_client exited {done.returncode}\n{done.stdout}\n{done.stderr[-3000:]}"
    out: dict[str, Any] = json.loads(done.stdout)
    results = dict(zip([key for key, _, _ in steps], out["results"], strict=True))
    listed = results["listed"]
    results["listed"] = [tool["name"] for tool in listed.get("tools", [])] if "tools" in listed else listed
    for prefix in PREFIXES:
        stepped = results[f"progress_{prefix}"]
        if "result" in stepped:
            results[f"progress_{prefix}"] = {**stepped["result"], "progress": [p[:2] for p in stepped["progress"]]}
    for prefix in WAITERS:
        results[f"cancel_{prefix}"] = {"cancelled": results[f"cancel_{prefix}"].get("cancelled")}
    return results


def _ts_run(url: str) -> dict[str, Any]:
    steps: list[tuple[str, dict[str, Any]]] = [("listed", {"op": "listTools"})]
    for prefix in PREFIXES:
        name, arguments, _ = ELICIT[prefix]
        steps.append((f"elicit_{prefix}", {"op": "call", "name": name, "arguments": arguments}))
        name, arguments = SAMPLE[prefix]
        steps.append((f"sample_{prefix}", {"op": "call", "name": name, "arguments": arguments}))
        name, arguments = PROGRESS[prefix]
        steps.append((f"progress_{prefix}", {"op": "call", "name": name, "arguments": arguments}))
    for prefix in WAITERS:
        wait = {"op": "cancel", "name": f"{prefix}_wait", "arguments": {"tag": f"ts-{prefix}"}, "afterProgress": 1}
        steps.append((f"cancel_{prefix}", wait))
    plan = {
        "elicitation": [ELICIT_ANSWER] * len(PREFIXES),
        "sampling": [SAMPLE_ANSWER] * len(PREFIXES),
        "steps": [step for _, step in steps],
    }
    argv = [str(NODE22), str(PEERS_DIR / "fleet_ts_client.mjs"), json.dumps(plan), url]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=RUN_TIMEOUT, cwd=TESTS_DIR, check=False)
    assert done.returncode == 0, f"fleet_ts_client exited {done.returncode}\n{done.stdout}\n{done.stderr[-3000:]}"
    out: dict[str, Any] = json.loads(done.stdout)
    results = dict(zip([key for key, _ in steps], out["results"], strict=True))
    results["listed"] = results["listed"].get("tools", results["listed"])
    for prefix in WAITERS:
        results[f"cancel_{prefix}"] = {"cancelled": results[f"cancel_{prefix}"].get("aborted")}
    return results


@pytest.fixture(scope="module")
def runs(gateway_url: str, work: Path) -> dict[str, dict[str, Any]]:
    """Every client's run, one after the other, then what each upstream noted as cancelled."""
    found = {
        "py-legacy": _sdk_run(gateway_url, "legacy", "py-legacy"),
        "py-2026": _sdk_run(gateway_url, "2026-07-28", "py-2026"),
        "ts": _ts_run(gateway_url),
    }
    expected = {prefix: {f"{client}-{prefix}" for client in CLIENTS} for prefix in WAITERS}

    def noted() -> dict[str, set[str]]:
        files = {prefix: work / f"{prefix}.cancelled" for prefix in WAITERS}
        return {prefix: set(path.read_text().split()) if path.exists() else set() for prefix, path in files.items()}

    # An upstream hears of a cancel a moment after its client moved on: wait for every note (bounded).
    with contextlib.suppress(TimeoutError):
        run(within(lambda: noted() == expected, "every cancel noted", timeout=30), timeout=40)
    found["upstreams"] = {"cancelled": noted()}
    return found


def _text(result: dict[str, Any], step: str) -> str:
    assert "error" not in result, f"{step}: {result['error']}"
    assert not result.get("isError"), f"{step}: {result}"
    return "\n".join(item["text"] for item in result["content"] if item.get("type") == "text")


@pytest.mark.parametrize("client", CLIENTS)
def test_each_client_lists_the_tools_of_all_four(runs: dict[str, dict[str, Any]], client: str) -> None:
    listed = set(runs[client]["listed"])
    assert {"ev_echo", "sdk_ask", "fm_ask", "our_ask"} <= listed
    for prefix in PREFIXES:
        assert {ELICIT[prefix][0], SAMPLE[prefix][0], PROGRESS[prefix][0]} <= listed
    assert not {"ev_get-env", "ev_gzip-file-as-resource"} & listed  # switched off in the file


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("prefix", PREFIXES)
def test_each_upstream_elicits_through_the_gateway(runs: dict[str, dict[str, Any]], client: str, prefix: str) -> None:
    step = f"elicit_{prefix}"
    assert ELICIT[prefix][2] in _text(runs[client][step], step)


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("prefix", PREFIXES)
def test_each_upstream_samples_through_the_gateway(runs: dict[str, dict[str, Any]], client: str, prefix: str) -> None:
    step = f"sample_{prefix}"
    assert MODEL_TEXT in _text(runs[client][step], step)


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("prefix", PREFIXES)
def test_each_upstream_reports_progress_through_the_gateway(
    runs: dict[str, dict[str, Any]], client: str, prefix: str
) -> None:
    step = f"progress_{prefix}"
    result = runs[client][step]
    _text(result, step)
    progress = [value for value, _total in result["progress"]]
    assert len(progress) == STEPS, result["progress"]
    assert progress == sorted(progress) and len(set(progress)) == STEPS  # only up
    if prefix != "ev":  # server-everything counts in its own units
        assert result["progress"] == [[step, STEPS] for step in range(1, STEPS + 1)]


def test_a_cancel_reaches_the_right_upstream(runs: dict[str, dict[str, Any]]) -> None:
    for client in CLIENTS:
        for prefix in WAITERS:
            assert runs[client][f"cancel_{prefix}"]["cancelled"], f"{client} did not cancel {prefix}_wait"
    assert runs["upstreams"]["cancelled"] == {
        prefix: {f"{client}-{prefix}" for client in CLIENTS} for prefix in WAITERS
    }
