"""Issue #29, proof 1: a handshake-era desktop host reaches a 2026-07-28-only server through
``backchannel proxy``, and the reverse channel crosses.

The host is the official Python SDK client (``mcp`` 2.3.0, ``mode="legacy"``: ``initialize``,
then requests on the session), driven by ``tests/peers/pysdk_client.py``; it launches
``backchannel proxy -- python stateless_upstream.py --stdio`` over stdio, as a desktop host
launches a server. The upstream is ``tests/peers/stateless_upstream.py``: a server of revision
2026-07-28 only, which refuses ``initialize``, written from the spec with no SDK. Each of its
``su_*`` tools uses one part of the reverse channel, which the upstream can only use in the
stateless era's form (``InputRequiredResult``, the request's ``_meta`` log level), and the host
only in the handshake era's (requests on its session, ``logging/setLevel``):

- a form (``elicitation/create``; ``su_multi``: two rounds, the first answer kept only in the
  upstream's ``requestState``), a URL (the host gets the ``elicitationId`` 2025-11-25 requires,
  client/elicitation.mdx:345; the upstream's "not done yet" rounds are waited through),
  sampling, roots (``CHAPTER-FEATURES`` C-ELIC, C-SAMP, C-ROOT);
- progress, strictly increasing and all before the answer (U-PROG);
- cancellation: the host's cancel scope sends ``notifications/cancelled``, and the upstream
  records the cancellation of its own request (``su_cancelled``) (U-CANC);
- the log level the host sets with ``logging/setLevel`` is the level of each request upstream
  (``su_log`` sends only what is at or above it) (S-LOG);
- a task the upstream makes of a call (tasks extension) is followed by the proxy for a host
  that takes no tasks, its question asked of the host.

Each plan runs once per module (one proxy, one upstream): the tests read what the host saw.
The same plan runs with the upstream over Streamable HTTP (``backchannel proxy URL``), where
cancelling is closing the upstream request's connection, and with the proxy served to the host
over Streamable HTTP (``--serve http``). ``test_proxy_failures.py`` has the
upstreams that fail.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from _subprocesses import checkout_env
from backchannel.testing import free_port, running_process
from peers.paths import PEERS_DIR, PYSDK_CLIENT, have_pysdk

pytestmark = pytest.mark.interop

if not have_pysdk():
    pytest.skip("the official Python SDK (mcp==2.3.0) is not installed", allow_module_level=True)

UPSTREAM = PEERS_DIR / "stateless_upstream.py"
PROXY = [sys.executable, "-m", "backchannel", "proxy"]
#: Seconds for the whole plan (the SDK's per-request bound is 20 s).
BOUND = 120

PERSON = {"name": "Ada", "subscribe": True}
ROOT = {"uri": "file:///tmp/work", "name": "work"}
REPLY = {"role": "assistant", "content": {"type": "text", "text": "model says hi"}, "model": "test-model"}

#: The host's answers to the upstream's forms and URL, in the order they are asked.
ANSWERS = [
    {"action": "accept", "content": PERSON},  # su_form
    {"action": "accept", "content": {"name": "Grace"}},  # su_multi, first round
    {"action": "accept", "content": {"colour": "green"}},  # su_multi, second round
    {"action": "accept"},  # su_url: consent to open the page
    {"action": "accept", "content": {"go": True}},  # su_task's question
]

#: (name, op, args): what the host does, in order; each test reads the step it names.
STEPS: list[tuple[str, str, dict[str, Any]]] = [
    ("answers", "answer_elicitation", {"answers": ANSWERS}),
    ("roots_set", "set_roots", {"roots": [ROOT]}),
    ("replies", "answer_sampling", {"answers": [REPLY]}),
    ("tools", "list_tools", {}),
    ("form", "call_tool", {"name": "su_form", "arguments": {}}),
    ("multi", "call_tool", {"name": "su_multi", "arguments": {}}),
    ("url", "call_tool", {"name": "su_url", "arguments": {"pending": 2}}),
    ("sample", "call_tool", {"name": "su_sample", "arguments": {"prompt": "hello?"}}),
    ("roots", "call_tool", {"name": "su_roots", "arguments": {}}),
    ("progress", "call_tool_progress", {"name": "su_progress", "arguments": {"steps": 5}}),
    ("level", "set_logging_level", {"level": "warning"}),
    ("log", "call_tool", {"name": "su_log", "arguments": {}}),
    ("cancel", "call_tool_cancel", {"name": "su_slow", "arguments": {"seconds": 30}, "after_progress": 1}),
    ("cancelled", "call_tool", {"name": "su_cancelled", "arguments": {}}),
    ("task", "call_tool", {"name": "su_task", "arguments": {"ask": True, "ms": 50}}),
]
PLAN = json.dumps([{"op": op, "args": args} for _, op, args in STEPS])


def host(*proxy: str) -> dict[str, Any]:
    """The SDK client, in legacy mode, reaching the proxy (``-- COMMAND...`` it spawns, or
    ``--url URL``): what it saw."""
    argv = [sys.executable, str(PYSDK_CLIENT), "--mode", "legacy", "--plan", PLAN, "--exclude-unset", *proxy]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=BOUND, env=checkout_env())
    assert done.returncode == 0, f"the host failed: {done.stdout} {done.stderr}"
    seen: dict[str, Any] = json.loads(done.stdout)
    seen["steps"] = {name: result for (name, _, _), result in zip(STEPS, seen["results"], strict=True)}
    seen["stderr"] = done.stderr
    return seen


@pytest.fixture(scope="module")
def upstream() -> Path:
    if not UPSTREAM.is_file():
        pytest.skip(f"{UPSTREAM.name} (the hand-written 2026-07-28 upstream) is not in this checkout")
    return UPSTREAM


@pytest.fixture(scope="module", params=["stdio", "http", "served-over-http"])
def seen(request: pytest.FixtureRequest, upstream: Path) -> Iterator[dict[str, Any]]:
    """What the host saw through the proxy: the upstream spoken to over stdio or over HTTP, and
    (``served-over-http``) the proxy served over Streamable HTTP (``--serve http``) to the host."""
    stdio_upstream = [sys.executable, str(upstream), "--stdio"]
    if request.param == "stdio":
        yield host("--", *PROXY, "--", *stdio_upstream)
        return
    port = free_port()
    if request.param == "http":
        with running_process([sys.executable, str(upstream), "--http", str(port)], port=port):
            yield host("--", *PROXY, f"http://127.0.0.1:{port}/mcp")
        return
    served = [*PROXY, "--serve", "http", "--port", str(port), "--", *stdio_upstream]
    with running_process(served, port=port, env=checkout_env()):
        yield host("--url", f"http://127.0.0.1:{port}/mcp")


def step(seen: dict[str, Any], name: str) -> Any:
    result = seen["steps"][name]
    assert "error" not in result, f"{name}: {result}"
    return result


def asked(seen: dict[str, Any], message: str) -> dict[str, Any]:
    """The one elicitation the host was asked whose message starts with ``message``."""
    (found,) = [params for params in seen["elicitations"] if params["message"].startswith(message)]
    return found


def text(result: dict[str, Any]) -> str:
    value: str = result["content"][0]["text"]
    return value


def test_the_host_meets_the_upstream_in_its_own_era(seen: dict[str, Any]) -> None:
    # The handshake the upstream refuses is the proxy's to answer; what it says is the upstream's.
    assert seen["protocolVersion"] == "2025-11-25"
    assert seen["serverInfo"] == {"name": "stateless-upstream", "version": "1.0.0"}
    assert {"tools", "logging"} <= seen["serverCapabilities"].keys()
    names = {tool["name"] for tool in step(seen, "tools")["tools"]}
    assert {"su_form", "su_url", "su_sample", "su_roots", "su_progress", "su_slow", "su_log"} <= names
    assert "ttlMs" not in step(seen, "tools")  # the stateless era's cache hints stay on its side


def test_a_form_reaches_the_host_and_its_answer_the_upstream(seen: dict[str, Any]) -> None:
    form = asked(seen, "Who are you?")
    assert form["mode"] == "form" and set(form["requestedSchema"]["properties"]) == {"name", "subscribe"}
    result = step(seen, "form")
    assert result["structuredContent"] == {"action": "accept", "content": PERSON}


def test_two_rounds_of_forms_keep_the_upstream_request_state(seen: dict[str, Any]) -> None:
    assert seen["elicitations"].index(asked(seen, "First")) + 1 == seen["elicitations"].index(asked(seen, "Second"))
    result = step(seen, "multi")
    assert result["structuredContent"]["first"] == {"action": "accept", "content": {"name": "Grace"}}
    assert result["structuredContent"]["second"] == {"action": "accept", "content": {"colour": "green"}}


def test_a_url_request_reaches_the_host_with_the_id_its_revision_requires(seen: dict[str, Any]) -> None:
    (url,) = [params for params in seen["elicitations"] if params.get("mode") == "url"]
    assert url["url"].startswith("http://127.0.0.1/su_url/")
    assert isinstance(url.get("elicitationId"), str) and url["elicitationId"]  # 2025-11-25: required
    assert text(step(seen, "url")) == "url done"  # after two rounds of "not done yet" upstream


def test_sampling_is_answered_by_the_host(seen: dict[str, Any]) -> None:
    (asked,) = seen["samplings"]
    assert asked["messages"] == [{"role": "user", "content": {"type": "text", "text": "hello?"}}]
    assert step(seen, "sample")["structuredContent"] == {"model": "test-model", "text": "model says hi"}


def test_roots_are_the_hosts(seen: dict[str, Any]) -> None:
    assert seen["rootsAnswered"] == [[ROOT["uri"]]]
    assert step(seen, "roots")["structuredContent"] == {"uris": [ROOT["uri"]]}


def test_progress_is_strictly_increasing_and_all_before_the_answer(seen: dict[str, Any]) -> None:
    progress = step(seen, "progress")
    # the callback's list is what had arrived when the call returned: every step, in order
    assert [value for value, _, _ in progress["progress"]] == [1, 2, 3, 4, 5]
    assert {total for _, total, _ in progress["progress"]} == {5}
    assert text(progress["result"]) == "progress done: 5 steps"


def test_a_cancelled_call_is_cancelled_upstream(seen: dict[str, Any]) -> None:
    cancel = step(seen, "cancel")
    assert cancel["cancelled"] is True and "result" not in cancel
    (entry,) = step(seen, "cancelled")["structuredContent"]["cancelled"]
    assert entry["tool"] == "su_slow" and entry["method"] == "tools/call"
    assert entry["via"] in ("notifications/cancelled", "disconnect")  # stdio; HTTP closes the request


def test_the_level_the_host_sets_is_honoured_upstream(seen: dict[str, Any]) -> None:
    assert step(seen, "level") == {}
    assert step(seen, "log")["structuredContent"] == {"sent": ["warning", "error"]}
    assert [(log["level"], log["data"]) for log in seen["logs"]] == [
        ("warning", "a warning line"),
        ("error", "a error line"),
    ]


def test_a_task_upstream_is_followed_for_a_host_that_takes_none(seen: dict[str, Any]) -> None:
    assert asked(seen, "Go on with the task?")["mode"] == "form"
    line = text(step(seen, "task"))
    assert line.startswith("task done") and '"go": true' in line


def test_nothing_was_left_unanswered(seen: dict[str, Any]) -> None:
    assert "closeError" not in seen and len(seen["elicitations"]) == 5
    assert "Traceback" not in seen["stderr"]
