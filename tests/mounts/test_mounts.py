"""``Server.mount`` on the wire, in both eras, with the upstream in this process (a ``Server``) and
over stdio (a command, served by a bridge ``Proxy``) (issue #30, "Composition"): the naming
(tool ``ev_name``, URI ``ev+scheme://rest``, both ways), a form through the mount, completions,
a mount's task, list changes and resource updates reaching the client, and a mount that is down.

Each test reads what the client read (a ``Tap`` on its transport), not what the objects believe.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from backchannel import Server
from backchannel.client.events import ListChanged, ResourceUpdated
from backchannel.types.errors import RequestError
from mounts._mounting import ERAS, KINDS, answers_to, bounded, client_of, mount_upstream, text

PAIRS = [(era, kind) for era in ERAS for kind in KINDS]
#: Bounds on waits for what a test is owed (generous: a loaded machine).
WAIT = 20.0


def _gateway(kind: str, **options: Any) -> Server:
    gateway = Server("gateway", **options)

    @gateway.tool()
    def hello() -> str:
        """The gateway's own tool."""
        return "hi"

    mount_upstream(gateway, kind)
    return gateway


@pytest.mark.parametrize(("era", "kind"), PAIRS)
@bounded
async def test_a_mount_s_items_are_named_under_its_prefix_and_reached_by_those_names(era: str, kind: str) -> None:
    async with client_of(_gateway(kind), era) as (client, tap):
        tools = {tool.name for tool in await client.list_tools()}
        assert "hello" in tools and {"ev_echo", "ev_ask", "ev_job", "ev_bump", "ev_slow"} <= tools
        assert all(name == "hello" or name.startswith("ev_") for name in tools)
        assert text(await client.call_tool("hello")) == "hi"
        assert text(await client.call_tool("ev_echo", {"text": "through"})) == "through"
        assert text(await client.call_tool("ev_ask", {})) == "accept:Ada"  # a form, in the client's era
        assert {prompt.name for prompt in await client.list_prompts()} >= {"ev_greet", "ev_trip"}
        prompt = await client.get_prompt("ev_trip", {"city": "Oslo"})
        assert prompt.messages[0].content.text == "Pack for Oslo"  # type: ignore[union-attr]
        with pytest.raises(RequestError) as refused:
            await client.call_tool("echo", {"text": "x"})  # the mount's own name is not served bare
        assert refused.value.code == -32602
    listed = answers_to(tap, "tools/list")
    assert listed and all(tool["name"] == "hello" or tool["name"].startswith("ev_") for tool in listed[0]["tools"])


@pytest.mark.parametrize(("era", "kind"), PAIRS)
@bounded
async def test_a_mount_s_uris_are_prefixed_and_read_back_as_the_client_named_them(era: str, kind: str) -> None:
    async with client_of(_gateway(kind), era) as (client, tap):
        uris = {str(resource.uri) for resource in await client.list_resources()}
        assert uris == {"ev+memo://note", "ev+memo://counter"}
        templates = {template.uri_template for template in await client.list_resource_templates()}
        assert templates == {"ev+file:///{path}"}
        note = await client.read_resource("ev+memo://note")
        assert note.contents[0].text == "a note"  # type: ignore[union-attr]
        found = await client.read_resource("ev+file:///beta.txt")
        assert found.contents[0].text == "the file beta.txt"  # type: ignore[union-attr]
    # The contents name what was read as the client named it: the URI goes back the way it came.
    assert [answer["contents"][0]["uri"] for answer in answers_to(tap, "resources/read")] == [
        "ev+memo://note",
        "ev+file:///beta.txt",
    ]


@pytest.mark.parametrize(("era", "kind"), PAIRS)
@bounded
async def test_completion_through_a_mount(era: str, kind: str) -> None:
    async with client_of(_gateway(kind), era) as (client, tap):
        cities = await client.complete({"type": "ref/prompt", "name": "ev_trip"}, ("city", "P"))
        assert cities.values == ["Paris", "Pune"]
        paths = await client.complete({"type": "ref/resource", "uri": "ev+file:///{path}"}, ("path", "b"))
        assert paths.values == ["beta.txt"]
    assert [answer["completion"]["values"] for answer in answers_to(tap, "completion/complete")] == [
        ["Paris", "Pune"],
        ["beta.txt"],
    ]


@pytest.mark.parametrize(("era", "kind"), PAIRS)
@bounded
async def test_a_mount_s_task_is_followed_through_the_mounting_server(era: str, kind: str) -> None:
    """The call made a task of the mount's; ``tasks/*`` about it reach that mount (by the task's id)."""
    async with client_of(_gateway(kind), era) as (client, tap):
        task = await client.start_task("ev_job", {"label": "the report"})
        assert task.task_id is not None
        assert text(await asyncio.wait_for(task, WAIT)) == "the report by Ada"  # its form, through the task
    follow = [m for m in tap.written if str(m.get("method", "")).startswith("tasks/")]
    assert follow and all(m["params"]["taskId"] == task.task_id for m in follow)
    answered = {m["id"] for m in tap.received if "id" in m and "method" not in m and "result" in m}
    assert {m["id"] for m in follow} & answered  # at least one answered, none refused
    assert not [m for m in tap.received if m.get("id") in {f["id"] for f in follow} and "error" in m]


@pytest.mark.parametrize(("era", "kind"), PAIRS)
@bounded
async def test_a_mount_s_list_change_and_resource_update_reach_the_client(era: str, kind: str) -> None:
    async with client_of(_gateway(kind), era) as (client, tap):
        await client.list_tools()
        async with asyncio.timeout(WAIT), client.listen("ev+memo://counter", tools=True) as events:
            assert text(await client.call_tool("ev_bump")) == "1"
            heard: list[Any] = []
            async for event in events:
                heard.append(event)
                if isinstance(event, ResourceUpdated):
                    break
            assert ResourceUpdated(uri="ev+memo://counter") in heard
            assert text(await client.call_tool("ev_grow", {"name": "fresh"})) == "fresh"
            async for event in events:
                if isinstance(event, ListChanged) and event.kind == "tools":
                    break
        assert "ev_fresh" in {tool.name for tool in await client.list_tools()}
        assert text(await client.call_tool("ev_fresh")) == "fresh"
    updated = [m for m in tap.received if m.get("method") == "notifications/resources/updated"]
    assert updated and all(m["params"]["uri"] == "ev+memo://counter" for m in updated)
    assert [m for m in tap.received if m.get("method") == "notifications/tools/list_changed"]


@pytest.mark.parametrize("era", ERAS)
@bounded
async def test_a_mount_that_is_down_leaves_the_rest_serving_and_answers_its_calls_with_a_clear_error(
    era: str,
) -> None:
    gateway = Server("gateway")

    @gateway.tool()
    def hello() -> str:
        return "hi"

    mount_upstream(gateway, "server", "ok")
    gateway.mount("gone", command=[sys.executable, "-c", "raise SystemExit(3)"])
    gateway.mount("missing", command=["/nonexistent/mcp-server-that-is-not-there"])
    async with client_of(gateway, era) as (client, tap):
        tools = {tool.name for tool in await client.list_tools()}
        assert "hello" in tools and "ok_echo" in tools
        assert not [name for name in tools if name.startswith(("gone_", "missing_"))]
        assert text(await client.call_tool("ok_echo", {"text": "still"})) == "still"
        for name in ("gone_echo", "missing_echo"):
            with pytest.raises(RequestError) as failed:
                await client.call_tool(name, {"text": "x"})
            assert failed.value.code == -32603
            message = failed.value.message
            assert "upstream" in message.lower() and "\n" not in message  # one clear line
        assert text(await client.call_tool("hello")) == "hi"
    errors = [m["error"] for m in tap.received if "error" in m]
    assert len(errors) == 2 and all(error["code"] == -32603 for error in errors)
