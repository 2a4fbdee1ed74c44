"""Every JSON type at every place the client reads from the wire (issue #12, item 2).

The server's questions (``elicitation/create`` in both modes, ``sampling/createMessage``,
``roots/list``), the notifications a client receives, the stateless era's
``InputRequiredResult`` and the results of the client's own calls each get a value
of every JSON type at each place. A question is answered once, with -32600/-32601/
-32602 when it is malformed (never -32603: that is for the client's own failures);
a notification is ignored (``on_log`` sees only well-formed log messages); a malformed
result reaches the caller as ``RemoteProtocolError`` naming the field, never a
``TypeError`` or ``AttributeError``. After each, the client still answers a ping.
"""

from __future__ import annotations

import contextlib
import copy
from pathlib import Path
from typing import Any

import pytest
from _peers import RawServer, bounded, connected_client, set_path
from test_wrong_types import representatives

from backchannel.client.url_flow import UrlElicitation
from backchannel.types.errors import MCPError, RemoteProtocolError
from backchannel.types.logging import LOGGING_LEVELS

EXPECTED = {-32600, -32601, -32602}
FORM = {
    "type": "object",
    "properties": {"name": {"type": "string", "minLength": 1}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name"],
}
QUESTIONS: list[tuple[str, dict[str, Any], list[tuple[Any, ...]]]] = [
    (
        "elicitation/create",
        {"mode": "form", "message": "Who?", "requestedSchema": FORM},
        [
            ("mode",),
            ("message",),
            ("requestedSchema",),
            ("requestedSchema", "type"),
            ("requestedSchema", "properties"),
            ("requestedSchema", "properties", "name"),
            ("requestedSchema", "properties", "name", "type"),
            ("requestedSchema", "properties", "name", "minLength"),
            ("requestedSchema", "properties", "age", "minimum"),
            ("requestedSchema", "required"),
            ("requestedSchema", "required", 0),
        ],
    ),
    (
        "elicitation/create",
        {"mode": "url", "message": "Sign in", "url": "https://example.com/x", "elicitationId": "e1"},
        [("message",), ("url",), ("elicitationId",)],
    ),
    (
        "sampling/createMessage",
        {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5},
        [
            ("messages",),
            ("messages", 0),
            ("messages", 0, "role"),
            ("messages", 0, "content"),
            ("messages", 0, "content", "type"),
            ("maxTokens",),
            ("tools",),
            ("systemPrompt",),
            ("temperature",),
            ("stopSequences",),
            ("includeContext",),
            ("modelPreferences",),
            ("metadata",),
        ],
    ),
    ("roots/list", {}, [("_meta",)]),
    ("ping", {}, [("_meta",)]),
]
NOTIFICATIONS: list[tuple[str, dict[str, Any], list[tuple[Any, ...]]]] = [
    ("notifications/message", {"level": "info", "logger": "x", "data": 1}, [("level",), ("logger",)]),
    ("notifications/elicitation/complete", {"elicitationId": "e1"}, [("elicitationId",)]),
    ("notifications/progress", {"progressToken": 1, "progress": 1}, [("progressToken",), ("progress",), ("total",)]),
    ("notifications/cancelled", {"requestId": 1}, [("requestId",), ("reason",)]),
    ("notifications/resources/updated", {"uri": "x"}, [("uri",)]),
    ("notifications/tools/list_changed", {}, [("_meta",)]),
]
INPUT_REQUIRED = {
    "resultType": "input_required",
    "inputRequests": {"q1": {"method": "roots/list", "params": {}}},
    "requestState": "opaque",
}
INPUT_PLACES = [
    ("inputRequests",),
    ("inputRequests", "q1"),
    ("inputRequests", "q1", "method"),
    ("inputRequests", "q1", "params"),
    ("requestState",),
]
RESULT_PLACES = [("tools",), ("tools", 0), ("tools", 0, "name"), ("tools", 0, "inputSchema"), ("nextCursor",)]
TOOLS = {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}


def _answer_elicitation(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Ada", "age": 3}}


def _answer_url(request: UrlElicitation) -> str:
    assert request.host and isinstance(request.warnings, tuple)  # what a real handler shows first
    return "decline"


def _answer_sampling(params: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m", "stopReason": "endTurn"}


def _options(tmp_path: Path, logs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "elicitation": _answer_elicitation,
        "url_elicitation": _answer_url,
        "sampling": _answer_sampling,
        "roots": [tmp_path],
        "on_log": logs.append,
    }


def test_questions_of_any_type(tmp_path: Path) -> None:
    """The server's questions, each place of each, with each JSON type: one answer, an expected code."""

    async def body() -> None:
        raw = RawServer()
        client = await connected_client(raw, **_options(tmp_path, []))
        try:
            for method, params, places in QUESTIONS:
                for place in [*places, ()]:
                    for value in representatives():
                        sent = set_path(copy.deepcopy(params), place, value)
                        answer = await raw.ask(method, sent)
                        what = f"{method} with {place} = {str(value)[:80]}"
                        if "error" in answer:
                            assert answer["error"]["code"] in EXPECTED, (what, answer)
                        else:
                            assert isinstance(answer.get("result"), dict), (what, answer)
            assert "result" in await raw.ask("ping", None)
            assert raw.problems == []
        finally:
            await client.aclose()
            await raw.stop()

    bounded(body, timeout=120)


def test_notifications_of_any_type_are_ignored(tmp_path: Path) -> None:
    """Malformed notifications change nothing; ``on_log`` only ever sees well-formed log messages."""

    async def body() -> None:
        raw = RawServer()
        logs: list[dict[str, Any]] = []
        client = await connected_client(raw, **_options(tmp_path, logs))
        try:
            for method, params, places in NOTIFICATIONS:
                for place in places:
                    for value in representatives():
                        raw.notify(method, set_path(copy.deepcopy(params), place, value))
            assert "result" in await raw.ask("ping", None)
            assert logs, "the well-formed log messages among them arrive"
            for params in logs:
                assert params["level"] in LOGGING_LEVELS and "data" in params, params
                assert params.get("logger") is None or isinstance(params["logger"], str), params
            await client.ping()
        finally:
            await client.aclose()
            await raw.stop()

    bounded(body, timeout=60)


@pytest.mark.parametrize("place", INPUT_PLACES)
def test_malformed_input_required_is_a_remote_protocol_error(tmp_path: Path, place: tuple[Any, ...]) -> None:
    """Stateless era: an ``InputRequiredResult`` of the wrong shape fails the call with
    ``RemoteProtocolError`` (or an MCP error the answer raised), and the next call works."""

    async def body() -> None:
        for value in representatives():
            raw = RawServer()
            raw.modern = True
            broken = set_path(copy.deepcopy(INPUT_REQUIRED), place, value)
            calls: list[int] = []

            def respond(request: dict[str, Any], broken: Any = broken, calls: list[int] = calls) -> dict[str, Any]:
                calls.append(1)
                if len(calls) == 1:
                    return copy.deepcopy(broken)  # type: ignore[no-any-return]
                return {"resultType": "complete", "content": []}

            raw.on_request = respond
            client = await connected_client(raw, **_options(tmp_path, []))
            try:
                with contextlib.suppress(MCPError):  # refused, by type: not a TypeError or a KeyError
                    await client.call_tool("t")
                result = await client.call_tool("t")
                assert result.content == []
            finally:
                await client.aclose()
                await raw.stop()

    bounded(body, timeout=60)


@pytest.mark.parametrize("place", RESULT_PLACES)
def test_malformed_results_are_remote_protocol_errors(tmp_path: Path, place: tuple[Any, ...]) -> None:
    """A ``tools/list`` result of the wrong shape is ``RemoteProtocolError``, and the next call works."""

    async def body() -> None:
        raw = RawServer()
        pages: list[Any] = []

        def respond(request: dict[str, Any]) -> dict[str, Any]:
            return pages.pop(0) if pages else copy.deepcopy(TOOLS)  # type: ignore[no-any-return]

        raw.on_request = respond
        client = await connected_client(raw, **_options(tmp_path, []))
        try:
            for value in representatives():
                pages.append(set_path(copy.deepcopy(TOOLS), place, value))
                try:
                    await client.list_tools_page()
                except RemoteProtocolError as exc:
                    assert "tools/list" in exc.message
                assert [tool.name for tool in (await client.list_tools_page()).tools] == ["t"]
        finally:
            await client.aclose()
            await raw.stop()

    bounded(body, timeout=60)


def test_probe_with_malformed_discover_result(tmp_path: Path) -> None:
    """A ``server/discover`` result of the wrong shape fails the connection with
    ``RemoteProtocolError``, not a ``ValidationError`` or ``AttributeError``."""

    async def body() -> None:
        for place in [
            ("supportedVersions",),
            ("capabilities",),
            ("_meta",),
            ("_meta", "io.modelcontextprotocol/serverInfo"),
        ]:
            for value in representatives():
                raw = RawServer()
                raw.modern = True

                def answer(
                    request: dict[str, Any], place: Any = place, value: Any = value, raw: RawServer = raw
                ) -> None:
                    if request["method"] != "server/discover":
                        return RawServer._answer(raw, request)
                    result = {
                        "supportedVersions": ["2026-07-28"],
                        "capabilities": {},
                        "resultType": "complete",
                        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "raw"}},
                    }
                    set_path(result, place, value)
                    raw.side.write([{"jsonrpc": "2.0", "id": request["id"], "result": result}])

                raw._answer = answer  # type: ignore[method-assign]
                try:
                    client = await connected_client(raw, **_options(tmp_path, []))
                except RemoteProtocolError:
                    pass
                else:
                    assert isinstance(client.server_info, dict) and isinstance(client.server_capabilities, dict)
                    await client.aclose()
                await raw.stop()

    bounded(body, timeout=60)
