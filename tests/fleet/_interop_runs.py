"""The plans the SDK clients run against the fleet in ``test_fleet_interop.py``, and ``Run``: what
one run gave (the client's output, each step's result by key, the requests it made, by arrival).

Each plan runs in a subprocess, alone on the fleet, so every request that arrives in its window
(``ProcessFleet.requests``) is its own.
"""

from __future__ import annotations

__all__ = ["LEVELS", "LEVEL_CHANGES", "ROOT_CALLS", "Run", "pysdk_run", "ts_run"]

import itertools
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

from _processes import WORKERS, ProcessFleet

from peers.paths import NODE22, PEERS_DIR, TESTS_DIR

TIMEOUT = 60
LEVELS = ["debug", "info", "warning", "error"]
NAME = {"name": "ada"}
ANSWERS = [{"action": "accept", "content": NAME}, {"action": "decline"}, {"action": "cancel"}]
SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "forty-two"}, "model": "m", "stopReason": "endTurn"}
#: Legacy: eight calls of ``roots`` reach all four workers whatever each has cached (see
#: ``test_roots_follow_list_changed_on_every_worker``); the stateless era asks on every call.
ROOT_CALLS = {"legacy": 8, "2026-07-28": 2, "ts": 8}
#: Handshake era: each level set (on one worker), then a call that logs (on the next): each is a
#: chance for the call to outrun the news of the level, so there are several.
LEVEL_CHANGES = ["warning", "debug", "error", "info", "warning", "debug", "error", "debug"]


@dataclass
class Run:
    """One client's plan against the fleet: its output, its steps by key, the requests it made."""

    who: str
    out: dict[str, Any]
    steps: dict[str, Any]
    requests: list[dict[str, Any]]
    fleet: ProcessFleet

    def ok(self, key: str) -> Any:
        value = self.steps[key]
        assert not (isinstance(value, dict) and "error" in value), f"{self.who} {key}: {value}"
        return value

    def text(self, key: str) -> str:
        result = self.ok(key)
        result = result.get("result", result)
        text: str = result["content"][0]["text"]
        return text

    def arrivals(self, **match: Any) -> list[dict[str, Any]]:
        """The requests whose body has a message with these fields (``method``, ``tool``, ``answer``)."""
        return [r for r in self.requests if any(all(m.get(k) == v for k, v in match.items()) for m in r["rpc"])]


def _window(fleet: ProcessFleet, who: str, argv: list[str]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    since = time.monotonic_ns()
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd=TESTS_DIR.parent, check=False)
    until = time.monotonic_ns()
    assert proc.returncode == 0, f"{who} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}\n{fleet.log_tail()}"
    out: dict[str, Any] = json.loads(proc.stdout)
    return out, fleet.requests(since, until)


def _say(i: int) -> tuple[str, dict[str, Any]]:
    return "call_tool", {"name": "say", "arguments": {"text": f"said{i}"}}


def _add_tool(name: str) -> dict[str, Any]:
    return {"name": "add_tool", "arguments": {"name": name}}


def pysdk_run(fleet: ProcessFleet, mode: str, dirs: dict[str, str]) -> Run:
    legacy = mode == "legacy"
    roots = ROOT_CALLS[mode]
    steps: list[tuple[str, str, dict[str, Any]]] = [
        *((f"whoami{i}", "call_tool", {"name": "whoami"}) for i in range(WORKERS + 1)),
        ("queue", "answer_elicitation", {"answers": ANSWERS}),
        *((f"ask_{action}", "call_tool", {"name": "ask"}) for action in ("accept", "decline", "cancel")),
        ("queue_sampling", "answer_sampling", {"answers": [SAMPLED]}),
        ("sampled", "call_tool", {"name": "sample", "arguments": {"prompt": "six times seven?"}}),
        ("set_a", "set_roots", {"roots": [{"uri": dirs["a"], "name": "A"}]}),
        *((f"roots_a{i}", "call_tool", {"name": "roots"}) for i in range(roots)),
        ("set_b", "set_roots", {"roots": [{"uri": dirs["b"], "name": "B"}]}),
        ("changed", "roots_list_changed", {}),
        *((f"roots_b{i}", "call_tool", {"name": "roots"}) for i in range(roots)),
        ("count", "call_tool_progress", {"name": "count", "arguments": {"to": 200}}),
    ]
    # The cut before the cancel: after a cancel, the SDKs keep resuming the cancelled call's stream.
    if legacy:
        steps.append(("cut", "call_tool_progress", {"name": "cut", "arguments": {"to": 40, "at": 10}}))
    steps.append(
        ("cancel", "call_tool_cancel", {"name": "wait", "arguments": {"tag": f"py-{mode}"}, "after_progress": 2})
    )
    if legacy:
        steps.extend(
            itertools.chain.from_iterable(
                ((f"level{i}", "set_logging_level", {"level": level}), (f"said{i}", *_say(i)))
                for i, level in enumerate(LEVEL_CHANGES)
            )
        )
    else:
        level = {"io.modelcontextprotocol/logLevel": "warning"}
        steps += [
            ("said_unasked", "call_tool", {"name": "say", "arguments": {"text": "unasked"}}),
            ("said", "call_tool", {"name": "say", "arguments": {"text": "warning"}, "meta": level}),
        ]
    steps.append(("listen", "listen_and_call", _add_tool(f"tool_{mode[:4]}")))
    plan = json.dumps([{"op": op, "args": args} for _, op, args in steps])
    argv = [sys.executable, str(PEERS_DIR / "fleet_pysdk_client.py"), "--mode", mode, "--exclude-unset"]
    out, requests = _window(fleet, mode, [*argv, "--timeout", "20", "--plan", plan, "--url", fleet.url])
    assert "closeError" not in out, out["closeError"]
    return Run(mode, out, dict(zip([key for key, _, _ in steps], out["results"], strict=True)), requests, fleet)


def ts_run(fleet: ProcessFleet, dirs: dict[str, str]) -> Run:
    roots = ROOT_CALLS["ts"]
    steps: list[tuple[str, dict[str, Any]]] = [
        *((f"ask_{action}", {"op": "call", "name": "ask"}) for action in ("accept", "decline", "cancel")),
        ("sampled", {"op": "call", "name": "sample", "arguments": {"prompt": "six times seven?"}}),
        *((f"roots_a{i}", {"op": "call", "name": "roots"}) for i in range(roots)),
        ("set_b", {"op": "setRoots", "roots": [{"uri": dirs["b"], "name": "B"}]}),
        ("changed", {"op": "rootsChanged"}),
        *((f"roots_b{i}", {"op": "call", "name": "roots"}) for i in range(roots)),
        ("count", {"op": "call", "name": "count", "arguments": {"to": 200}}),
        ("cut", {"op": "call", "name": "cut", "arguments": {"to": 40, "at": 10}}),
        # These before the cancel: resuming the cancelled call's stream, the client opens more streams.
        *((f"added{i}", {"op": "callThenListChanged", **_add_tool(f"ts{i}")}) for i in (0, 1)),
        ("cancel", {"op": "cancel", "name": "wait", "arguments": {"tag": "ts"}, "afterProgress": 2}),
        *itertools.chain.from_iterable(
            ((f"level{i}", {"op": "setLevel", "level": level}), (f"said{i}", {"op": "call", **_say(i)[1]}))
            for i, level in enumerate(LEVEL_CHANGES)
        ),
    ]
    plan = {
        "elicitation": ANSWERS,
        "sampling": [SAMPLED],
        "roots": [{"uri": dirs["a"], "name": "A"}],
        "steps": [step for _, step in steps],
    }
    argv = [str(NODE22), str(PEERS_DIR / "fleet_ts_client.mjs"), json.dumps(plan), fleet.url]
    out, requests = _window(fleet, "ts", argv)
    return Run("ts", out, dict(zip([key for key, _ in steps], out["results"], strict=True)), requests, fleet)
