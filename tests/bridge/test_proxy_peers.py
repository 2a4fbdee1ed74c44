"""Issue #29, proofs 2 and 4: real clients reach handshake-only upstreams through our bridge, and
the upstream's questions are answered by the client at the far end.

Proof 2, a 2026-07-28 client in front, each of three upstreams that ask their questions the
handshake era's way (a request of their own while the call waits) behind:

* the upstreams: server-everything over stdio (handshake only; the bridge's ``era="auto"``
  falls back to ``initialize``), a server of the official Python SDK (``pysdk_upstream.py``,
  mcp 2.3.0) and one of FastMCP 4.x (``fastmcp_upstream.py``). Those two also answer
  ``server/discover``, but their imperative ``elicit``, sampling and roots need the handshake
  era's back-channel (on the 2026-07-28 wire they fail the call), so the bridge is told to
  speak to them in the handshake era (``UpstreamSpec(era="handshake")``, the CLI's
  ``--upstream-era handshake``);
* (a) our ``Client(era="stateless")`` against ``Proxy`` served in this process over stdio and
  over Streamable HTTP (``connected``); (b) the official Python SDK's client in its
  ``2026-07-28`` mode (``tests/peers/pysdk_client.py``) against ``proxy_peer.py --http``;
* each upstream's form, sampling and roots questions reach the client as ``inputRequests``;
  what the client answered comes back inside the tool's result. Progress comes through on the
  client's token. What an upstream logs while a call is under way reaches that call: FastMCP's
  and the SDK server's progress tools log each step, server-everything logs the roots it got.
  The SDK's server logs without declaring ``logging``, so the proxy does not offer it and our
  client asks for no level (the SDK client asks on every request, and gets them).

Proof 4, the scenario FastMCP's proxy refuses: the official SDK client in its handshake mode
launches our bridge over stdio, as a desktop host would, in front of server-everything; its
elicitation and sampling tools are answered by the SDK client's callbacks. The same client and
plan through FastMCP's ``create_proxy`` (``fastmcp_proxy_peer.py``) get each call's error
(-32603, "no back-channel for server-initiated requests") and the client is never asked.

A missing peer fails the module's tests with the command that installs it. Each upstream and
client starts once per module (the module-scoped fixtures run every step; each test checks one).
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import importlib.util
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from _subprocesses import checkout_env
from backchannel.bridge import Proxy, UpstreamSpec
from backchannel.protocol.events import ProgressReceived
from backchannel.testing import LOOPBACK, connected, free_port, running_process
from backchannel.types.content import TextContent
from peers.paths import EVERYTHING_STDIO_CMD, PYSDK_CLIENT, TESTS_DIR, have_npm_peers, have_pysdk

pytestmark = pytest.mark.interop

HERE = Path(__file__).resolve().parent
#: Seconds: bounds, not expectations (a Python upstream alone takes seconds to import on a busy machine).
REQUEST_TIMEOUT = 60.0
RUN_TIMEOUT = 300.0
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
NO_BACK_CHANNEL = "no back-channel for server-initiated requests"


@dataclass(frozen=True)
class Upstream:
    """A handshake-only upstream: how the bridge starts it, its tools that ask, and what their
    results say when the downstream client's answers came back."""

    command: list[str]
    era: str
    elicit: tuple[str, dict[str, Any]]
    sample: tuple[str, dict[str, Any]]
    roots: tuple[str, dict[str, Any]]
    progress: tuple[str, dict[str, Any]]
    #: The text its elicitation tool answers when the client accepted with ``NAME``.
    elicited: str
    #: The log messages (logger, data) it sends within the calls above, in order.
    logs: list[tuple[str, Any]]
    #: Whether it declares ``logging`` (the SDK's server logs without declaring it).
    declares_logging: bool = True
    #: The peers it needs installed (``need`` says what installs each).
    needs: tuple[str, ...] = ()


EVERYTHING = Upstream(
    command=EVERYTHING_STDIO_CMD,
    era="auto",
    elicit=("trigger-elicitation-request", {}),
    sample=("trigger-sampling-request", {"prompt": "What is six times seven?", "maxTokens": 16}),
    roots=("get-roots-list", {}),
    progress=("trigger-long-running-operation", {"duration": 1, "steps": STEPS}),
    elicited=f"- Name: {NAME}",
    # Its log is its session's: it asks for roots when first asked for them in a call (when it asked
    # right after ``initialize`` no call was under way, so the bridge had no one to ask), then logs.
    logs=[("everything-server", "Roots updated: 1 root(s) received from client")],
    needs=("npm",),
)
PYSDK = Upstream(
    command=[sys.executable, str(HERE / "pysdk_upstream.py")],
    era="handshake",
    elicit=("ask", {}),
    sample=("sample", {"prompt": "What is six times seven?"}),
    roots=("roots", {}),
    progress=("steps", {"count": STEPS}),
    elicited=f"accept:{NAME}",
    logs=[("steps", f"step {step}") for step in range(1, STEPS + 1)],
    declares_logging=False,
    needs=("mcp",),
)
FASTMCP = Upstream(
    command=[sys.executable, str(HERE / "fastmcp_upstream.py")],
    era="handshake",
    elicit=("ask", {}),
    sample=("sample", {"prompt": "What is six times seven?"}),
    roots=("roots", {}),
    progress=("steps", {"count": STEPS}),
    elicited=f"accept:{NAME}",
    logs=[("steps", {"msg": f"step {step}", "extra": None}) for step in range(1, STEPS + 1)],
    needs=("fastmcp",),
)
UPSTREAMS = {"server-everything": EVERYTHING, "pysdk-2.3.0": PYSDK, "fastmcp-4": FASTMCP}


def need(*peers: str) -> None:
    """Fail (never skip) when a peer is not installed, naming what installs it."""
    if "npm" in peers and not have_npm_peers():
        pytest.fail("server-everything (the npm peers) is not installed: run tests/peers/install.sh")
    if "mcp" in peers and not have_pysdk():
        pytest.fail("the official Python SDK (mcp==2.3.0) is not installed: pip install -e '.[dev]'")
    if "fastmcp" in peers and importlib.util.find_spec("fastmcp") is None:
        pytest.fail("FastMCP 4.x is not installed: pip install -e '.[dev]'")


def spec(upstream: Upstream) -> UpstreamSpec:
    return UpstreamSpec(command=upstream.command, era=upstream.era, cwd=str(TESTS_DIR))  # type: ignore[arg-type]


def texts(result: Any) -> str:
    return "\n".join(item.text for item in result.content if isinstance(item, TextContent))


@pytest.fixture(scope="module")
def root_uri(tmp_path_factory: pytest.TempPathFactory) -> str:
    return tmp_path_factory.mktemp("bridge-root").resolve().as_uri()


# -- proof 2 (a): our stateless client ------------------------------------------------------------


async def _ours(upstream: Upstream, transport: str, root: str) -> dict[str, Any]:
    asked: dict[str, list[dict[str, Any]]] = {"elicitation": [], "sampling": []}
    logs: list[Any] = []
    progress: list[tuple[float, float | None]] = []

    def elicitation(params: dict[str, Any]) -> dict[str, Any]:
        asked["elicitation"].append(params)
        return ELICIT_ANSWER

    def sampling(params: dict[str, Any]) -> dict[str, Any]:
        asked["sampling"].append(params)
        return SAMPLE_ANSWER

    def on_progress(event: ProgressReceived) -> None:
        progress.append((event.progress, event.total))

    proxy = Proxy(spec(upstream))
    outcome: dict[str, Any] = {"asked": asked, "logs": logs, "progress": progress}
    try:
        async with (
            asyncio.timeout(RUN_TIMEOUT),
            connected(
                proxy,
                "stateless",
                transport,  # type: ignore[arg-type]
                elicitation=elicitation,
                sampling=sampling,
                roots=[root],
                log_level="info",
                on_log=lambda message: logs.append(message),
                probe_timeout=REQUEST_TIMEOUT,
                request_timeout=REQUEST_TIMEOUT,
            ) as client,
        ):
            upstream_client = proxy.upstream.connected
            outcome["eras"] = (client.era, upstream_client.session.era if upstream_client else None)
            outcome["capabilities"] = client.server_capabilities
            outcome["tools"] = [tool.name for tool in await client.list_tools()]
            for step in ("elicit", "sample", "roots"):
                name, arguments = getattr(upstream, step)
                try:
                    outcome[step] = await client.call_tool(name, arguments)
                except Exception as exc:
                    outcome[step] = exc
            name, arguments = upstream.progress
            outcome["stepped"] = await client.call_tool(name, arguments, on_progress=on_progress)
    finally:
        await proxy.upstream.aclose()
    return outcome


@pytest.fixture(scope="module", params=[(up, tr) for up in UPSTREAMS for tr in ("stdio", "http")], ids="-".join)
def ours(request: pytest.FixtureRequest, root_uri: str) -> dict[str, Any]:
    """Every step of proof 2 (a) against one upstream, over one transport, on one connection."""
    name, transport = request.param
    upstream = UPSTREAMS[name]
    need(*upstream.needs)
    return {"upstream": upstream, "root": root_uri, **asyncio.run(_ours(upstream, transport, root_uri))}


def _ok(run: dict[str, Any], step: str) -> str:
    result = run[step]
    assert not isinstance(result, Exception), f"{step}: {type(result).__name__}: {result}"
    assert not result.is_error, texts(result)
    return texts(result)


def test_ours_stateless_client_meets_a_handshake_upstream(ours: dict[str, Any]) -> None:
    assert ours["eras"] == ("stateless", "handshake")
    upstream: Upstream = ours["upstream"]
    for step in ("elicit", "sample", "roots", "progress"):
        assert getattr(upstream, step)[0] in ours["tools"]  # offered: our client's capabilities were carried up


def test_ours_elicitation_answered_by_the_client(ours: dict[str, Any]) -> None:
    text = _ok(ours, "elicit")
    assert ours["upstream"].elicited in text
    assert len(ours["asked"]["elicitation"]) == 1


def test_ours_sampling_answered_by_the_client(ours: dict[str, Any]) -> None:
    text = _ok(ours, "sample")
    assert MODEL_TEXT in text
    [asked] = ours["asked"]["sampling"]
    assert "What is six times seven?" in asked["messages"][0]["content"]["text"]  # the upstream's question, as asked


def test_ours_roots_answered_by_the_client(ours: dict[str, Any]) -> None:
    assert ours["root"] in _ok(ours, "roots")


def test_ours_progress_reaches_the_client(ours: dict[str, Any]) -> None:
    assert not ours["stepped"].is_error, texts(ours["stepped"])
    assert ours["progress"] == [(float(step), float(STEPS)) for step in range(1, STEPS + 1)]


def test_ours_logs_reach_the_client(ours: dict[str, Any]) -> None:
    upstream: Upstream = ours["upstream"]
    if upstream.declares_logging:
        assert "logging" in ours["capabilities"]
        assert [(log["level"], log["logger"], log["data"]) for log in ours["logs"]] == [
            ("info", logger, data) for logger, data in upstream.logs
        ]
    else:  # the proxy does not offer what the upstream lacks, and our client asks no level of a server without it
        assert "logging" not in ours["capabilities"]
        assert ours["logs"] == []


# -- the official SDK client (tests/peers/pysdk_client.py) ----------------------------------------


def _sdk_run(mode: str, target: list[str], steps: list[tuple[str, str, dict[str, Any]]]) -> dict[str, Any]:
    """Run the SDK client's ``steps`` (key, op, args) against ``target`` (``["--url", URL]`` or
    ``["--", CMD...]``); each step's result under its key, the client's whole output under ``out``."""
    plan = json.dumps([{"op": op, "args": args} for _, op, args in steps])
    argv = [sys.executable, str(PYSDK_CLIENT), "--mode", mode, "--plan", plan, "--exclude-unset"]
    argv += ["--log-level", "info", "--timeout", str(REQUEST_TIMEOUT), *target]
    proc = subprocess.run(
        argv, capture_output=True, text=True, timeout=RUN_TIMEOUT, cwd=TESTS_DIR, env=checkout_env(), check=False
    )
    assert proc.returncode == 0, f"pysdk_client exited {proc.returncode}\n{proc.stdout}\n{proc.stderr[-3000:]}"
    out: dict[str, Any] = json.loads(proc.stdout)
    assert "closeError" not in out, out["closeError"]
    return {"out": out, **dict(zip([key for key, _, _ in steps], out["results"], strict=True))}


def _sdk_steps(upstream: Upstream, root: str) -> list[tuple[str, str, dict[str, Any]]]:
    def call(step: str) -> tuple[str, str, dict[str, Any]]:
        name, arguments = getattr(upstream, step)
        return step, "call_tool", {"name": name, "arguments": arguments}

    progress_name, progress_arguments = upstream.progress
    return [
        ("answers", "answer_elicitation", {"answers": [ELICIT_ANSWER]}),
        ("samples", "answer_sampling", {"answers": [SAMPLE_ANSWER]}),
        ("set_roots", "set_roots", {"roots": [{"uri": root, "name": "Work"}]}),
        ("tools", "list_tools", {}),
        call("elicit"),
        call("sample"),
        call("roots"),
        ("stepped", "call_tool_progress", {"name": progress_name, "arguments": progress_arguments}),
    ]


def _sdk_text(run: dict[str, Any], step: str) -> str:
    result = run[step]
    if step == "stepped":
        result = result.get("result", result)
    assert "error" not in result, f"{step}: {result['error']}"
    assert not result.get("isError"), f"{step}: {result}"
    return "\n".join(item["text"] for item in result["content"] if item.get("type") == "text")


@pytest.fixture(scope="module", params=list(UPSTREAMS))
def sdk_modern(request: pytest.FixtureRequest, root_uri: str) -> Iterator[dict[str, Any]]:
    """Proof 2 (b): the SDK client in its 2026-07-28 mode, over Streamable HTTP, against our bridge
    (``proxy_peer.py --http``) in front of one upstream; every step on one client."""
    need("mcp")
    upstream = UPSTREAMS[request.param]
    need(*upstream.needs)
    port = free_port()
    argv = [sys.executable, str(HERE / "proxy_peer.py"), "--http", str(port), "--upstream-era", upstream.era]
    with running_process(
        [*argv, "--", *upstream.command], port=port, cwd=TESTS_DIR, env=checkout_env(), start_timeout=REQUEST_TIMEOUT
    ):
        target = ["--url", f"http://{LOOPBACK}:{port}/mcp"]
        yield {"upstream": upstream, "root": root_uri, **_sdk_run("2026-07-28", target, _sdk_steps(upstream, root_uri))}


def test_sdk_modern_client_speaks_2026_07_28_to_the_bridge(sdk_modern: dict[str, Any]) -> None:
    assert sdk_modern["out"]["protocolVersion"] == "2026-07-28"
    listing = sdk_modern["tools"]
    assert "error" not in listing, listing["error"]
    # The upstream is of the handshake era: its listing has no cache hints, which a 2026-07-28
    # listing must carry (schema.ts, CacheableResult: ttlMs and cacheScope are required); the
    # bridge adds the ones that promise nothing.
    assert (listing["ttlMs"], listing["cacheScope"]) == (0, "private")
    upstream: Upstream = sdk_modern["upstream"]
    names = {tool["name"] for tool in listing["tools"]}
    assert {getattr(upstream, step)[0] for step in ("elicit", "sample", "roots", "progress")} <= names


def test_sdk_modern_elicitation_answered_by_the_client(sdk_modern: dict[str, Any]) -> None:
    assert sdk_modern["upstream"].elicited in _sdk_text(sdk_modern, "elicit")
    [asked] = sdk_modern["out"]["elicitations"]
    assert "name" in asked["requestedSchema"]["properties"]  # the upstream's form, as asked


def test_sdk_modern_sampling_answered_by_the_client(sdk_modern: dict[str, Any]) -> None:
    assert MODEL_TEXT in _sdk_text(sdk_modern, "sample")
    [asked] = sdk_modern["out"]["samplings"]
    assert "What is six times seven?" in asked["messages"][0]["content"]["text"]


def test_sdk_modern_roots_answered_by_the_client(sdk_modern: dict[str, Any]) -> None:
    assert sdk_modern["root"] in _sdk_text(sdk_modern, "roots")
    assert sdk_modern["out"]["rootsAnswered"] == [[sdk_modern["root"]]]


def test_sdk_modern_progress_reaches_the_client(sdk_modern: dict[str, Any]) -> None:
    _sdk_text(sdk_modern, "stepped")
    assert sdk_modern["stepped"]["progress"] == [[step, STEPS, None] for step in range(1, STEPS + 1)]


def test_sdk_modern_logs_reach_the_client(sdk_modern: dict[str, Any]) -> None:
    """The SDK client asks for ``info`` on every request, whatever the server declared; what the
    upstream logs within a call reaches that call, when the upstream declares logging (the proxy
    then offers it). An upstream that declares none offers none through the proxy: what it logs
    anyway is not passed on (nothing crosses that the proxy did not declare)."""
    logs = sdk_modern["out"]["logs"]
    upstream: Upstream = sdk_modern["upstream"]
    expected = [("info", logger, data) for logger, data in upstream.logs] if upstream.declares_logging else []
    assert [(log["level"], log["logger"], log["data"]) for log in logs] == expected


# -- proof 4: what FastMCP's proxy refuses, through ours -------------------------------------------

PROOF4_STEPS: list[tuple[str, str, dict[str, Any]]] = [
    ("answers", "answer_elicitation", {"answers": [ELICIT_ANSWER]}),
    ("samples", "answer_sampling", {"answers": [SAMPLE_ANSWER]}),
    ("elicit", "call_tool", {"name": EVERYTHING.elicit[0], "arguments": EVERYTHING.elicit[1]}),
    ("sample", "call_tool", {"name": EVERYTHING.sample[0], "arguments": EVERYTHING.sample[1]}),
]


def _fastmcp_version() -> str:
    need("fastmcp")
    try:
        from fastmcp.server import create_proxy  # noqa: F401  (the contrast needs it)
    except ImportError as exc:
        pytest.fail(f"FastMCP's create_proxy is not importable ({exc}): pip install -e '.[dev]'")
    return importlib.metadata.version("fastmcp")


@pytest.fixture(scope="module")
def through_ours() -> dict[str, Any]:
    """The SDK client in its handshake mode launches our bridge over stdio in front of server-everything."""
    need("mcp", "npm")
    bridge = [sys.executable, str(HERE / "proxy_peer.py"), "--", *EVERYTHING.command]
    return _sdk_run("legacy", ["--", *bridge], PROOF4_STEPS)


@pytest.fixture(scope="module")
def through_fastmcp() -> dict[str, Any]:
    """The same client and plan through FastMCP's ``create_proxy`` in front of the same server."""
    need("mcp", "npm")
    version = _fastmcp_version()
    bridge = [sys.executable, str(HERE / "fastmcp_proxy_peer.py"), "--", *EVERYTHING.command]
    return {"version": version, **_sdk_run("legacy", ["--", *bridge], PROOF4_STEPS)}


def test_handshake_sdk_client_answers_server_everything_through_ours(through_ours: dict[str, Any]) -> None:
    out = through_ours["out"]
    assert out["protocolVersion"] == "2025-11-25"
    assert out["serverInfo"]["name"] == "mcp-servers/everything"  # the upstream's, passed on
    assert EVERYTHING.elicited in _sdk_text(through_ours, "elicit")
    assert MODEL_TEXT in _sdk_text(through_ours, "sample")
    assert len(out["elicitations"]) == 1 and len(out["samplings"]) == 1  # asked of the SDK client's callbacks


def test_fastmcp_proxy_refuses_the_same_calls(through_fastmcp: dict[str, Any]) -> None:
    """The contrast, measured rather than told: each call's result is FastMCP's error and the
    client is never asked. If this fails, FastMCP's proxy has learnt to carry the reverse
    channel: the claim in issue #29 and docs/bridge.md must change with it."""
    version = through_fastmcp["version"]
    for step, method in (("elicit", "elicitation/create"), ("sample", "sampling/createMessage")):
        result = through_fastmcp[step]
        text = "\n".join(item.get("text", "") for item in result.get("content", []))
        assert result.get("isError") is True, f"FastMCP {version}: {step}: {result}"
        assert "-32603" in text and method in text and NO_BACK_CHANNEL in text, f"FastMCP {version}: {text}"
    assert through_fastmcp["out"]["elicitations"] == [] and through_fastmcp["out"]["samplings"] == []
