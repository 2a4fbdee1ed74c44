"""Middleware on the wire, through mounts, in both eras (issue #30, "Middleware", proof 4).

The audit middleware (``backchannel.middleware.Audit``) records the reverse channel as it
crosses: the form a mounted tool asks and the person's answer, each equal to what the client's
transport read and wrote (handshake era: the ``elicitation/create`` request and its response;
stateless era: the ``inputRequests`` of the result and the ``inputResponses`` of the retry).
A middleware may answer in the server's place, with a result or an error, and may rewrite the
params the server (and the mount) then sees.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from backchannel import Server
from backchannel.middleware import Audit
from backchannel.server.middleware import Call, CallNext
from backchannel.types.errors import MCPError, RequestError
from mounts._mounting import ERAS, KINDS, bounded, client_of, mount_upstream, person, text

PAIRS = [(era, kind) for era in ERAS for kind in KINDS]


@pytest.mark.parametrize(("era", "kind"), PAIRS)
@bounded
async def test_the_audit_middleware_records_a_mounted_tool_s_form_and_its_answer(era: str, kind: str) -> None:
    gateway = Server("gateway")
    audit = Audit()
    gateway.add_middleware(audit)
    mount_upstream(gateway, kind)
    async with client_of(gateway, era) as (client, tap):
        assert text(await client.call_tool("ev_ask", {})) == "accept:Ada"
    asked, answered = list(audit.events)
    assert (asked.kind, asked.method, answered.kind, answered.method) == (
        "asked",
        "elicitation/create",
        "answered",
        "elicitation/create",
    )
    assert asked.body["message"] == "Who are you?" and asked.era == era and answered.era == era
    assert answered.body["action"] == "accept" and answered.body["content"] == {"name": "Ada", "happy": True}
    assert asked.request == answered.request == "tools/call ev_ask"
    if era == "handshake":
        # The request the client read, and the response it wrote, are what the audit holds.
        question = next(m for m in tap.received if m.get("method") == "elicitation/create")
        assert question["params"] == asked.body
        reply = next(m for m in tap.written if m.get("id") == question["id"] and "result" in m)
        assert reply["result"] == answered.body
        assert asked.key is None
    else:
        first = next(m["result"] for m in tap.received if m.get("result", {}).get("resultType") == "input_required")
        assert first["inputRequests"] == {asked.key: {"method": "elicitation/create", "params": asked.body}}
        retry = next(m for m in tap.written if "inputResponses" in m.get("params", {}))
        assert retry["params"]["inputResponses"] == {answered.key: answered.body}
        assert asked.key == answered.key


@pytest.mark.parametrize("kind", KINDS)
@bounded
async def test_the_audit_middleware_records_the_question_of_a_mounted_task_in_the_stateless_era(kind: str) -> None:
    """A task waiting for input shows its question in each ``tasks/get`` answer: recorded once;
    the answer comes in ``tasks/update``."""
    gateway = Server("gateway")
    audit = Audit()
    gateway.add_middleware(audit)
    mount_upstream(gateway, kind)
    polled_twice = asyncio.Event()

    async def person_later(params: dict[str, Any]) -> dict[str, Any]:
        await polled_twice.wait()  # the question stays open while the test polls
        return person(params)

    async with client_of(gateway, "stateless", elicitation=person_later) as (client, tap):
        task = await client.start_task("ev_job", {"label": "the report"})
        waiting = 0
        while waiting < 2:  # bounded by the test's own bound
            got = await client.request("tasks/get", {"taskId": task.task_id}, cached=False)
            waiting += got["status"] == "input_required"
        assert [event.kind for event in audit.events] == ["asked"]  # once, however often polled
        polled_twice.set()
        assert text(await task) == "the report by Ada"
    asked, answered = list(audit.events)
    assert (asked.kind, asked.request, answered.kind, answered.request) == (
        "asked",
        "tasks/get",
        "answered",
        "tasks/update",
    )
    assert asked.body["message"] == "Go on with the report?" and asked.key == answered.key
    polled = [m["result"] for m in tap.received if m.get("result", {}).get("status") == "input_required"]
    assert polled and all(result["inputRequests"][asked.key]["params"] == asked.body for result in polled)
    update = next(m for m in tap.written if m.get("method") == "tasks/update")
    assert update["params"]["inputResponses"] == {answered.key: answered.body}


@pytest.mark.parametrize("kind", KINDS)
@bounded
async def test_the_audit_middleware_records_the_question_of_a_mounted_task_in_the_handshake_era(kind: str) -> None:
    """A task's question reaches a handshake-era client as a request on its ``tasks/result``
    stream: the middleware see it go and its answer come, as the handler's own questions."""
    gateway = Server("gateway")
    audit = Audit()
    gateway.add_middleware(audit)
    mount_upstream(gateway, kind)
    async with client_of(gateway, "handshake") as (client, tap):
        task = await client.start_task("ev_job", {"label": "the report"})
        assert text(await task) == "the report by Ada"
    asked, answered = [event for event in audit.events if event.method == "elicitation/create"]
    assert (asked.kind, answered.kind) == ("asked", "answered")
    assert asked.body["message"] == "Go on with the report?"
    question = next(m for m in tap.received if m.get("method") == "elicitation/create")
    assert question["params"] == asked.body
    reply = next(m for m in tap.written if m.get("id") == question["id"] and "result" in m)
    assert reply["result"] == answered.body


def _counting_mount(gateway: Server) -> list[dict[str, Any]]:
    """Mount ``loc`` with a tool ``echo`` that notes each call's arguments (the returned list)."""
    calls: list[dict[str, Any]] = []
    local = Server("local")

    @local.tool()
    def echo(text: str, loud: bool = False) -> str:
        calls.append({"text": text, "loud": loud})
        return text.upper() if loud else text

    gateway.mount("loc", local)
    return calls


@pytest.mark.parametrize("era", ERAS)
@bounded
async def test_a_middleware_answers_with_its_own_result_and_the_mount_is_not_reached(era: str) -> None:
    gateway = Server("gateway")
    calls = _counting_mount(gateway)

    @gateway.add_middleware
    async def canned(call: Call, call_next: CallNext) -> Any:
        if call.method == "tools/call" and call.params.get("name") == "loc_echo":
            return {"content": [{"type": "text", "text": "from the middleware"}]}
        return await call_next(call)

    async with client_of(gateway, era) as (client, tap):
        assert text(await client.call_tool("loc_echo", {"text": "x"})) == "from the middleware"
    assert calls == []
    sent = tap.tool_calls_written("loc_echo")[0]
    answer = next(m for m in tap.received if m.get("id") == sent["id"])
    assert answer["result"]["content"] == [{"type": "text", "text": "from the middleware"}]


@pytest.mark.parametrize("era", ERAS)
@bounded
async def test_a_middleware_refuses_with_an_error_that_reaches_the_client_as_it_was_raised(era: str) -> None:
    gateway = Server("gateway")
    calls = _counting_mount(gateway)

    @gateway.add_middleware
    async def refuse(call: Call, call_next: CallNext) -> Any:
        if call.method == "tools/call":
            raise MCPError("not on Sundays", code=-32001, data={"why": "policy"})
        return await call_next(call)

    async with client_of(gateway, era) as (client, tap):
        with pytest.raises(RequestError) as refused:
            await client.call_tool("loc_echo", {"text": "x"})
        assert refused.value.code == -32001
    assert calls == []
    sent = tap.tool_calls_written("loc_echo")[0]
    error = next(m for m in tap.received if m.get("id") == sent["id"])["error"]
    assert error == {"code": -32001, "message": "not on Sundays", "data": {"why": "policy"}}


@pytest.mark.parametrize("era", ERAS)
@bounded
async def test_params_a_middleware_rewrites_are_what_the_mount_sees(era: str) -> None:
    gateway = Server("gateway")
    calls = _counting_mount(gateway)

    @gateway.add_middleware
    async def loud(call: Call, call_next: CallNext) -> Any:
        if call.method == "tools/call":
            arguments = {**call.params.get("arguments", {}), "loud": True}
            call.params = {**call.params, "arguments": arguments}
        return await call_next(call)

    async with client_of(gateway, era) as (client, tap):
        assert text(await client.call_tool("loc_echo", {"text": "quiet"})) == "QUIET"
    assert calls == [{"text": "quiet", "loud": True}]
    assert tap.tool_calls_written("loc_echo")[0]["params"]["arguments"] == {"text": "quiet"}  # the client sent this
