"""Elicitation metrics (docs/observability.md, "Metrics"): ``backchannel.elicitation.outcomes``
counts what the person did, by mode and action, and ``backchannel.elicitation.duration`` is the
time they took, in both eras: a live question in the handshake era, a multi round-trip ask in
the stateless era (the answer arrives in a later request), and URL flows in either.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from _metrics_read import Readings
from _otel import Otel
from typing_extensions import TypedDict

from backchannel import Context, Server
from backchannel.client.url_flow import UrlElicitation
from backchannel.server.url_elicitation import UrlElicitations
from backchannel.telemetry.metrics import ELICITATION_DURATION, ELICITATION_OUTCOMES
from backchannel.testing import connected, run

PERSON_TIME = 0.05  # how long the scripted person thinks before answering


class Name(TypedDict):
    name: str


def form_server() -> Server:
    server = Server("asks")

    @server.tool()
    async def ask(ctx: Context) -> str:
        first = await ctx.elicit("Your name?", Name, key="name")
        return first.action

    @server.tool()
    async def ask_twice(ctx: Context) -> str:
        first = await ctx.elicit("Your name?", Name, key="first")
        second = await ctx.elicit("And your friend's?", Name, key="second")
        return f"{first.action} {second.action}"

    return server


def person(action: str) -> Any:
    async def answer(params: Any) -> dict[str, Any]:
        await asyncio.sleep(PERSON_TIME)
        return {"action": action, "content": {"name": "Ada"}} if action == "accept" else {"action": action}

    return answer


@pytest.mark.parametrize("era", ["handshake", "stateless"])
@pytest.mark.parametrize("action", ["accept", "decline", "cancel"])
def test_a_form_answer_is_counted_once_with_the_persons_time(otel: Otel, era: str, action: str) -> None:
    async def body() -> None:
        async with connected(form_server(), era, elicitation=person(action)) as client:
            result = await client.call_tool("ask")
            assert result.content[0].text == action  # type: ignore[union-attr]
        readings = Readings(otel).read()
        (counted,) = readings.of(ELICITATION_OUTCOMES)
        assert counted.value == 1
        assert dict(counted.attributes) == {
            "backchannel.elicitation.mode": "form",
            "backchannel.elicitation.action": action,
        }
        (timed,) = readings.of(ELICITATION_DURATION)
        assert dict(timed.attributes) == dict(counted.attributes)
        assert timed.count == 1 and timed.sum >= PERSON_TIME  # the person's time, not the server's

    run(body)


def test_stateless_rounds_count_each_answer_once_however_often_the_handler_reruns(otel: Otel) -> None:
    """Two questions are three rounds: the handler runs three times and sees the first answer
    twice (once fresh, once from requestState); each answer is counted once."""

    async def body() -> None:
        async with connected(form_server(), "stateless", elicitation=person("accept")) as client:
            result = await client.call_tool("ask_twice")
            assert result.content[0].text == "accept accept"  # type: ignore[union-attr]
        readings = Readings(otel).read()
        assert readings.total(ELICITATION_OUTCOMES, backchannel__elicitation__action="accept") == 2
        (timed,) = readings.of(ELICITATION_DURATION)
        assert timed.count == 2

    run(body)


def url_server() -> tuple[Server, UrlElicitations]:
    server = Server("pay")
    flows = UrlElicitations.of(server)

    @server.tool()
    async def pay(ctx: Context) -> str:
        outcome = await ctx.elicit_url("Pay on the provider's page", url="https://pay.example/{elicitation_id}")
        return outcome.action

    return server, flows


def test_a_url_flow_is_counted_when_it_completes(otel: Otel) -> None:
    server, flows = url_server()

    async def completes(request: UrlElicitation) -> str:
        await asyncio.sleep(PERSON_TIME)
        assert request.elicitation_id is not None
        flows.complete(request.elicitation_id)  # what the provider's page would do
        return "accept"

    async def body() -> None:
        async with connected(server, "handshake", url_elicitation=completes) as client:
            result = await client.call_tool("pay")
            assert result.content[0].text == "accept"  # type: ignore[union-attr]
        readings = Readings(otel).read()
        (counted,) = readings.of(ELICITATION_OUTCOMES)
        assert dict(counted.attributes) == {
            "backchannel.elicitation.mode": "url",
            "backchannel.elicitation.action": "accept",
        }
        assert counted.value == 1
        (timed,) = readings.of(ELICITATION_DURATION, backchannel__elicitation__mode="url")
        assert timed.count == 1 and timed.sum >= PERSON_TIME

    run(body)


@pytest.mark.parametrize("era", ["handshake", "stateless"])
@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_a_url_flow_the_person_refuses_is_counted_as_refused(otel: Otel, era: str, action: str) -> None:
    server, _ = url_server()

    async def body() -> None:
        async with connected(server, era, url_elicitation=lambda request: action) as client:
            result = await client.call_tool("pay")
            assert result.content[0].text == action  # type: ignore[union-attr]
        readings = Readings(otel).read()
        assert readings.total(ELICITATION_OUTCOMES, backchannel__elicitation__mode="url") == 1
        assert readings.total(ELICITATION_OUTCOMES, backchannel__elicitation__action=action) == 1

    run(body)


@pytest.mark.parametrize("action", [["accept"], {"a": 1}, None, 3])
def test_an_action_of_the_wrong_type_is_not_counted_and_raises_nothing(otel: Otel, action: Any) -> None:
    # The action is the client's value as sent (a stateless round's inputResponses reach the metric
    # before any check): an unhashable one must not turn the client's mistake into our -32603.
    from backchannel.telemetry import metrics

    metrics.elicitation_answered("form", action, 0.1)
    metrics.elicitation_answered("form", "decline", 0.1)
    readings = Readings(otel).read()
    (counted,) = readings.of(ELICITATION_OUTCOMES)
    assert counted.value == 1 and dict(counted.attributes)["backchannel.elicitation.action"] == "decline"
