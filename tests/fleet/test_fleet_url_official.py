"""URL elicitation by the official SDK clients on a fleet, the page in headless Chromium, each
step on a different worker (issue #14, "Proven by").

A real ``redis-server``, four worker processes (``_url_official_server.py``, each on its own port
running ``server.run_http(port=..., redis=URL)``) and nginx passing every request to the next
worker in turn; the pages' public address is nginx's. The clients, each in a subprocess of its
own, alone on the fleet: the official Python SDK client (mcp 2.3.0, ``tests/peers/pysdk_client.py``)
in ``mode="legacy"`` (handshake era: ``elicitation/create`` with ``mode: "url"``, then
``notifications/elicitation/complete``) and in ``mode="2026-07-28"`` (its MRTR loop answers the
URL input request and retries; the retry waits for the flow), and the TypeScript SDK client
(1.32.2, ``tests/peers/ts_client.mjs``; handshake era only).

Each client consents to the link at once (the spec's ``accept``: consent only). The test plays the
person in Chromium: the landing page, the confirmation code's POST (the code is the one the
client was shown) and the return from the stand-in provider to the flow handler's callback. It
reads where nginx's round robin stands (``GET /whoami``) once the client is quiet (its consent
has reached the fleet), and steers each step: three steps, three workers, none of them the flow's
owner nor the one before (for the first, the worker that took the consent), as the workers'
request logs show; the handler's two steps ran on the owner. The call ends with ``accept`` in the
client, and in the handshake era ``notifications/elicitation/complete`` reaches it. Then the
client's second call is refused at consent (``decline``, or ``cancel`` in the stateless era), the
answer reaching another worker than the one that asked, and the call ends with that.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from backchannel.testing import run
from peers.paths import NODE22, PEERS_DIR, TESTS_DIR, have_npm_peers, have_pysdk

pytestmark = pytest.mark.interop

if not (os.path.isfile("/usr/bin/chromium") and os.access("/usr/bin/chromium", os.X_OK)):
    pytest.skip("/usr/bin/chromium is missing: run tests/peers/install-browser.sh", allow_module_level=True)
pytest.importorskip("playwright.async_api", reason="playwright (the dev extra) is not installed")
_services = pytest.importorskip("_services")
try:
    _services._program("redis-server"), _services._program("nginx")
except RuntimeError as missing:
    pytest.skip(str(missing), allow_module_level=True)

from _url_fleet import code_in, token_of  # noqa: E402 - after the skips: they need what is skipped for
from _url_official_fleet import (  # noqa: E402
    Peer,
    RoundRobin,
    UrlProcessFleet,
    chromium,
    through_the_browser,
    until,
    url_official_fleet,
)

ACCEPT = {"action": "accept"}
#: What each client answers to the second link: the consent refused, in each era's word for it.
REFUSAL = {"legacy": "decline", "2026-07-28": "cancel", "ts": "decline"}
HANDSHAKE = ("legacy", "ts")


@pytest.fixture(scope="module")
def fleet() -> Iterator[UrlProcessFleet]:
    with url_official_fleet() as running:
        yield running


def start(client: str, fleet: UrlProcessFleet, tmp: Path) -> tuple[Peer, int]:
    """The client, running its two calls of ``connect``; and the step number of its first call."""
    record = tmp / "record.jsonl"
    answers = [ACCEPT, {"action": REFUSAL[client]}]
    if client == "ts":
        if not have_npm_peers():
            pytest.skip("npm peers not installed (run tests/peers/install.sh)")
        plan = {"url": True, "record": str(record), "answers": answers, "calls": [{"name": "connect"}] * 2}
        argv = [str(NODE22), str(PEERS_DIR / "ts_client.mjs"), json.dumps(plan), "--url", fleet.url]
        return Peer(argv, record, TESTS_DIR), 0
    if not have_pysdk():
        pytest.skip("the official Python SDK (mcp==2.3.0) is not installed")
    steps = [
        {"op": "answer_elicitation", "args": {"answers": answers}},
        *[{"op": "call_tool", "args": {"name": "connect", "arguments": {}}}] * 2,
    ]
    argv = [
        sys.executable, str(PEERS_DIR / "pysdk_client.py"), "--mode", client, "--exclude-unset",
        "--record", str(record), "--timeout", "40", "--plan", json.dumps(steps), "--url", fleet.url,
    ]  # fmt: skip
    return Peer(argv, record, TESTS_DIR.parent), 1


def calls(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in entries if any(m.get("tool") == "connect" for m in e.get("rpc", []))]


def answers(entries: list[dict[str, Any]], action: str) -> list[dict[str, Any]]:
    return [e for e in entries if any("answer" in m and m["action"] == action for m in e.get("rpc", []))]


def text_of(result: dict[str, Any]) -> str:
    assert "error" not in result and not result.get("isError"), result
    return str(result["content"][0]["text"])


@pytest.mark.parametrize("client", ["legacy", "2026-07-28", "ts"])
def test_url_elicitation_with_each_browser_step_on_another_worker(
    client: str, fleet: UrlProcessFleet, tmp_path: Path
) -> None:
    since = time.monotonic_ns()
    peer, first = start(client, fleet, tmp_path)
    handshake = client in HANDSHAKE

    def consented() -> dict[str, Any] | None:
        """The client's last request before the browser is done, once it reached the fleet: the
        handshake era's answer (its GET stream already open), the stateless era's retry (it
        waits on the flow). Until then nginx's rotation moves under the test's feet."""
        entries = fleet.entries(since)
        if handshake:
            opened = any(e["method"] == "GET" and e["path"] == "/mcp" for e in entries)
            return next(iter(answers(entries, "accept")), None) if opened else None
        made = calls(entries)
        return made[1] if len(made) == 2 else None

    async def body() -> None:
        async with chromium(tmp_path) as new_page, contextlib.aclosing(RoundRobin(fleet.base)) as robin:
            page = await new_page()
            asked = (await peer.next("elicitation", 1))["params"]
            assert asked["mode"] == "url" and asked["url"].startswith(fleet.base + "/elicit/")
            assert ("elicitationId" in asked) is handshake
            owner = token_of(asked["url"]).split(".", 1)[0]
            consent = await until(consented, "the client's consent at the fleet", lambda: peer.proc.poll() is None)
            await robin.learn()
            # Round the ring from the worker that took the consent, skipping the owner: the first
            # step is not on the consent's worker, and that worker comes last.
            ring = [robin.after(consent["worker"], k) for k in (1, 2, 3, 4)]
            steps = [worker for worker in ring if worker != owner][:3]

            await through_the_browser(page, robin, steps, asked["url"], code_in(asked["message"]))
            assert page.url.startswith(fleet.base + "/elicit/callback?state=" + owner + ".")

            accepted = text_of(await peer.result(first))
            if handshake:
                note = await peer.next("notification", 1)
                assert note["method"] == "notifications/elicitation/complete"
                assert note["params"] == {"elicitationId": asked["elicitationId"]}
            refused_link = (await peer.next("elicitation", 2))["params"]
            refused = text_of(await peer.result(first + 1))

        entries = fleet.entries(since)
        pages = [(e["worker"], e["method"]) for e in entries if e.get("path", "").startswith("/elicit/")]
        assert pages == [(steps[0], "GET"), (steps[1], "POST"), (steps[2], "GET")], entries
        workers = [owner, consent["worker"]] + [worker for worker, _ in pages]
        assert owner not in workers[1:] and all(a != b for a, b in pairwise(workers)), workers
        assert [(e["worker"], e["grant"]) for e in entries if "grant" in e] == [(owner, "begin"), (owner, "finish")]

        made = calls(entries)  # the tools/call requests of connect, both calls, retries included
        assert made[0]["worker"] == owner  # the flow's owner is where its tool ran first
        if handshake:
            assert len(made) == 2 and accepted == f"accept@{fleet.name_of(owner)}"
            assert answers(entries, "accept") == [consent]  # forwarded to the asker from another worker
            (refusal,) = answers(entries, REFUSAL[client])
            assert refused == f"{REFUSAL[client]}@{fleet.name_of(made[1]['worker'])}"
            assert refusal["worker"] != made[1]["worker"]
        else:  # each call: the round that asks, then the retry with the answer, on the next worker
            assert len(made) == 4 and made[1] == consent and made[2]["worker"] != made[3]["worker"]
            assert accepted == f"accept@{fleet.name_of(made[1]['worker'])}"
            assert token_of(refused_link["url"]).startswith(made[2]["worker"] + ".")
            assert refused == f"cancel@{fleet.name_of(made[3]['worker'])}"

    try:
        run(body, timeout=60)
        out = peer.finish()
    except BaseException:
        print(peer.stop(), fleet.tail(), sep="\n")
        raise
    assert [params["url"].startswith(fleet.base + "/elicit/") for params in out["elicitations"]] == [True, True]
    if handshake:  # one completion: the refused flow never completed
        assert [n["method"] for n in out["notifications"]] == ["notifications/elicitation/complete"]
    else:
        assert out["notifications"] == []
