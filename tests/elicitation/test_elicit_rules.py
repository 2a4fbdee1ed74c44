"""The rules around a question: re-asking on bad content, capability gating and fallbacks,
timeouts made for people, remembering a decline, and the client's own checks."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest
from _elicit_wire import ERAS, RawPeer, error_of, raw_answers, run, session

from backchannel import Client, Context, MCPError, RequestError, Server
from backchannel.server.elicitation import Elicited
from backchannel.transports.memory import memory_pair
from backchannel.types import meta as M


@dataclasses.dataclass
class Age:
    name: str
    age: int


def text(result: Any) -> str:
    assert result.is_error is not True, result
    return str(result.content[0].text)


def handler_log() -> tuple[list[dict[str, Any]], Any]:
    seen: list[dict[str, Any]] = []

    def handler(params: dict[str, Any]) -> dict[str, Any]:
        seen.append(params)
        return {"action": "accept", "content": {"name": "Ada", "age": 36}}

    return seen, handler


# ------------------------------------------------------------- content that does not fit


def reasking_server(seen: list[Any]) -> Server:
    server = Server("reasker")

    @server.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Your age?", Age)
        seen.append(answer)
        return answer.action

    return server


@pytest.mark.parametrize("era", ERAS)
def test_invalid_content_is_asked_again_with_the_problem(era: str) -> None:
    """EL-62: the handler never sees invalid data; the second ask states the problem."""
    handled: list[Any] = []

    async def body() -> None:
        async with session(reasking_server(handled), era, elicitation=lambda p: {"action": "cancel"}) as (client, tap):
            asked = raw_answers(
                client,
                [
                    {"action": "accept", "content": {"name": "Ada", "age": "old"}},
                    {"action": "accept", "content": {"name": "Ada", "age": 36}},
                ],
            )
            assert text(await client.call_tool("ask", {})) == "accept"
            assert [params["message"] for params in asked] == [
                "Your age?",
                "Your age?\n\nPlease correct: age: must be a whole number, not 'old'",
            ]
            if era == "handshake":
                assert len(tap.server_requests()) == 2
            else:  # another MRTR round: three tools/call requests
                assert len(tap.requests_received("tools/call")) == 3
        assert handled == [Elicited("accept", Age("Ada", 36))]

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_second_invalid_answer_reads_as_cancel(era: str) -> None:
    handled: list[Any] = []
    bad = {"action": "accept", "content": {"name": 5, "age": 36}}

    async def body() -> None:
        async with session(reasking_server(handled), era, elicitation=lambda p: {"action": "cancel"}) as (client, _):
            asked = raw_answers(client, [bad, bad])
            assert text(await client.call_tool("ask", {})) == "cancel"
            assert len(asked) == 2
        assert handled == [Elicited("cancel")]

    run(body)


def test_client_refuses_to_send_content_that_does_not_fit() -> None:
    """EL-61: the client validates an accept before sending; the server gets -32602, never the data."""
    server = Server("s")

    @server.tool()
    async def ask(ctx: Context) -> str:
        return (await ctx.elicit("Your age?", Age)).action

    async def body() -> None:
        bad = {"action": "accept", "content": {"name": "Ada", "age": "old"}}
        async with session(server, "handshake", elicitation=lambda p: bad) as (client, tap):
            with pytest.raises(RequestError):
                await client.call_tool("ask", {})
            [question] = tap.server_requests()
            answer = tap.client_response_to(question["id"])
            assert answer["error"]["code"] == -32602
            assert "age: must be a whole number" in answer["error"]["message"]

    run(body)


# ------------------------------------------------------------------------ undeclared modes


async def raw_server_asks(client_options: dict[str, Any], question: dict[str, Any]) -> dict[str, Any]:
    """A hand-written handshake-era server that sends ``question`` (an ``elicitation/create``
    params object the session layer of ours would refuse to send) and returns the answer."""
    client_side, server_side = memory_pair()

    async def serve() -> dict[str, Any]:
        [initialize] = await server_side.receive() or []
        server_side.write(
            [
                {
                    "jsonrpc": "2.0",
                    "id": initialize["id"],
                    "result": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "serverInfo": {"name": "raw", "version": "1"},
                    },
                }
            ]
        )
        await server_side.receive()  # notifications/initialized
        server_side.write([{"jsonrpc": "2.0", "id": "q1", "method": "elicitation/create", "params": question}])
        while True:
            for message in await server_side.receive() or []:
                if message.get("id") == "q1":
                    return message  # type: ignore[no-any-return]

    serving = asyncio.create_task(serve())
    async with Client(client_side, era="handshake", **client_options):
        answer = await asyncio.wait_for(serving, 5)
    await server_side.close()
    return answer


def test_undeclared_mode_gets_invalid_params_from_the_client() -> None:
    """EL-39: a request for a mode the client did not declare is answered with -32602."""
    url_question = {"mode": "url", "message": "Sign in", "url": "https://example.com/x", "elicitationId": "e1"}
    schema = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}}
    form_question = {"mode": "form", "message": "Age?", "requestedSchema": schema}

    async def body() -> None:
        _, form_only = handler_log()
        answer = await raw_server_asks({"elicitation": form_only}, url_question)
        assert answer["error"]["code"] == -32602
        answer = await raw_server_asks({"url_elicitation": lambda request: "accept"}, form_question)
        assert answer["error"]["code"] == -32602
        # a form request without "mode" is form mode (EL-12)
        no_mode = {k: v for k, v in form_question.items() if k != "mode"}
        answer = await raw_server_asks({"elicitation": form_only}, no_mode)
        assert answer["result"]["action"] == "accept"

    run(body)


def test_server_never_sends_an_undeclared_mode() -> None:
    """EL-09: even a hand-made url-mode request to a form-only client is refused before sending."""
    server = Server("s")

    @server.tool()
    async def visit(ctx: Context) -> str:
        params = {"mode": "url", "message": "Sign in", "url": "https://example.com/x", "elicitationId": "e1"}
        try:
            await ctx.request_input("elicitation/create", params, "elicitation")
        except MCPError as exc:
            return f"refused {exc.code}"
        return "answered"

    async def body() -> None:
        _, form_only = handler_log()
        async with session(server, "handshake", elicitation=form_only) as (client, tap):
            assert text(await client.call_tool("visit", {})) == "refused -32021"
            assert tap.server_requests() == []

    run(body)


def test_client_declares_only_the_modes_it_handles() -> None:
    """EL-07, EL-08: capabilities follow the handlers given to Client."""
    _, handler = handler_log()

    async def body() -> None:
        async with session(Server("s"), "handshake", elicitation=handler) as (_, tap):
            [initialize] = tap.requests_received("initialize")
            assert initialize["params"]["capabilities"] == {"elicitation": {"form": {}}}
        async with session(Server("s"), "handshake") as (_, tap):
            [initialize] = tap.requests_received("initialize")
            assert "elicitation" not in initialize["params"]["capabilities"]

    run(body)


# ------------------------------------------------------------------ capability gating


def gated_server(fallback: bool) -> Server:
    server = Server("s")

    def by_default() -> Elicited[Any]:
        return Elicited("accept", Age("Fallback", 0))

    @server.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Your age?", Age, fallback=by_default if fallback else None)
        return f"{answer.action} {answer.data}"

    return server


def test_legacy_without_capability_raises_and_sends_nothing() -> None:
    """EL-09: no ``elicitation`` capability: MissingCapability (-32021), no request on the wire."""

    async def body() -> None:
        async with session(gated_server(fallback=False), "handshake") as (client, tap):
            with pytest.raises(RequestError) as caught:
                await client.call_tool("ask", {})
            assert caught.value.code == -32021
            assert caught.value.data == {"requiredCapabilities": {"elicitation": {"form": {}}}}
            assert tap.server_requests() == []

    run(body)


def test_modern_without_capability_is_an_error_response() -> None:
    async def body() -> None:
        async with RawPeer(gated_server(fallback=False)) as peer:
            response = await peer.modern("tools/call", {"name": "ask", "arguments": {}})
            assert error_of(response)["code"] == -32021
            # URL mode alone does not declare form mode
            response = await peer.modern(
                "tools/call", {"name": "ask", "arguments": {}}, **{M.CLIENT_CAPABILITIES: {"elicitation": {"url": {}}}}
            )
            assert error_of(response)["code"] == -32021

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_fallback_runs_instead(era: str) -> None:
    async def body() -> None:
        async with session(gated_server(fallback=True), era) as (client, tap):
            assert text(await client.call_tool("ask", {})) == "accept Age(name='Fallback', age=0)"
            assert tap.server_requests() == []
            assert len(tap.requests_received("tools/call")) == 1  # no MRTR round either

    run(body)


# ---------------------------------------------------------------------------- timeouts


def test_timeout_cancels_the_question_on_the_wire() -> None:
    """Expiry sends notifications/cancelled for the elicitation request; the handler sees cancel."""
    server = Server("s")
    outcome: list[Any] = []

    @server.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Your age?", Age, timeout=0.2)
        outcome.append(answer)
        return answer.action

    async def body() -> None:
        person_left = asyncio.Event()

        async def never(params: dict[str, Any]) -> dict[str, Any]:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                person_left.set()
                raise
            raise AssertionError("unreachable")

        async with session(server, "handshake", elicitation=never) as (client, tap):
            assert text(await client.call_tool("ask", {})) == "cancel"
            [question] = tap.server_requests()
            [cancelled] = tap.notifications_written("notifications/cancelled")
            assert cancelled["params"]["requestId"] == question["id"]
            await asyncio.wait_for(person_left.wait(), 2)  # the client stopped asking too
        assert outcome == [Elicited("cancel")]

    run(body)


def test_server_wide_elicitation_timeout() -> None:
    server = Server("s", elicitation_timeout=0.2)

    @server.tool()
    async def ask(ctx: Context) -> str:
        return (await ctx.elicit("Your age?", Age)).action

    async def body() -> None:
        async def never(params: dict[str, Any]) -> dict[str, Any]:
            await asyncio.sleep(30)
            raise AssertionError("unreachable")

        async with session(server, "handshake", elicitation=never) as (client, tap):
            started = asyncio.get_running_loop().time()
            assert text(await client.call_tool("ask", {})) == "cancel"
            assert asyncio.get_running_loop().time() - started < 5
            assert len(tap.notifications_written("notifications/cancelled")) == 1

    run(body)


def test_default_timeout_is_ten_minutes() -> None:
    assert Server("s").elicitation_timeout == 600.0


# ----------------------------------------------------------------------- decline memory


def declining_server(message: str = "Your age?") -> Server:
    server = Server("s")

    @server.tool()
    async def ask(ctx: Context, remember: bool = True, suffix: str = "", grain: str | None = None) -> str:
        answer = await ctx.elicit(message + suffix, Age, remember_decline=remember, decline_key=grain)
        return answer.action

    @server.tool()
    async def other(ctx: Context) -> str:
        return (await ctx.elicit(message, Age)).action

    return server


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_declined_form_is_not_shown_again_by_the_same_tool(era: str) -> None:
    """The chapter: after a decline, don't pop the same form again in the session. The form
    is the tool and its schema; the message (which may name an item) does not make it new."""

    async def body() -> None:
        async with session(declining_server(), era, elicitation=lambda p: {"action": "decline"}) as (client, tap):
            assert text(await client.call_tool("ask", {})) == "decline"
            assert text(await client.call_tool("ask", {})) == "decline"
            assert tap.forms_shown(era) == 1  # the second was answered without asking
            # another message for the same form is not shown either
            assert text(await client.call_tool("ask", {"suffix": " (again)"})) == "decline"
            assert tap.forms_shown(era) == 1
            # another tool with the same schema is another form
            assert text(await client.call_tool("other", {})) == "decline"
            assert tap.forms_shown(era) == 2
            # a tool asking for a finer grain is asked once per distinct key
            assert text(await client.call_tool("ask", {"grain": "item-1"})) == "decline"
            assert text(await client.call_tool("ask", {"grain": "item-1"})) == "decline"
            assert tap.forms_shown(era) == 3
            assert text(await client.call_tool("ask", {"grain": "item-2"})) == "decline"
            assert tap.forms_shown(era) == 4
            # and a tool that opts out asks again
            assert text(await client.call_tool("ask", {"remember": False})) == "decline"
            assert tap.forms_shown(era) == 5
        # a new session (a new connection) starts with a clean slate
        async with session(declining_server(), era, elicitation=lambda p: {"action": "decline"}) as (client, tap):
            assert text(await client.call_tool("ask", {})) == "decline"
            assert tap.forms_shown(era) == 1

    run(body)


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_cancel_is_not_remembered(era: str) -> None:
    async def body() -> None:
        async with session(declining_server(), era, elicitation=lambda p: {"action": "cancel"}) as (client, tap):
            await client.call_tool("ask", {})
            await client.call_tool("ask", {})
            if era == "handshake":
                assert len(tap.server_requests()) == 2
            else:
                assert len(tap.requests_received("tools/call")) == 4  # each call: ask, retry

    run(body)


def test_invalid_dict_schema_is_refused_at_the_call() -> None:
    server = Server("s")

    @server.tool()
    async def ask(ctx: Context) -> str:
        schema = {"type": "object", "properties": {"address": {"type": "object", "properties": {}}}}
        return (await ctx.elicit("Where?", schema)).action

    async def body() -> None:
        async with RawPeer(server) as peer:
            await peer.initialize()
            response = await peer.send("tools/call", {"name": "ask", "arguments": {}})
            assert error_of(response)["code"] == -32603
            assert not [m for m in peer.seen if m.get("method") == "elicitation/create"]

    run(body)
