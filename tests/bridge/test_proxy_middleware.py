"""A standalone ``Proxy`` runs the middleware added to it (issue #30: middleware wrap every request
and notification a server receives, and every question it sends), in each downstream era: the
client's requests, the questions the upstream asks through the proxy and their answers, and the
client's notifications; a middleware may answer in the upstream's place. Before, the proxy's own
request path left its middleware out, and a notification's chain was dropped unawaited.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from backchannel.bridge import Proxy, UpstreamSpec
from backchannel.middleware import Audit
from backchannel.server.middleware import Call, CallNext
from backchannel.testing import Tap, connected, within
from backchannel.types.versions import HANDSHAKE_VERSIONS, STATELESS_VERSIONS
from bridge.upstream_server import build

ERAS = ("handshake", "stateless")
BOUND = 60.0


def bounded(test: Callable[..., Awaitable[None]]) -> Callable[..., None]:
    @functools.wraps(test)
    def running(*args: Any, **kwargs: Any) -> None:
        asyncio.run(asyncio.wait_for(test(*args, **kwargs), BOUND))

    return running


def person(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Ada", "happy": True}}


@pytest.mark.parametrize("down", ERAS)
@bounded
async def test_a_proxy_s_middleware_see_the_calls_the_questions_and_the_notifications(down: str) -> None:
    upstream = build(tuple(HANDSHAKE_VERSIONS))
    proxy = Proxy(UpstreamSpec(server=upstream))
    audit = Audit()
    seen: list[tuple[str, str, str]] = []

    @proxy.add_middleware
    async def noting(call: Call, call_next: CallNext) -> Any:
        seen.append((call.kind, call.direction, call.method))
        return await call_next(call)

    proxy.add_middleware(audit)
    tap = Tap()
    try:
        async with connected(proxy, down, wrap_client=tap.around, elicitation=person, roots=["/srv"]) as client:
            assert str((await client.call_tool("ask", {})).content[0].text) == "accept:Ada"
            if down == "handshake":
                await client.set_roots(["/srv/other"])  # notifications/roots/list_changed
                await within(lambda: ("notification", "received", "notifications/roots/list_changed") in seen)
    finally:
        await proxy.upstream.aclose()
    assert ("request", "received", "tools/call") in seen
    asked, answered = [event for event in audit.events if event.method == "elicitation/create"]
    assert (asked.kind, answered.kind) == ("asked", "answered")
    assert answered.body == person({})
    if down == "handshake":
        question = next(m for m in tap.received if m.get("method") == "elicitation/create")
        assert question["params"] == asked.body
    else:
        first = next(m["result"] for m in tap.received if m.get("result", {}).get("resultType") == "input_required")
        assert first["inputRequests"][asked.key]["params"] == asked.body


@pytest.mark.parametrize("down", ERAS)
@bounded
async def test_a_proxy_s_middleware_may_answer_in_the_upstream_s_place(down: str) -> None:
    upstream = build(tuple(STATELESS_VERSIONS))
    up_tap = Tap()
    proxy = Proxy(UpstreamSpec(server=upstream, wrap=up_tap.around))

    @proxy.add_middleware
    async def canned(call: Call, call_next: CallNext) -> Any:
        if call.method == "tools/call" and call.params.get("name") == "ask":
            return {"content": [{"type": "text", "text": "from the middleware"}]}
        return await call_next(call)

    try:
        async with connected(proxy, down, elicitation=person) as client:
            assert str((await client.call_tool("ask", {})).content[0].text) == "from the middleware"
    finally:
        await proxy.upstream.aclose()
    assert not [m for m in up_tap.written if m.get("method") == "tools/call"]  # the upstream was not asked
