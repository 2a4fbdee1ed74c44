"""Sampling over the wire (issue #5), both eras: ``ctx.sample`` as a handshake-era request or
an MRTR input request, capability gating (``sampling``, ``sampling.tools``,
``sampling.context``; LC-23), the tool loop, and validation on both sides: the server's
messages and the client's answer, the client's view of the request (-32602) and of its
handler's result (-32603 to the server, a clear error locally).
"""

from __future__ import annotations

import json
import logging
from typing import Any

import msgspec
import pytest
from _rs_harness import ERAS, raw_server, run, serving, text_of

from backchannel import Context, RequestError, Server
from backchannel.client.inputs import InputHandlers, SamplingResultError
from backchannel.protocol.sampling import SamplingProblem, check_messages, check_result, parse_messages
from backchannel.types.content import TextContent, ToolUseContent
from backchannel.types.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    InvalidParams,
)
from backchannel.types.sampling import SamplingMessage

WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Current weather for a city",
    "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


def reply(text: str, **extra: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": text}, "model": "test-model", **extra}


def sampling_server() -> Server:
    server = Server("sampling")

    @server.tool()
    async def ask(ctx: Context, prompt: str) -> str:
        result = await ctx.sample(
            prompt,
            max_tokens=100,
            system_prompt="Be brief.",
            model_preferences={"hints": [{"name": "claude"}], "speedPriority": 0.5},
            temperature=0.2,
            stop_sequences=["\n\n"],
        )
        assert isinstance(result.content, TextContent)
        return f"{result.model}: {result.content.text} ({result.stop_reason})"

    @server.tool()
    async def mixed(ctx: Context) -> str:
        result = await ctx.sample(
            [
                "first",
                {"role": "assistant", "content": {"type": "text", "text": "second"}},
                SamplingMessage(role="user", content=TextContent(text="third")),
            ],
            max_tokens=10,
        )
        return result.model

    @server.tool()
    async def weather(ctx: Context) -> str:
        """The spec's tool loop: the model asks for a tool, the server answers, the model ends."""
        history: list[Any] = ["What's the weather in Paris?"]
        for _ in range(3):
            result = await ctx.sample(history, max_tokens=100, tools=[WEATHER_TOOL], tool_choice="auto")
            blocks = result.content if isinstance(result.content, list) else [result.content]
            uses = [b for b in blocks if isinstance(b, ToolUseContent)]
            if not uses:
                return "".join(b.text for b in blocks if isinstance(b, TextContent))
            history.append({"role": "assistant", "content": msgspec.to_builtins(blocks)})
            history.append(
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "toolUseId": u.id, "content": [{"type": "text", "text": "18°C"}]}
                        for u in uses
                    ],
                }
            )
        return "no answer"

    @server.tool()
    async def context_please(ctx: Context) -> str:
        await ctx.sample("hi", max_tokens=5, include_context="thisServer")
        return "ok"

    @server.tool()
    async def raw(ctx: Context, params: dict[str, Any]) -> str:
        """Send any params as they are, past ``ctx.sample``'s own checks."""
        return json.dumps(await ctx.request_input("sampling/createMessage", params, "sampling"))

    return server


def echo_handler(seen: list[dict[str, Any]]) -> Any:
    def handler(params: dict[str, Any]) -> dict[str, Any]:
        seen.append(params)
        last = params["messages"][-1]["content"]
        text = last["text"] if isinstance(last, dict) else "?"
        return reply(f"echo {text}", stopReason="endTurn")

    return handler


def error_of(exc: BaseException) -> tuple[int, Any]:
    assert isinstance(exc, RequestError), exc
    return exc.code, exc.data


# ------------------------------------------------------------------ round trips


def test_legacy_sample_is_a_request_on_the_wire() -> None:
    """LC-23 / sampling.mdx: a ``sampling/createMessage`` request carrying every parameter,
    and a typed ``CreateMessageResult`` for the handler."""
    seen: list[dict[str, Any]] = []

    async def body() -> None:
        async with serving(sampling_server(), "handshake", sampling=echo_handler(seen)) as (client, wire):
            init = next(m for m in wire.received if m.get("method") == "initialize")
            assert init["params"]["capabilities"]["sampling"] == {}
            result = await client.call_tool("ask", {"prompt": "Capital of France?"})
            assert text_of(result) == "test-model: echo Capital of France? (endTurn)"
            [request] = wire.requests_written("sampling/createMessage")
            assert request["params"] == {
                "messages": [{"role": "user", "content": {"type": "text", "text": "Capital of France?"}}],
                "maxTokens": 100,
                "systemPrompt": "Be brief.",
                "modelPreferences": {"hints": [{"name": "claude"}], "speedPriority": 0.5},
                "temperature": 0.2,
                "stopSequences": ["\n\n"],
            }
            assert seen == [request["params"]]

    run(body)


def test_modern_sample_is_an_input_request_then_a_retry() -> None:
    """MRTR (sampling.mdx 2026-07-28): ``InputRequiredResult`` with ``sampling/createMessage``,
    the retry carries the ``CreateMessageResult`` in ``inputResponses`` and the state echoed."""
    seen: list[dict[str, Any]] = []

    async def body() -> None:
        async with serving(sampling_server(), "stateless", sampling=echo_handler(seen)) as (client, wire):
            result = await client.call_tool("ask", {"prompt": "Capital of France?"})
            assert text_of(result) == "test-model: echo Capital of France? (endTurn)"
            first, retry = wire.tool_calls_received("ask")
            irr = wire.answer_to(first["id"])["result"]
            [(key, request)] = irr["inputRequests"].items()
            assert request["method"] == "sampling/createMessage"
            assert request["params"]["maxTokens"] == 100
            assert retry["id"] != first["id"]
            assert retry["params"]["arguments"] == first["params"]["arguments"]
            assert retry["params"]["requestState"] == irr["requestState"]
            assert retry["params"]["inputResponses"] == {key: reply("echo Capital of France?", stopReason="endTurn")}
            assert wire.requests_written("sampling/createMessage") == []

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_messages_as_strings_dicts_and_structs(era: str) -> None:
    seen: list[dict[str, Any]] = []

    async def body() -> None:
        async with serving(sampling_server(), era, sampling=echo_handler(seen)) as (client, _wire):
            assert text_of(await client.call_tool("mixed")) == "test-model"
            assert seen[-1]["messages"] == [
                {"role": "user", "content": {"type": "text", "text": "first"}},
                {"role": "assistant", "content": {"type": "text", "text": "second"}},
                {"role": "user", "content": {"type": "text", "text": "third"}},
            ]

    run(body)


# ------------------------------------------------------------------ capability gating


@pytest.mark.parametrize("era", ERAS)
def test_lc23_no_sampling_capability_is_missing_capability(era: str) -> None:
    """LC-23: without the client's ``sampling`` nothing is sent; -32021 names ``sampling``."""

    async def body() -> None:
        async with serving(sampling_server(), era) as (client, wire):
            assert "sampling" not in client.capabilities
            with pytest.raises(RequestError) as caught:
                await client.call_tool("ask", {"prompt": "x"})
            assert error_of(caught.value) == (
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                {"requiredCapabilities": {"sampling": {}}},
            )
            assert wire.requests_written("sampling/createMessage") == []
            assert not [m for m in wire.written if (m.get("result") or {}).get("resultType") == "input_required"]

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_tools_need_sampling_tools(era: str) -> None:
    """sampling.mdx: servers MUST NOT send tool-enabled sampling to a client without
    ``sampling.tools``: -32021 naming ``sampling.tools``, nothing sent."""
    seen: list[dict[str, Any]] = []

    async def body() -> None:
        async with serving(sampling_server(), era, sampling=echo_handler(seen)) as (client, wire):
            assert client.capabilities["sampling"] == {}
            with pytest.raises(RequestError) as caught:
                await client.call_tool("weather")
            assert error_of(caught.value) == (
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                {"requiredCapabilities": {"sampling": {"tools": {}}}},
            )
            assert seen == [] and wire.requests_written("sampling/createMessage") == []

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_the_tool_loop_with_sampling_tools(era: str) -> None:
    """sampling.mdx tool loop: tool use, tool results, final text; in the stateless era each
    step is one more retry of the same ``tools/call``."""
    seen: list[dict[str, Any]] = []

    def model(params: dict[str, Any]) -> dict[str, Any]:
        seen.append(params)
        assert params["tools"] == [WEATHER_TOOL] and params["toolChoice"] == {"mode": "auto"}
        if len(params["messages"]) == 1:
            use = {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}}
            return {"role": "assistant", "content": [use], "model": "m", "stopReason": "toolUse"}
        assert params["messages"][-1]["content"][0]["toolUseId"] == "call_1"
        return reply("Paris: 18°C", stopReason="endTurn")

    async def body() -> None:
        async with serving(sampling_server(), era, sampling=model, sampling_tools=True) as (client, wire):
            assert client.capabilities["sampling"] == {"tools": {}}
            assert text_of(await client.call_tool("weather")) == "Paris: 18°C"
            assert len(seen) == 2
            if era == "stateless":
                assert len(wire.tool_calls_received("weather")) == 3  # two input rounds, then complete

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_include_context_needs_sampling_context(era: str) -> None:
    async def body() -> None:
        async with serving(sampling_server(), era, sampling=echo_handler([])) as (client, _wire):
            with pytest.raises(RequestError) as caught:
                await client.call_tool("context_please")
            assert error_of(caught.value)[1] == {"requiredCapabilities": {"sampling": {"context": {}}}}

    run(body)


# ------------------------------------------------------------------ server-side validation


def test_server_refuses_to_send_a_forbidden_conversation() -> None:
    """sampling.mdx message constraints, checked before anything leaves the server."""
    use = {"role": "assistant", "content": {"type": "tool_use", "id": "c1", "name": "t", "input": {}}}
    result = {"type": "tool_result", "toolUseId": "c1", "content": []}
    cases = {
        "role": [{"role": "system", "content": {"type": "text", "text": "x"}}],
        "type": [{"role": "user", "content": {"type": "video", "url": "x"}}],
        "mixed": [use, {"role": "user", "content": [result, {"type": "text", "text": "and"}]}],
        "missing": [use, {"role": "user", "content": {"type": "text", "text": "no result"}}],
        "unanswered": [use],
        "orphan": [{"role": "user", "content": result}],
        "user tool_use": [{"role": "user", "content": use["content"]}],
        "empty": [],
    }
    for name, messages in cases.items():
        with pytest.raises(SamplingProblem):
            parse_messages(messages)
        assert name
    ok = parse_messages(
        [{"role": "user", "content": {"type": "text", "text": "q"}}, use, {"role": "user", "content": result}]
    )
    assert len(ok) == 3
    check_messages(ok)


@pytest.mark.parametrize("era", ERAS)
def test_bad_messages_fail_the_tool_and_nothing_is_sent(era: str) -> None:
    server = Server("bad")

    @server.tool()
    async def bad(ctx: Context) -> str:
        await ctx.sample(
            [{"role": "assistant", "content": {"type": "tool_use", "id": "x", "name": "t", "input": {}}}], max_tokens=5
        )
        return "sent"

    @server.tool()
    async def zero(ctx: Context) -> str:
        await ctx.sample("hi", max_tokens=0)
        return "sent"

    async def body() -> None:
        async with serving(server, era, sampling=echo_handler([]), sampling_tools=True) as (client, wire):
            for tool in ("bad", "zero"):
                with pytest.raises(RequestError) as caught:
                    await client.call_tool(tool)
                assert caught.value.code == INTERNAL_ERROR
            assert wire.requests_written("sampling/createMessage") == []

    run(body)


def test_server_rejects_a_malformed_answer_in_the_retry() -> None:
    """mrtr.mdx error handling: a malformed ``CreateMessageResult`` in ``inputResponses`` is a
    JSON-RPC error (-32602), not a crash (a hand-made retry: our client would not send it)."""

    async def body() -> None:
        async with serving(sampling_server(), "stateless", sampling=echo_handler([])) as (client, _wire):
            params = {"name": "ask", "arguments": {"prompt": "x"}}
            irr = await client.connection.request("tools/call", params)
            [key] = irr["inputRequests"]
            bad = {"role": "assistant", "content": {"type": "text", "text": "no model"}}
            with pytest.raises(RequestError) as caught:
                await client.connection.request(
                    "tools/call", {**params, "inputResponses": {key: bad}, "requestState": irr["requestState"]}
                )
            assert caught.value.code == INVALID_PARAMS

    run(body)


# ------------------------------------------------------------------ client-side validation

BAD_REQUESTS = {
    "no messages": {"maxTokens": 5},
    "bad role": {"messages": [{"role": "system", "content": {"type": "text", "text": "x"}}], "maxTokens": 5},
    "bad content": {"messages": [{"role": "user", "content": {"type": "html", "html": "<b/>"}}], "maxTokens": 5},
    "no maxTokens": {"messages": [{"role": "user", "content": {"type": "text", "text": "x"}}]},
    "mixed results": {
        "messages": [
            {"role": "assistant", "content": {"type": "tool_use", "id": "1", "name": "t", "input": {}}},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "toolUseId": "1", "content": []},
                    {"type": "text", "text": "extra"},
                ],
            },
        ],
        "maxTokens": 5,
    },
}


def test_client_rejects_a_malformed_request_with_invalid_params() -> None:
    """sampling.mdx error handling (-32602): the handler never sees a malformed request."""
    seen: list[dict[str, Any]] = []

    async def body() -> None:
        async with raw_server("handshake", sampling=echo_handler(seen)) as (_client, peer):
            for index, params in enumerate(BAD_REQUESTS.values()):
                peer.send({"id": f"s{index}", "method": "sampling/createMessage", "params": params})
                answer = await peer.next(lambda m, i=index: m.get("id") == f"s{i}")
                assert answer["error"]["code"] == INVALID_PARAMS, answer
            assert seen == []

    run(body)


def test_client_without_sampling_tools_rejects_tools() -> None:
    async def body() -> None:
        async with raw_server("handshake", sampling=echo_handler([])) as (_client, peer):
            params = {
                "messages": [{"role": "user", "content": {"type": "text", "text": "x"}}],
                "maxTokens": 5,
                "tools": [WEATHER_TOOL],
            }
            peer.send({"id": "t", "method": "sampling/createMessage", "params": params})
            answer = await peer.next(lambda m: m.get("id") == "t")
            assert answer["error"]["code"] == INVALID_PARAMS
            assert "sampling.tools" in answer["error"]["message"]

    run(body)


@pytest.mark.parametrize("era", ERAS)
def test_client_rejects_a_malformed_request_in_modern_locally(era: str) -> None:
    """The same check on an MRTR input request: the call fails here, no retry is sent."""

    async def body() -> None:
        async with serving(sampling_server(), era, sampling=echo_handler([])) as (client, wire):
            bad = BAD_REQUESTS["bad role"]
            with pytest.raises((InvalidParams, RequestError)) as caught:
                await client.call_tool("raw", {"params": bad})
            assert caught.value.code == INVALID_PARAMS
            if era == "stateless":
                assert len(wire.tool_calls_received("raw")) == 1
            else:
                [request] = wire.requests_written("sampling/createMessage")
                assert wire.responses_received(request["id"])[0]["error"]["code"] == INVALID_PARAMS

    run(body)


BAD_RESULTS = {
    "no model": {"role": "assistant", "content": {"type": "text", "text": "x"}},
    "bad role": {"role": "system", "content": {"type": "text", "text": "x"}, "model": "m"},
    "bad content": {"role": "assistant", "content": {"type": "video"}, "model": "m"},
    "bad stopReason": {"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m", "stopReason": 3},
    "tool use unasked": {
        "role": "assistant",
        "content": {"type": "tool_use", "id": "1", "name": "t", "input": {}},
        "model": "m",
        "stopReason": "toolUse",
    },
    "toolUse without tool": {**reply("x"), "stopReason": "toolUse"},
    "not an object": ["x"],
}


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("case", list(BAD_RESULTS))
def test_a_bad_handler_result_is_caught_before_it_leaves(era: str, case: str, caplog: Any) -> None:
    """The handler's result is checked: legacy, the server gets -32603 (and the error is
    logged here); modern, the call raises ``SamplingResultError`` and nothing is retried."""

    async def body() -> None:
        async with serving(sampling_server(), era, sampling=lambda params: BAD_RESULTS[case]) as (client, wire):
            if era == "handshake":
                with pytest.raises(RequestError):
                    await client.call_tool("ask", {"prompt": "x"})
                [request] = wire.requests_written("sampling/createMessage")
                [answer] = wire.responses_received(request["id"])
                assert answer["error"]["code"] == INTERNAL_ERROR
                assert "sampling handler" in answer["error"]["message"]
            else:
                with pytest.raises(SamplingResultError, match="sampling handler's result"):
                    await client.call_tool("ask", {"prompt": "x"})
                assert len(wire.tool_calls_received("ask")) == 1

    with caplog.at_level(logging.ERROR, logger="backchannel.client"):
        run(body)
    assert any("sampling handler's result" in record.getMessage() for record in caplog.records)


def test_result_checks() -> None:
    assert check_result(reply("x", stopReason="endTurn"), tools_offered=False).model == "test-model"
    use = {"type": "tool_use", "id": "1", "name": "t", "input": {}}
    typed = check_result(
        {"role": "assistant", "content": [use], "model": "m", "stopReason": "toolUse"}, tools_offered=True
    )
    assert isinstance(typed.content, list)
    with pytest.raises(SamplingProblem):
        check_result({"role": "assistant", "content": [], "model": "m"}, tools_offered=False)
    with pytest.raises(SamplingProblem):
        check_result({"role": "assistant", "content": {"type": "text", "text": ""}, "model": " "}, tools_offered=False)


def test_sampling_capability_follows_the_handler() -> None:
    assert "sampling" not in InputHandlers().capabilities()
    assert "sampling" not in InputHandlers(sampling_tools=True).capabilities()
    assert InputHandlers(sampling=echo_handler([])).capabilities() == {"sampling": {}}
    assert InputHandlers(sampling=echo_handler([]), sampling_tools=True).capabilities() == {"sampling": {"tools": {}}}


@pytest.mark.parametrize("era", ERAS)
def test_an_async_handler_returning_a_struct(era: str) -> None:
    from backchannel.types.sampling import CreateMessageResult

    async def handler(params: dict[str, Any]) -> CreateMessageResult:
        return CreateMessageResult(
            role="assistant", content=TextContent(text="struct"), model="s", stop_reason="endTurn"
        )

    async def body() -> None:
        async with serving(sampling_server(), era, sampling=handler) as (client, _wire):
            assert text_of(await client.call_tool("ask", {"prompt": "x"})) == "s: struct (endTurn)"

    run(body)


def test_named_sampling_question_in_the_stateless_era() -> None:
    server = Server("keys")

    @server.tool()
    async def named(ctx: Context) -> str:
        return (await ctx.sample("q", max_tokens=5, key="capital_question")).model

    async def body() -> None:
        async with serving(server, "stateless", sampling=echo_handler([])) as (client, wire):
            assert text_of(await client.call_tool("named")) == "test-model"
            [_first, retry] = wire.tool_calls_received("named")
            assert list(retry["params"]["inputResponses"]) == ["capital_question"]

    run(body)
