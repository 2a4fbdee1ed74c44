"""Every JSON type at every place the server reads from the wire (issue #12, item 2).

A value of the wrong type must be refused with -32602 naming the field (for a
request) or ignored (for a notification): never a crash, never -32603, and the
session goes on. Each case sets one place of an otherwise valid message, in both
eras, over the in-memory transport (which encodes and decodes every message), and
asserts on what crossed it: exactly one answer with the request's id, an error code
from the expected set, and a ping (handshake era) or ``server/discover`` (stateless
era) answered behind it. The places: envelope fields, ``_meta`` keys, cursors,
names, arguments, URIs, log levels, capabilities, completion refs and arguments,
subscription filters, ``inputResponses`` and ``requestState``, and the client's
answers to the server's own questions (elicitation, roots, sampling).

``test_every_place_every_type`` walks every place with one value of each JSON type;
``test_any_value_anywhere`` lets Hypothesis pick the values (nested, large, odd).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from _peers import RawClient, bounded, set_path
from fuzz_server import make_server
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backchannel.types import meta as M

MODERN = "2026-07-28"
#: -32603 is absent on purpose: a wrong type is the caller's fault, never the server's.
EXPECTED = {-32700, -32600, -32601, -32602, -32002, -32021, -32022}
CAPABILITIES = {"elicitation": {"form": {}, "url": {}}, "roots": {"listChanged": True}, "sampling": {"tools": {}}}
ANSWERS = {
    "elicitation/create": {"action": "accept", "content": {"name": "Ada", "age": 36}},
    "roots/list": {"roots": [{"uri": "file:///tmp/fuzz", "name": "fuzz"}]},
    "sampling/createMessage": {
        "role": "assistant",
        "content": {"type": "text", "text": "hi"},
        "model": "m",
        "stopReason": "endTurn",
    },
}
ANSWER_PLACES = {
    "elicitation/create": [(), ("action",), ("content",), ("content", "name"), ("content", "age")],
    "roots/list": [(), ("roots",), ("roots", 0), ("roots", 0, "uri"), ("roots", 0, "name")],
    "sampling/createMessage": [(), ("role",), ("content",), ("content", "type"), ("content", "text"), ("model",)],
}
CURSOR = "dG9vbHM6Mg=="  # tools:2
#: Places in the client's capabilities: (feature, deeper path).
CAPABILITY_PLACES = [
    ("elicitation", ()),
    ("elicitation", ("form",)),
    ("elicitation", ("url",)),
    ("roots", ()),
    ("roots", ("listChanged",)),
    ("sampling", ()),
    ("sampling", ("tools",)),
]

# (method, valid params, places) for both eras; a place is a path into params.
REQUESTS: list[tuple[str, dict[str, Any], list[tuple[Any, ...]]]] = [
    ("ping", {}, [("_meta",), ("_meta", "progressToken")]),
    ("tools/list", {"cursor": CURSOR}, [("cursor",)]),
    ("prompts/list", {}, [("cursor",)]),
    ("resources/list", {}, [("cursor",)]),
    ("resources/templates/list", {}, [("cursor",)]),
    ("tools/call", {"name": "echo", "arguments": {"text": "x"}}, [("name",), ("arguments",), ("arguments", "text")]),
    (
        "tools/call",
        {"name": "shapes", "arguments": {"items": [1], "table": {"a": 1.0}, "pick": "x"}},
        [
            ("arguments", "items"),
            ("arguments", "items", 0),
            ("arguments", "table"),
            ("arguments", "table", "a"),
            ("arguments", "pick"),
            ("arguments", "flag"),
        ],
    ),
    (
        "tools/call",
        {"name": "chatty", "arguments": {"level": "info"}},
        [("arguments", "level"), ("arguments", "steps")],
    ),
    (
        "prompts/get",
        {"name": "greet", "arguments": {"name": "apple"}},
        [("name",), ("arguments",), ("arguments", "name")],
    ),
    ("resources/read", {"uri": "fuzz://items/7"}, [("uri",)]),
    ("resources/read", {"uri": "fuzz://static/a"}, [("uri",)]),
    (
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "greet"},
            "argument": {"name": "name", "value": "a"},
            "context": {"arguments": {"style": "x"}},
        },
        [
            ("ref",),
            ("ref", "type"),
            ("ref", "name"),
            ("argument",),
            ("argument", "name"),
            ("argument", "value"),
            ("context",),
            ("context", "arguments"),
            ("context", "arguments", "style"),
        ],
    ),
    (
        "completion/complete",
        {"ref": {"type": "ref/resource", "uri": "fuzz://items/{id}"}, "argument": {"name": "id", "value": "a"}},
        [("ref", "uri"), ("argument", "name")],
    ),
]
LEGACY_ONLY: list[tuple[str, dict[str, Any], list[tuple[Any, ...]]]] = [
    ("resources/subscribe", {"uri": "fuzz://static/a"}, [("uri",)]),
    ("resources/unsubscribe", {"uri": "fuzz://static/a"}, [("uri",)]),
    ("logging/setLevel", {"level": "info"}, [("level",)]),
    (
        "initialize",
        {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}},
        [("protocolVersion",), ("capabilities",), ("capabilities", "roots"), ("clientInfo",), ("clientInfo", "name")],
    ),
]
MODERN_ONLY: list[tuple[str, dict[str, Any], list[tuple[Any, ...]]]] = [
    (
        "server/discover",
        {},
        [
            ("_meta", key)
            for key in (M.PROTOCOL_VERSION, M.CLIENT_CAPABILITIES, M.CLIENT_INFO, M.LOG_LEVEL, "progressToken")
        ]
        + [("_meta", M.CLIENT_CAPABILITIES, feature) for feature in ("elicitation", "roots", "sampling")],
    ),
    ("tools/list", {}, [("_meta", M.LOG_LEVEL), ("_meta", M.CLIENT_INFO, "name")]),
    (
        "subscriptions/listen",
        {"notifications": {"toolsListChanged": True, "resourceSubscriptions": ["fuzz://static/a"]}},
        [
            ("notifications",),
            ("notifications", "toolsListChanged"),
            ("notifications", "resourceSubscriptions"),
            ("notifications", "resourceSubscriptions", 0),
        ],
    ),
    (
        "tools/call",
        {"name": "ask", "arguments": {}, "inputResponses": {"q1:elicitation/create": ANSWERS["elicitation/create"]}},
        [("inputResponses",), ("inputResponses", "q1:elicitation/create"), ("requestState",)]
        + [("inputResponses", "q1:elicitation/create", *p) for p in ANSWER_PLACES["elicitation/create"][1:]],
    ),
    (
        "tools/call",
        {"name": "several", "arguments": {}},
        [("_meta", M.CLIENT_CAPABILITIES, feature, *rest) for feature, rest in CAPABILITY_PLACES],
    ),
    (
        "tools/call",
        {"name": "roots", "arguments": {}, "inputResponses": {"q1:roots/list": ANSWERS["roots/list"]}},
        [("inputResponses", "q1:roots/list", *p) for p in ANSWER_PLACES["roots/list"][1:]],
    ),
    (
        "tools/call",
        {
            "name": "sample",
            "arguments": {},
            "inputResponses": {"q1:sampling/createMessage": ANSWERS["sampling/createMessage"]},
        },
        [("inputResponses", "q1:sampling/createMessage", *p) for p in ANSWER_PLACES["sampling/createMessage"][1:]],
    ),
    (
        "prompts/get",
        {
            "name": "confirm",
            "arguments": {"topic": "t"},
            "inputResponses": {"q1:elicitation/create": {"action": "decline"}},
        },
        [("inputResponses", "q1:elicitation/create", "action"), ("inputResponses",)],
    ),
]
#: The client's answers to the server's questions (handshake era): tool to call, question, places.
LEGACY_ANSWERS = [("ask", "elicitation/create"), ("roots", "roots/list"), ("sample", "sampling/createMessage")]
NOTIFICATIONS: list[tuple[str, dict[str, Any], list[tuple[Any, ...]]]] = [
    ("notifications/cancelled", {"requestId": 1, "reason": "r"}, [("requestId",), ("reason",)]),
    (
        "notifications/progress",
        {"progressToken": 1, "progress": 1},
        [("progressToken",), ("progress",), ("total",), ("message",)],
    ),
    ("notifications/roots/list_changed", {}, [("_meta",)]),
    ("notifications/initialized", {}, [("_meta",)]),
    ("notifications/message", {"level": "info", "data": 1}, [("level",)]),
]


def representatives() -> list[Any]:
    """One value of each JSON type, plus the nested, the large and the odd."""
    deep: Any = "leaf"
    for _ in range(100):
        deep = [deep]
    return [
        None,
        True,
        False,
        0,
        -1,
        2**64,
        1.5,
        -0.0,
        "",
        "x",
        "\u202e\x00",
        "y" * 100_000,
        [],
        [1, "a"],
        {},
        {"a": {"b": [None]}},
        deep,
    ]


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=20,
)


def _modern(params: dict[str, Any]) -> dict[str, Any]:
    meta = {
        M.PROTOCOL_VERSION: MODERN,
        M.CLIENT_CAPABILITIES: copy.deepcopy(CAPABILITIES),
        M.CLIENT_INFO: {"name": "x"},
    }
    return {**params, "_meta": {**meta, **params.get("_meta", {})}}


def cases(era: str) -> list[tuple[str, dict[str, Any], tuple[Any, ...]]]:
    table = REQUESTS + (LEGACY_ONLY if era == "handshake" else MODERN_ONLY)
    out = []
    for method, params, places in table:
        base = _modern(params) if era == "stateless" else params
        common = [("_meta",), ("_meta", "progressToken")] if era == "handshake" else [("_meta",)]
        for place in [*places, *common, ()]:
            out.append((method, base, place))
    return out


def _place(params: dict[str, Any], path: tuple[Any, ...], value: Any) -> Any:
    params = copy.deepcopy(params)
    if path and path[0] == "_meta" and "_meta" not in params:
        params["_meta"] = {}
    return set_path(params, path, value)


def _check(answer: dict[str, Any], what: str) -> None:
    if "error" in answer:
        error = answer["error"]
        assert error["code"] in EXPECTED, f"{what}: {error}"
        assert isinstance(error["message"], str) and error["message"], f"{what}: {error}"
    else:
        assert isinstance(answer.get("result"), dict), f"{what}: {answer}"


async def _serve_cases(era: str, work: list[tuple[str, Any, Any]]) -> None:
    """Each (method, params, respond) on one session; checks every answer and liveness."""
    async with RawClient(make_server()) as peer:
        if era == "handshake":
            await peer.initialize(CAPABILITIES)
        for method, params, respond in work:
            what = f"{era} {method} {_short(params)}"
            answer = await peer.request(method, params, respond)
            _check(answer, what)
            if method == "subscriptions/listen" and "result" in answer:
                pytest.fail(f"{what}: a listen stream answered without being cancelled: {answer}")
        await _alive(peer, era)


async def _alive(peer: RawClient, era: str) -> None:
    probe = await peer.request(
        "ping" if era == "handshake" else "server/discover", _modern({}) if era == "stateless" else None
    )
    assert "result" in probe, probe


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 300 else text[:300] + "..."


def _requests_for(era: str, values: list[Any]) -> list[tuple[str, Any, Any]]:
    return [
        (method, params, _answerer(None))
        for method, base, place in cases(era)
        for value in values
        if _answered(method, params := _place(base, place, value), place)
    ]


def _answered(method: str, params: Any, place: tuple[Any, ...]) -> bool:
    """False for a listen request that is valid: it opens a stream, which is (rightly) never
    answered; the subscriptions tests cover those. Its ``_meta`` is covered by other methods."""
    if method != "subscriptions/listen":
        return True
    if place[:1] == ("_meta",):
        return False
    if not isinstance(params, dict):
        return True
    requested = params.get("notifications", {})
    if not isinstance(requested, dict):
        return True
    uris = requested.get("resourceSubscriptions")
    return uris is not None and (not isinstance(uris, list) or not all(isinstance(uri, str) for uri in uris))


def _answerer(mutation: tuple[str, tuple[Any, ...], Any] | None) -> Any:
    def respond(request: dict[str, Any]) -> dict[str, Any] | None:
        method = request["method"]
        body = copy.deepcopy(ANSWERS.get(method, {}))
        if mutation is not None and mutation[0] == method:
            body = set_path(body, mutation[1], copy.deepcopy(mutation[2]))
        return body

    return respond


def _legacy_answers(values: list[Any]) -> list[tuple[str, Any, Any]]:
    work = []
    for tool, question in LEGACY_ANSWERS:
        for place in ANSWER_PLACES[question]:
            for value in values:
                work.append(("tools/call", {"name": tool, "arguments": {}}, _answerer((question, place, value))))
    return work


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_every_place_every_type(era: str) -> None:
    """Each place of each method, with one value of every JSON type."""
    values = representatives()
    work = _requests_for(era, values)
    if era == "handshake":
        work += _legacy_answers(values)
    bounded(lambda: _serve_cases(era, work), timeout=120)


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_notifications_of_any_type_are_ignored(era: str) -> None:
    """A notification with a wrong type gets no answer, and the session goes on."""

    async def body() -> None:
        async with RawClient(make_server()) as peer:
            if era == "handshake":
                await peer.initialize(CAPABILITIES)
            for method, params, places in NOTIFICATIONS:
                for place in places:
                    for value in representatives():
                        sent = _place(_modern(params) if era == "stateless" else params, place, value)
                        peer.write({"jsonrpc": "2.0", "method": method, "params": sent})
            await _alive(peer, era)
            stray = [m for m in peer.seen if "method" not in m and m.get("id") is None]
            assert stray == [], stray

    bounded(body, timeout=60)


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_wrong_id_types_are_refused_with_id_null(era: str) -> None:
    """``id`` of any type but string or integer: -32600 with id null, and the session goes on."""

    async def body() -> None:
        async with RawClient(make_server()) as peer:
            if era == "handshake":
                await peer.initialize(CAPABILITIES)
            params = _modern({}) if era == "stateless" else {}
            for value in [True, 1.5, [], {}, [1], {"a": 1}, None]:
                peer.write({"jsonrpc": "2.0", "id": value, "method": "tools/list", "params": params})
                found = await peer.answers(None)
                assert len(found) == 1 and found[0]["error"]["code"] == -32600, (value, found)
            await _alive(peer, era)

    bounded(body)


def test_declared_capabilities_of_any_type() -> None:
    """Handshake era: ``initialize`` with a capability of any type, then the tools that ask the
    client something: each is answered once (refused or served), never with -32603."""
    server = make_server()

    async def body() -> None:
        for feature, rest in CAPABILITY_PLACES:
            for value in representatives():
                async with RawClient(server) as peer:
                    capabilities = set_path(copy.deepcopy(CAPABILITIES), (feature, *rest), value)
                    answer = await peer.request(
                        "initialize",
                        {"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {"name": "x"}},
                    )
                    _check(answer, f"initialize with capabilities {_short(capabilities)}")
                    if "error" in answer:
                        continue
                    peer.write({"jsonrpc": "2.0", "method": "notifications/initialized"})
                    for tool in ("ask", "roots", "sample", "several"):
                        found = await peer.request("tools/call", {"name": tool, "arguments": {}}, _answerer(None))
                        _check(found, f"{tool} with capabilities {_short(capabilities)}")

    bounded(body, timeout=120)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data(), era=st.sampled_from(["handshake", "stateless"]))
def test_any_value_anywhere(data: st.DataObject, era: str) -> None:
    """Hypothesis picks the place and the value (of any shape), several per session."""
    chosen = data.draw(st.lists(st.sampled_from(cases(era)), min_size=1, max_size=6))
    work = []
    for method, base, place in chosen:
        params = _place(base, place, data.draw(json_values))
        if _answered(method, params, place):
            work.append((method, params, _answerer(None)))
    if era == "handshake" and data.draw(st.booleans()):
        tool, question = data.draw(st.sampled_from(LEGACY_ANSWERS))
        place = data.draw(st.sampled_from(ANSWER_PLACES[question]))
        work.append(
            ("tools/call", {"name": tool, "arguments": {}}, _answerer((question, place, data.draw(json_values))))
        )
    bounded(lambda: _serve_cases(era, work))
