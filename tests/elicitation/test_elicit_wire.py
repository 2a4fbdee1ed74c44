"""``ctx.elicit`` on the wire, in both eras: the request's shape, typed answers, decline, cancel.

Handshake era: an ``elicitation/create`` JSON-RPC request on the connection, sent while
the ``tools/call`` is open. Stateless era: the call is answered with an
``InputRequiredResult`` and the client retries it with a new id, ``inputResponses`` and
the ``requestState`` echoed exactly (mrtr.mdx). EL-* IDs are from CHAPTER-FEATURES.md.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

import pytest
from _elicit_wire import ERAS, run, session
from pydantic import BaseModel
from typing_extensions import TypedDict

from backchannel import Context, Server

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "default": 30}},
    "required": ["name"],
}


@dataclasses.dataclass
class PersonDC:
    name: str
    age: int = 30


class PersonTD(TypedDict):
    name: str
    age: int


class PersonPM(BaseModel):
    name: str
    age: int = 30


def text(result: Any) -> str:
    assert result.is_error is not True, result
    return str(result.content[0].text)


def asking_server(schema: Any, message: str = "Who are you?") -> Server:
    server = Server("asker")

    @server.tool()
    async def ask(ctx: Context, topic: str = "x") -> str:
        answer = await ctx.elicit(message, schema)
        return f"{answer.action}|{type(answer.data).__name__}|{answer.data!r}"

    return server


def accept(content: dict[str, Any]) -> Any:
    def handler(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": content}

    return handler


# ------------------------------------------------------------------ request shape


def test_legacy_sends_elicitation_create_on_the_connection() -> None:
    """EL-10, EL-13: a JSON-RPC request with mode form, message and requestedSchema."""

    async def body() -> None:
        async with session(asking_server(SCHEMA), "handshake", elicitation=accept({"name": "Ada"})) as (client, tap):
            await client.call_tool("ask", {"topic": "t"})
            [call] = tap.requests_received("tools/call")
            [question] = tap.server_requests()
            assert question["params"] == {"mode": "form", "message": "Who are you?", "requestedSchema": SCHEMA}
            # sent while the call was open: before the call's answer
            assert tap.written.index(question) < tap.written.index(tap.server_response_to(call["id"]))
            answer = tap.client_response_to(question["id"])
            assert answer["result"] == {"action": "accept", "content": {"name": "Ada", "age": 30}}

    run(body)


def test_modern_answers_with_input_required_and_retries_with_new_id() -> None:
    """mrtr.mdx: InputRequiredResult with inputRequests + requestState; the retry has a NEW id,
    the same name and arguments, inputResponses under the same key, and the state echoed."""

    async def body() -> None:
        async with session(asking_server(SCHEMA), "stateless", elicitation=accept({"name": "Ada"})) as (client, tap):
            result = await client.call_tool("ask", {"topic": "t"})
            assert text(result).startswith("accept|dict|")
            first, retry = tap.requests_received("tools/call")
            assert tap.server_requests() == []  # the stateless era sends no requests of its own
            incomplete = tap.server_response_to(first["id"])["result"]
            assert incomplete["resultType"] == "input_required"
            [(key, request)] = incomplete["inputRequests"].items()
            assert request == {
                "method": "elicitation/create",
                "params": {"mode": "form", "message": "Who are you?", "requestedSchema": SCHEMA},
            }
            assert isinstance(incomplete["requestState"], str) and incomplete["requestState"]
            assert retry["id"] != first["id"]
            assert retry["params"]["name"] == "ask" and retry["params"]["arguments"] == {"topic": "t"}
            assert retry["params"]["requestState"] == incomplete["requestState"]
            sent = {"action": "accept", "content": {"name": "Ada", "age": 30}}
            assert retry["params"]["inputResponses"] == {key: sent}
            assert tap.server_response_to(retry["id"])["result"]["resultType"] == "complete"

    run(body)


# ------------------------------------------------------------------ typed answers


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        (PersonDC, "accept|PersonDC|PersonDC(name='Ada', age=30)"),
        (PersonTD, "accept|dict|{'name': 'Ada', 'age': 41}"),
        (PersonPM, "accept|PersonPM|PersonPM(name='Ada', age=30)"),
        (SCHEMA, "accept|dict|{'name': 'Ada', 'age': 30}"),
    ],
    ids=["dataclass", "typeddict", "pydantic", "dict"],
)
def test_accept_is_typed(era: str, schema: Any, expected: str) -> None:
    content = {"name": "Ada", "age": 41} if schema is PersonTD else {"name": "Ada"}

    async def body() -> None:
        async with session(asking_server(schema), era, elicitation=accept(content)) as (client, _):
            assert text(await client.call_tool("ask", {})) == expected

    run(body)


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_decline_and_cancel_carry_no_data(era: str, action: Literal["decline", "cancel"]) -> None:
    async def body() -> None:
        async with session(asking_server(PersonDC), era, elicitation=lambda p: {"action": action}) as (client, tap):
            assert text(await client.call_tool("ask", {})) == f"{action}|NoneType|None"
            if era == "handshake":
                [question] = tap.server_requests()
                assert tap.client_response_to(question["id"])["result"] == {"action": action}

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_client_fills_defaults_before_sending(era: str) -> None:
    """EL-14 / SEP-1034: an accept that omits fields carries the schema's defaults on the wire."""
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
            "verified": {"type": "boolean", "default": True},
        },
    }
    filled = {"name": "Jane", "age": 30, "score": 95.5, "status": "active", "verified": True}

    async def body() -> None:
        async with session(asking_server(schema), era, elicitation=accept({"name": "Jane"})) as (client, tap):
            assert text(await client.call_tool("ask", {})) == f"accept|dict|{filled!r}"
            if era == "handshake":
                [question] = tap.server_requests()
                sent = tap.client_response_to(question["id"])["result"]
            else:
                retry = tap.requests_received("tools/call")[-1]
                [sent] = retry["params"]["inputResponses"].values()
            assert sent == {"action": "accept", "content": filled}

    run(body)


def test_empty_elicitation_capability_means_form() -> None:
    """EL-07: ``"elicitation": {}`` declares form mode (stateless era: per-request _meta)."""
    from _elicit_wire import RawPeer, result_of

    from backchannel.types import meta as M

    async def body() -> None:
        async with RawPeer(asking_server(PersonDC)) as peer:
            response = await peer.modern(
                "tools/call", {"name": "ask", "arguments": {}}, **{M.CLIENT_CAPABILITIES: {"elicitation": {}}}
            )
            assert result_of(response)["resultType"] == "input_required"

    run(body)
