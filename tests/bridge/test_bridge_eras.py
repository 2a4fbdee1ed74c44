"""The bridge on the wire, in every pair of eras: a client of either era, the ``Proxy``, and an
upstream backchannel server (``upstream_server.py``, served in this process) of either era.

Each test reads what crossed the downstream wire (a ``Tap`` on the client's transport) and, where
the issue speaks of the upstream hop, what crossed the upstream one (a ``Tap`` on the proxy's
client of the upstream): questions arrive in the form of the downstream client's era, answers
reach the upstream in the form of its own, and nothing is lost or invented on the way.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from backchannel import Client, Context
from backchannel.bridge import Proxy, UpstreamSpec
from backchannel.testing import Tap, connected, within
from backchannel.types.errors import MCPError, RequestError
from backchannel.types.versions import HANDSHAKE_VERSIONS, STATELESS_VERSIONS
from bridge.upstream_server import build

ERAS = ("handshake", "stateless")
#: A bound on each test's whole run (a hang fails the test instead of the suite).
BOUND = 60.0
PAIRS = [(down, up) for down in ERAS for up in ERAS]
VERSIONS = {"handshake": HANDSHAKE_VERSIONS, "stateless": STATELESS_VERSIONS}


def person(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Ada", "happy": True}}


def model(params: dict[str, Any]) -> dict[str, Any]:
    asked = params["messages"][0]["content"]["text"]
    return {"role": "assistant", "content": {"type": "text", "text": f"model read {asked}"}, "model": "m"}


def run(test: Callable[..., Awaitable[None]]) -> Callable[..., None]:
    """The async test ``test`` as a plain one, run in a loop of its own within ``BOUND`` seconds."""

    @functools.wraps(test)
    def running(*args: Any, **kwargs: Any) -> None:
        asyncio.run(asyncio.wait_for(test(*args, **kwargs), BOUND))

    return running


@contextlib.asynccontextmanager
async def bridged(down: str, up: str, **options: Any) -> AsyncIterator[tuple[Client, Tap, Tap, Any]]:
    """A client of era ``down`` -> the proxy -> an upstream that speaks only era ``up``; the taps
    on the client's wire and on the proxy's upstream wire, and the upstream server."""
    upstream = build(tuple(VERSIONS[up]))
    up_tap, down_tap = Tap(), Tap()
    proxy = Proxy(UpstreamSpec(server=upstream, wrap=up_tap.around))
    options = {"elicitation": person, "sampling": model, "roots": ["/srv/data"], **options}
    try:
        async with connected(proxy, down, wrap_client=down_tap.around, **options) as client:
            assert client.era == down
            yield client, down_tap, up_tap, upstream
    finally:
        await proxy.upstream.aclose()


def text(result: Any) -> str:
    return str(result.content[0].text)


def question_methods(tap: Tap, era: str) -> list[str]:
    """The questions the client was asked: requests (handshake era) or inputRequests (stateless era)."""
    if era == "handshake":
        return [m["method"] for m in tap.received if "method" in m and "id" in m]
    asked: list[str] = []
    for message in tap.received:
        result = message.get("result") or {}
        if result.get("resultType") == "input_required":
            asked += [request["method"] for request in result.get("inputRequests", {}).values()]
    return asked


@pytest.mark.parametrize(("down", "up"), PAIRS)
@run
async def test_questions_cross_in_the_clients_era(down: str, up: str) -> None:
    async with bridged(down, up) as (client, down_tap, up_tap, _):
        assert text(await client.call_tool("ask", {})) == "accept:Ada"
        assert text(await client.call_tool("ask_twice", {})) == "Ada+Ada"
        assert text(await client.call_tool("sample", {"prompt": "the sea"})) == "model read the sea"
        assert text(await client.call_tool("roots", {})) == "file:///srv/data"
    asked = question_methods(down_tap, down)
    assert asked.count("elicitation/create") == 3 and "sampling/createMessage" in asked and "roots/list" in asked
    # Upstream, the questions were asked in the upstream's own era.
    if up == "handshake":
        assert {m["method"] for m in up_tap.received if "id" in m and "method" in m} >= {
            "elicitation/create",
            "sampling/createMessage",
            "roots/list",
        }
    else:
        assert not [m for m in up_tap.received if "id" in m and "method" in m]
        retries = [m for m in up_tap.written if m.get("method") == "tools/call" and "inputResponses" in m["params"]]
        assert len(retries) >= 4


@pytest.mark.parametrize(("down", "up"), PAIRS)
@run
async def test_progress_is_relayed_in_order_before_the_answer(down: str, up: str) -> None:
    seen: list[float] = []
    async with bridged(down, up) as (client, down_tap, _, _):
        result = await client.call_tool("progress", {"steps": 4}, on_progress=lambda p: seen.append(p.progress))
        assert text(result) == "done"
    assert seen == [1, 2, 3, 4]
    call = next(m for m in down_tap.written if m.get("method") == "tools/call")
    token = call["params"]["_meta"]["progressToken"]
    positions = [i for i, m in enumerate(down_tap.received) if m.get("method") == "notifications/progress"]
    assert all(down_tap.received[i]["params"]["progressToken"] == token for i in positions)
    answer = next(i for i, m in enumerate(down_tap.received) if m.get("id") == call["id"])
    assert len(positions) == 4 and max(positions) < answer


@pytest.mark.parametrize(("down", "up"), PAIRS)
@run
async def test_logs_at_the_clients_level_and_the_level_goes_upstream(down: str, up: str) -> None:
    logged: list[str] = []
    async with bridged(down, up, log_level="warning", on_log=lambda p: logged.append(p["level"])) as (
        client,
        _,
        up_tap,
        _,
    ):
        assert text(await client.call_tool("chatty", {})) == "logged"
        await within(lambda: len(logged) >= 2, "the warning and the error")
    assert logged == ["warning", "error"]
    if up == "handshake":
        assert [m["params"]["level"] for m in up_tap.written if m.get("method") == "logging/setLevel"] == ["warning"]
    else:
        call = next(m for m in up_tap.written if m.get("method") == "tools/call")
        assert call["params"]["_meta"]["io.modelcontextprotocol/logLevel"] == "warning"
    # The upstream itself sent nothing below the level.
    assert {m["params"]["level"] for m in up_tap.received if m.get("method") == "notifications/message"} <= {
        "warning",
        "error",
    }


@pytest.mark.parametrize(("down", "up"), PAIRS)
@run
async def test_a_cancelled_call_is_cancelled_upstream(down: str, up: str) -> None:
    async with bridged(down, up) as (client, _, up_tap, _):
        call = asyncio.ensure_future(client.call_tool("slow", {}))
        await within(lambda: up_tap.tool_calls_written("slow"), "the call to reach the upstream", timeout=10)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await within(lambda: up_tap.notifications_written("notifications/cancelled"), "the upstream cancel", timeout=10)
        upstream_id = up_tap.tool_calls_written("slow")[0]["id"]
        assert up_tap.notifications_written("notifications/cancelled")[0]["params"]["requestId"] == upstream_id
        recorded = ""
        for _ in range(50):  # the upstream's handler stops: its record says so (bounded)
            recorded = text(await client.call_tool("cancellations", {}))
            if recorded:
                break
            await asyncio.sleep(0.02)
        assert recorded == str(upstream_id)
        assert not up_tap.responses_received(upstream_id)  # no answer came for it


@pytest.mark.parametrize(("down", "up"), PAIRS)
@run
async def test_errors_keep_their_code_and_data(down: str, up: str) -> None:
    async with bridged(down, up) as (client, _, _, _):
        with pytest.raises(RequestError) as failure:
            await client.call_tool("refuse", {})
    assert failure.value.code == -32099
    assert failure.value.data == {"why": "a test"}
    assert "refused on purpose" in failure.value.message


@run
async def test_an_upstreams_request_state_is_sealed_inside_ours_and_returned_byte_for_byte() -> None:
    async with bridged("stateless", "stateless") as (client, down_tap, up_tap, _):
        assert text(await client.call_tool("ask", {})) == "accept:Ada"
    theirs = [m["result"]["requestState"] for m in up_tap.received if (m.get("result") or {}).get("requestState")]
    ours = [m["result"]["requestState"] for m in down_tap.received if (m.get("result") or {}).get("requestState")]
    assert len(theirs) == len(ours) == 1
    assert theirs[0] not in ours[0]  # the client never sees the upstream's state
    retry = next(m for m in up_tap.written if "inputResponses" in m.get("params", {}))
    assert retry["params"]["requestState"] == theirs[0]
    assert down_tap.tool_calls_written("ask")[-1]["params"]["requestState"] == ours[0]


@run
async def test_a_state_for_another_call_is_refused() -> None:
    async with bridged("stateless", "handshake") as (client, down_tap, _, _):
        assert text(await client.call_tool("ask", {})) == "accept:Ada"
        state = next(
            m["result"]["requestState"] for m in down_tap.received if (m.get("result") or {}).get("requestState")
        )
        with pytest.raises(RequestError) as failure:  # the state is bound to the call it was made for
            await client.request("tools/call", {"name": "ask_twice", "arguments": {}, "requestState": state})
        assert failure.value.code == -32602
        with pytest.raises(RequestError) as gone:  # the held call it named has ended
            await client.request("tools/call", {"name": "ask", "arguments": {}, "requestState": state})
        assert gone.value.code == -32602 and "gone" in gone.value.message


@pytest.mark.parametrize("up", ERAS)
@run
async def test_list_changes_and_resource_updates_reach_a_handshake_era_client(up: str) -> None:
    async with bridged("handshake", up) as (client, down_tap, _, upstream):
        await client.request("resources/subscribe", {"uri": "memo://note"})
        upstream.add_tool(lambda: "new", name="added")
        await within(lambda: down_tap.notifications_received("notifications/tools/list_changed"), "the list change")
        assert "added" in {tool.name for tool in await client.list_tools()}
        upstream.notify_resource_updated("memo://note")
        await within(lambda: down_tap.notifications_received("notifications/resources/updated"), "the update")
    assert down_tap.notifications_received("notifications/resources/updated")[0]["params"]["uri"] == "memo://note"


@run
async def test_capabilities_are_carried_honestly() -> None:
    """The upstream session declares what the downstream client declared, and nothing else."""
    upstream = build(tuple(HANDSHAKE_VERSIONS))
    up_tap = Tap()
    proxy = Proxy(UpstreamSpec(server=upstream, wrap=up_tap.around))
    try:
        async with connected(proxy, "handshake", elicitation=person) as client:
            assert "tools" in client.server_capabilities
            with pytest.raises(RequestError):  # no sampling declared downstream: the upstream may not ask
                await client.call_tool("sample", {"prompt": "x"})
    finally:
        await proxy.upstream.aclose()
    initialize = up_tap.requests_written("initialize")[0]
    assert initialize["params"]["capabilities"] == {"elicitation": {"form": {}}}


@run
async def test_an_unreachable_upstream_is_one_clear_error() -> None:
    proxy = Proxy(UpstreamSpec(command=["/nonexistent/upstream-server", "--stdio"]))
    with pytest.raises(Exception, match="upstream /nonexistent/upstream-server --stdio is unavailable"):
        async with connected(proxy, "handshake"):
            pass
    await proxy.upstream.aclose()


@pytest.mark.parametrize(("down", "up"), PAIRS)
@run
async def test_a_task_in_the_form_of_each_side_s_era(down: str, up: str) -> None:
    """The client follows a task of its era's form (2025-11-25 ``params.task`` / the 2026-07-28
    extension's ``resultType: "task"``); upstream the call is a task of the upstream's own form,
    and its question reaches the client through the task."""
    async with bridged(down, up) as (client, down_tap, up_tap, _):
        task = await client.start_task("job", {"label": "the report"})
        assert task.task_id is not None
        result = await task
        assert text(result) == "the report by Ada"
    call = down_tap.tool_calls_written("job")[0]
    answer = down_tap.responses_received(call["id"])[0]["result"]
    if down == "handshake":
        assert call["params"]["task"] == {} and "task" in answer
    else:
        assert answer["resultType"] == "task"
    up_call = up_tap.tool_calls_written("job")[0]
    up_answer = up_tap.responses_received(up_call["id"])[0]["result"]
    if up == "handshake":
        assert "task" in up_call["params"] and "task" in up_answer
    else:
        assert up_answer["resultType"] == "task"
    assert "elicitation/create" in question_methods(down_tap, down) or any(
        "input_required" in str(m) for m in down_tap.received
    )


def url_upstream(versions: tuple[str, ...], completions: list[str]) -> Any:
    """The test upstream plus ``needs_page`` (a handshake-era -32042 until its page is done) and
    ``open_page`` (a URL question asked as a request or an ``inputRequests`` entry)."""
    upstream = build(versions)
    done: dict[str, bool] = {}

    @upstream.tool()
    def needs_page() -> str:
        if not done:
            raise MCPError(
                "open the page first",
                code=-32042,
                data={"elicitations": [{"mode": "url", "elicitationId": "page-1", "url": URL, "message": "Sign"}]},
            )
        return "signed"

    @upstream.tool()
    async def open_page(ctx: Context) -> str:
        answer = await ctx.request_input(
            "elicitation/create", {"mode": "url", "message": "Sign", "url": URL}, "elicitation.url"
        )
        return f"page {answer['action']}"

    def finish() -> None:  # the person finished on the page: the upstream says so on its sessions
        done["page-1"] = True
        for connection in list(upstream._connections):
            connection.notify("notifications/elicitation/complete", {"elicitationId": "page-1"})
        completions.append("page-1")

    upstream.finish_page = finish  # type: ignore[attr-defined]
    return upstream


URL = "http://127.0.0.1:9/sign"


@run
async def test_a_handshake_upstreams_32042_reaches_a_stateless_client_as_url_questions() -> None:
    completions: list[str] = []
    upstream = url_upstream(tuple(HANDSHAKE_VERSIONS), completions)
    down_tap = Tap()
    proxy = Proxy(UpstreamSpec(server=upstream))
    try:
        async with connected(proxy, "stateless", wrap_client=down_tap.around, elicitation=person) as client:
            first = await client.connection.request("tools/call", {"name": "needs_page", "arguments": {}})
            assert first["resultType"] == "input_required"
            (question,) = first["inputRequests"].values()
            assert question["params"]["mode"] == "url" and question["params"]["url"] == URL
            assert "elicitationId" not in question["params"]  # 2026-07-28 has none
            key = next(iter(first["inputRequests"]))
            retry = {"name": "needs_page", "arguments": {}, "requestState": first["requestState"]}
            upstream.finish_page()
            done = await client.connection.request(
                "tools/call", {**retry, "inputResponses": {key: {"action": "accept"}}}
            )
            assert done["content"][0]["text"] == "signed"
    finally:
        await proxy.upstream.aclose()
    assert not [m for m in down_tap.received if (m.get("error") or {}).get("code") == -32042]


@run
async def test_a_url_question_gets_an_id_and_its_completion_for_a_handshake_era_client() -> None:
    """A stateless upstream's URL question has no id; a 2025-11-25 client needs one, and hears it
    complete when the upstream's call ends."""
    upstream = url_upstream(tuple(STATELESS_VERSIONS), [])
    down_tap = Tap()
    proxy = Proxy(UpstreamSpec(server=upstream))
    try:
        async with connected(
            proxy, "handshake", wrap_client=down_tap.around, url_elicitation=lambda asked: "accept"
        ) as client:
            assert text(await client.call_tool("open_page", {})) == "page accept"
            await within(lambda: down_tap.notifications_received("notifications/elicitation/complete"), "completion")
    finally:
        await proxy.upstream.aclose()
    (asked,) = down_tap.requests_received("elicitation/create")
    elicitation_id = asked["params"]["elicitationId"]
    (complete,) = down_tap.notifications_received("notifications/elicitation/complete")
    assert complete["params"] == {"elicitationId": elicitation_id}


@run
async def test_an_upstreams_completion_goes_only_to_the_client_it_asked() -> None:
    upstream = url_upstream(tuple(HANDSHAKE_VERSIONS), [])
    asked_tap, other_tap = Tap(), Tap()
    proxy = Proxy(UpstreamSpec(server=upstream))
    try:
        async with (
            connected(proxy, "handshake", wrap_client=other_tap.around, elicitation=person),
            connected(proxy, "handshake", wrap_client=asked_tap.around, url_elicitation=lambda a: "accept") as asked,
        ):
            with pytest.raises(RequestError):  # -32042 passes as it is to a handshake-era client ...
                await asked.connection.request("tools/call", {"name": "needs_page", "arguments": {}})
            assert text(await asked.call_tool("open_page", {})) == "page accept"
            (question,) = asked_tap.requests_received("elicitation/create")
            upstream_id = question["params"]["elicitationId"]
            for connection in list(upstream._connections):  # the upstream says that flow is done
                connection.notify("notifications/elicitation/complete", {"elicitationId": upstream_id})
            await within(lambda: asked_tap.notifications_received("notifications/elicitation/complete"), "it")
    finally:
        await proxy.upstream.aclose()
    assert not other_tap.notifications_received("notifications/elicitation/complete")


@pytest.mark.parametrize("up", ERAS)
@run
async def test_a_stateless_clients_listen_stream_hears_the_upstreams_changes(up: str) -> None:
    """``subscriptions/listen`` downstream becomes ``resources/subscribe`` (handshake upstream) or a
    listen stream of its own (stateless upstream) upstream, and list changes either way."""
    heard: list[Any] = []
    async with (
        bridged("stateless", up) as (client, _, up_tap, upstream),
        client.listen("memo://note", tools=True) as events,
    ):
        upstream.add_tool(lambda: "new", name="added")
        upstream.notify_resource_updated("memo://note")
        async for event in events:
            heard.append(event)
            if {type(e).__name__ for e in heard} >= {"ListChanged", "ResourceUpdated"}:
                break
    assert any(getattr(e, "uri", None) == "memo://note" for e in heard)
    if up == "handshake":
        assert [m["params"]["uri"] for m in up_tap.written if m.get("method") == "resources/subscribe"] == [
            "memo://note"
        ]
    else:
        assert any(m.get("method") == "subscriptions/listen" for m in up_tap.written)
