"""Stateless-era elicitation (2026-07-28 mrtr.mdx, SEP-2322): rounds, ``requestState``,
named questions, and MRTR on ``prompts/get`` and ``resources/read``."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from _elicit_wire import RawPeer, error_of, result_of, run, session
from typing_extensions import TypedDict

from backchannel import Context, Server
from backchannel.state.sealer import StateSealer
from backchannel.testing import FakeClock
from backchannel.types import meta as M

FORM_CAPS = {M.CLIENT_CAPABILITIES: {"elicitation": {"form": {}}}}


class Name(TypedDict):
    name: str


class Color(TypedDict):
    color: str


@dataclasses.dataclass
class Topic:
    topic: str


def accept(content: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": content}


def two_step_server(**options: Any) -> Server:
    server = Server("mrtr", **options)

    @server.tool()
    async def profile(ctx: Context, who: str = "me") -> str:
        name = await ctx.elicit("Step 1: your name?", Name, key="step1")
        color = await ctx.elicit("Step 2: your favourite colour?", Color, key="step2")
        return f"{name.action}:{name.data} {color.action}:{color.data}"

    return server


async def call(peer: RawPeer, arguments: dict[str, Any] | None = None, **params: Any) -> dict[str, Any]:
    return await peer.modern("tools/call", {"name": "profile", "arguments": arguments or {}, **params}, **FORM_CAPS)


# ------------------------------------------------------------------------ rounds


def test_two_questions_are_two_rounds() -> None:
    async def body() -> None:
        answers = iter([accept({"name": "Ada"}), accept({"color": "teal"})])
        async with session(two_step_server(), "stateless", elicitation=lambda p: next(answers)) as (client, tap):
            result = await client.call_tool("profile", {})
            assert result.content[0].text == "accept:{'name': 'Ada'} accept:{'color': 'teal'}"  # type: ignore[union-attr]
            first, second, third = tap.requests_received("tools/call")
            assert len({first["id"], second["id"], third["id"]}) == 3
            round1 = tap.server_response_to(first["id"])["result"]
            round2 = tap.server_response_to(second["id"])["result"]
            assert list(round1["inputRequests"]) == ["step1"]
            assert list(round2["inputRequests"]) == ["step2"]
            assert round2["requestState"] != round1["requestState"]  # it now carries step1's answer
            assert second["params"]["requestState"] == round1["requestState"]
            assert third["params"]["requestState"] == round2["requestState"]
            assert list(third["params"]["inputResponses"]) == ["step2"]  # only what was asked

    run(body)


def test_earlier_answers_ride_in_the_state_and_cannot_be_replaced() -> None:
    async def body() -> None:
        async with RawPeer(two_step_server()) as peer:
            round1 = result_of(await call(peer))
            round2 = result_of(
                await call(peer, inputResponses={"step1": accept({"name": "Ada"})}, requestState=round1["requestState"])
            )
            final = result_of(
                await call(
                    peer,
                    inputResponses={"step1": accept({"name": "Mallory"}), "step2": accept({"color": "red"})},
                    requestState=round2["requestState"],
                )
            )
            assert final["content"][0]["text"] == "accept:{'name': 'Ada'} accept:{'color': 'red'}"

    run(body)


def test_missing_response_is_asked_again() -> None:
    """mrtr.mdx Error Handling: a missing answer gets a new InputRequiredResult, not an error."""

    async def body() -> None:
        async with RawPeer(two_step_server()) as peer:
            round1 = result_of(await call(peer))
            again = result_of(
                await call(peer, inputResponses={"wrong_key": accept({"x": 1})}, requestState=round1["requestState"])
            )
            assert again["resultType"] == "input_required"
            assert list(again["inputRequests"]) == ["step1"]

    run(body)


def test_answers_without_state_are_used_and_extra_keys_ignored() -> None:
    """A retry may come without requestState (or answer ahead); unknown keys are ignored."""

    async def body() -> None:
        async with RawPeer(two_step_server()) as peer:
            responses = {
                "step1": accept({"name": "Ada"}),
                "step2": accept({"color": "teal"}),
                "unknown_extra_key": accept({"foo": "bar"}),
            }
            final = result_of(await call(peer, inputResponses=responses))
            assert final["resultType"] == "complete"
            assert final["content"][0]["text"] == "accept:{'name': 'Ada'} accept:{'color': 'teal'}"

    run(body)


@pytest.mark.parametrize("responses", [None, [], {"step1": 12345}, {"step1": "accept"}])
def test_malformed_input_responses_are_invalid_params(responses: Any) -> None:
    async def body() -> None:
        async with RawPeer(two_step_server()) as peer:
            assert error_of(await call(peer, inputResponses=responses))["code"] == -32602

    run(body)


def test_unknown_action_is_invalid_params() -> None:
    async def body() -> None:
        async with RawPeer(two_step_server()) as peer:
            response = await call(peer, inputResponses={"step1": {"action": "maybe"}})
            assert error_of(response)["code"] == -32602

    run(body)


# ------------------------------------------------------------------- requestState


def test_tampered_state_is_refused() -> None:
    async def body() -> None:
        async with RawPeer(two_step_server()) as peer:
            state = result_of(await call(peer))["requestState"]
            body_part, mac = state.split(".")
            flipped = body_part[:-1] + ("A" if body_part[-1] != "A" else "B")
            for tampered in (state + "-TAMPERED", f"{flipped}.{mac}", "not-a-state", 42):
                response = await call(peer, inputResponses={"step1": accept({"name": "Ada"})}, requestState=tampered)
                assert error_of(response)["code"] == -32602, tampered

    run(body)


def test_state_from_another_server_key_is_refused() -> None:
    async def body() -> None:
        async with RawPeer(two_step_server(state_key=b"k" * 32)) as peer:
            state = result_of(await call(peer))["requestState"]
        async with RawPeer(two_step_server(state_key=b"j" * 32)) as peer:
            response = await call(peer, inputResponses={"step1": accept({"name": "Ada"})}, requestState=state)
            assert "verification" in error_of(response)["message"]
        async with RawPeer(two_step_server(state_key=b"k" * 32)) as peer:  # a worker sharing the key serves it
            response = await call(peer, inputResponses={"step1": accept({"name": "Ada"})}, requestState=state)
            assert list(result_of(response)["inputRequests"]) == ["step2"]

    run(body)


def test_expired_state_is_refused() -> None:
    clock = FakeClock()
    server = two_step_server()
    server.state_sealer = StateSealer(ttl=60.0, clock=clock)

    async def body() -> None:
        async with RawPeer(server) as peer:
            state = result_of(await call(peer))["requestState"]
            clock.advance(60.5)
            response = await call(peer, inputResponses={"step1": accept({"name": "Ada"})}, requestState=state)
            assert "expired" in error_of(response)["message"]

    run(body)


def test_state_bound_to_its_request() -> None:
    """Other arguments, another tool or another method: the state does not belong there."""
    server = two_step_server()

    @server.tool()
    async def other(ctx: Context, who: str = "me") -> str:
        return (await ctx.elicit("Step 1: your name?", Name, key="step1")).action

    async def body() -> None:
        async with RawPeer(server) as peer:
            state = result_of(await call(peer, {"who": "me"}))["requestState"]
            answered = {"step1": accept({"name": "Ada"})}
            response = await call(peer, {"who": "you"}, inputResponses=answered, requestState=state)
            assert "different request" in error_of(response)["message"]
            response = await peer.modern(
                "tools/call",
                {"name": "other", "arguments": {"who": "me"}, "inputResponses": answered, "requestState": state},
                **FORM_CAPS,
            )
            assert error_of(response)["code"] == -32602

    run(body)


# -------------------------------------------------------------------- named keys


def test_a_key_used_twice_in_one_request_is_a_bug() -> None:
    server = Server("s")

    @server.tool()
    async def twice(ctx: Context) -> str:
        await ctx.elicit("One?", Name, key="same")
        await ctx.elicit("Two?", Color, key="same")
        return "done"

    async def body() -> None:
        async with RawPeer(server) as peer:
            response = await peer.modern(
                "tools/call",
                {"name": "twice", "arguments": {}, "inputResponses": {"same": accept({"name": "Ada"})}},
                **FORM_CAPS,
            )
            assert error_of(response)["code"] == -32603

    run(body)


def test_default_keys_number_the_questions() -> None:
    server = Server("s")

    @server.tool()
    async def ask(ctx: Context) -> str:
        return (await ctx.elicit("Name?", Name)).action

    async def body() -> None:
        async with RawPeer(server) as peer:
            response = await peer.modern("tools/call", {"name": "ask", "arguments": {}}, **FORM_CAPS)
            assert list(result_of(response)["inputRequests"]) == ["q1:elicitation/create"]

    run(body)


# ------------------------------------------------------------ prompts and resources


def context_server() -> Server:
    server = Server("s")

    @server.prompt()
    async def briefing(ctx: Context, audience: str = "team") -> str:
        answer = await ctx.elicit("What topic?", Topic, key="topic")
        return f"Brief the {audience} on {answer.data.topic if answer.data else 'nothing'}"

    @server.resource("notes://today")
    async def notes(ctx: Context) -> str:
        answer = await ctx.elicit("Whose notes?", Name, key="owner")
        return f"notes of {answer.data['name'] if answer.data else 'nobody'}"

    @server.resource("notes://by/{day}")
    async def notes_by(day: str, ctx: Context) -> str:
        answer = await ctx.elicit("Whose notes?", Name, key="owner")
        return f"{day}: notes of {answer.data['name'] if answer.data else 'nobody'}"

    return server


def test_prompt_elicits_in_the_stateless_era() -> None:
    async def body() -> None:
        handler = lambda p: accept({"topic": "caching"})  # noqa: E731
        async with session(context_server(), "stateless", elicitation=handler) as (client, tap):
            result = await client.get_prompt("briefing", {"audience": "board"})
            assert result.messages[0].content.text == "Brief the board on caching"  # type: ignore[union-attr]
            first, retry = tap.requests_received("prompts/get")
            round1 = tap.server_response_to(first["id"])["result"]
            assert round1["resultType"] == "input_required"
            assert round1["inputRequests"]["topic"]["params"]["message"] == "What topic?"
            assert retry["params"]["arguments"] == {"audience": "board"}

    run(body)


def test_prompt_elicits_in_the_handshake_era() -> None:
    async def body() -> None:
        handler = lambda p: accept({"topic": "caching"})  # noqa: E731
        async with session(context_server(), "handshake", elicitation=handler) as (client, tap):
            result = await client.get_prompt("briefing")
            assert result.messages[0].content.text == "Brief the team on caching"  # type: ignore[union-attr]
            assert len(tap.server_requests()) == 1

    run(body)


@pytest.mark.parametrize("uri", ["notes://today", "notes://by/monday"])
def test_resource_read_elicits_in_the_stateless_era(uri: str) -> None:
    async def body() -> None:
        async with session(context_server(), "stateless", elicitation=lambda p: accept({"name": "Ada"})) as (
            client,
            tap,
        ):
            result = await client.read_resource(uri)
            assert result.contents[0].text.endswith("notes of Ada")  # type: ignore[union-attr]
            first, retry = tap.requests_received("resources/read")
            assert tap.server_response_to(first["id"])["result"]["resultType"] == "input_required"
            assert retry["params"]["uri"] == uri

    run(body)


def test_list_methods_never_answer_input_required() -> None:
    async def body() -> None:
        async with RawPeer(context_server()) as peer:
            for method in ("prompts/list", "resources/list", "tools/list"):
                assert result_of(await peer.modern(method, {}, **FORM_CAPS)).get("resultType", "complete") == "complete"

    run(body)
