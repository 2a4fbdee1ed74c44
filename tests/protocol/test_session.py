"""The sans-IO session, driven with plain dicts: what goes on the wire and which events come out."""

from __future__ import annotations

from typing import Any

import pytest
from _session_helpers import (
    CLIENT_INFO,
    SERVER_CAPS,
    SERVER_INFO,
    client_session,
    deliver,
    handshake,
    initialize_params,
    initialize_result,
    request,
    server_session,
    stateless_meta,
    tables_empty,
)

from backchannel.protocol.events import (
    CancelIntent,
    CancelRequested,
    ErrorReceived,
    HandshakeCompleted,
    NotificationReceived,
    PeerClosed,
    ProgressReceived,
    RequestReceived,
    ResponseReceived,
)
from backchannel.protocol.session import Session, SessionConfig
from backchannel.protocol.states import SessionState
from backchannel.types import meta as M
from backchannel.types.errors import (
    ConnectionClosed,
    InternalError,
    InvalidParams,
    LocalProtocolError,
    MissingCapability,
    ResourceNotFound,
    UrlElicitationRequired,
)

INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def error_of(message: dict[str, Any]) -> tuple[Any, int]:
    """(id, code) of an error response."""
    assert set(message) == {"jsonrpc", "id", "error"}, message
    assert message["jsonrpc"] == "2.0"
    return message["id"], message["error"]["code"]


def refused(session: Session, message: Any) -> tuple[Any, int]:
    """Feed ``message``; it must cause no event and exactly one error response."""
    pending = session.pending_inbound
    assert session.receive_message(message) == []
    (reply,) = session.outgoing()
    assert session.pending_inbound == pending
    return error_of(reply)


def serving_server() -> Session:
    """A server past the handshake, its queue drained."""
    return handshake()[1]


# ----------------------------------------------------------------- handshake


def test_handshake_lc02_lc03_lc04() -> None:
    """LC-02/LC-03/LC-04: initialize, its result, then the client queues `initialized` by itself."""
    client, server = client_session({"roots": {}}), server_session()
    params = initialize_params("2025-11-25", {"roots": {}})
    rid = client.send_request("initialize", params)
    assert client.state is SessionState.INITIALIZING
    (sent,) = client.outgoing()
    assert sent == {"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": params}

    assert server.receive_message(sent) == [
        RequestReceived(
            id=rid,
            method="initialize",
            params=params,
            era="handshake",
            version="2025-11-25",
            client_capabilities={"roots": {}},
            client_info=CLIENT_INFO,
        )
    ]
    assert server.state is SessionState.INITIALIZING
    result = {**initialize_result("2025-11-25"), "instructions": "be nice"}
    assert server.send_result(rid, result) is True
    (answer,) = server.outgoing()
    assert answer == {"jsonrpc": "2.0", "id": rid, "result": result}
    assert server.state is SessionState.INITIALIZING

    assert client.receive_message(answer) == [
        ResponseReceived(id=rid, method="initialize", result=result),
        HandshakeCompleted(
            version="2025-11-25", peer_info=SERVER_INFO, peer_capabilities=SERVER_CAPS, instructions="be nice"
        ),
    ]
    assert client.state is SessionState.READY
    assert (client.protocol_version, client.era) == ("2025-11-25", "handshake")
    assert client.outgoing() == [INITIALIZED]

    assert server.receive_message(INITIALIZED) == [
        HandshakeCompleted(version="2025-11-25", peer_info=CLIENT_INFO, peer_capabilities={"roots": {}})
    ]
    assert server.state is SessionState.READY
    assert tables_empty(client) and tables_empty(server)


@pytest.mark.parametrize(
    ("requested", "offered"),
    [
        ("2025-06-18", "2025-06-18"),  # LC-09: a supported version is echoed
        ("2025-03-26", "2025-03-26"),
        ("2024-01-01", "2025-11-25"),  # LC-10/LC-11: counter-offer the newest legacy version
        ("2026-07-28", "2025-11-25"),  # the stateless era cannot be negotiated through initialize
    ],
)
def test_version_negotiation_lc09_lc10_lc11(requested: str, offered: str) -> None:
    client, server = client_session(), server_session()
    client.send_request("initialize", initialize_params(requested))
    (event,) = deliver(client, server)
    assert isinstance(event, RequestReceived)
    assert event.version == offered
    assert server.protocol_version == offered
    server.send_result(event.id, initialize_result(event.version))
    events = deliver(server, client)
    assert events[-1] == HandshakeCompleted(version=offered, peer_info=SERVER_INFO, peer_capabilities=SERVER_CAPS)
    assert client.protocol_version == offered
    assert deliver(client, server) == [HandshakeCompleted(version=offered, peer_info=CLIENT_INFO, peer_capabilities={})]


def test_client_refuses_a_version_it_does_not_speak_lc12() -> None:
    """LC-12/LC-13: the offered version is unusable: the handshake fails with -32022, no `initialized`."""
    client = Session(SessionConfig("client", versions=("2025-03-26", "2025-06-18")))
    rid = client.send_request("initialize", initialize_params("2025-06-18"))
    client.outgoing()
    events = client.receive_message({"jsonrpc": "2.0", "id": rid, "result": initialize_result("2025-11-25")})
    assert len(events) == 1
    (event,) = events
    assert isinstance(event, ErrorReceived)
    assert (event.id, event.method, event.error.code) == (rid, "initialize", -32022)
    assert event.error.data["requested"] == "2025-11-25"
    assert "2025-11-25" in event.error.message
    assert client.state is SessionState.NEW
    assert client.protocol_version is None
    assert client.outgoing() == []
    assert tables_empty(client)
    # Back in NEW, the client may try again.
    client.send_request("initialize", initialize_params("2025-03-26"))
    assert client.state is SessionState.INITIALIZING


def test_initialize_error_response_returns_the_client_to_new() -> None:
    client = client_session()
    rid = client.send_request("initialize", initialize_params())
    client.outgoing()
    error = {"code": -32602, "message": "Unsupported protocol version", "data": {"supported": ["x"]}}
    (event,) = client.receive_message({"jsonrpc": "2.0", "id": rid, "error": error})
    assert isinstance(event, ErrorReceived)
    assert event.error.to_error() == error
    assert client.state is SessionState.NEW
    assert client.outgoing() == []


def test_initialize_result_that_is_not_an_object_fails_the_handshake() -> None:
    client = client_session()
    rid = client.send_request("initialize", initialize_params())
    client.outgoing()
    (event,) = client.receive_message({"jsonrpc": "2.0", "id": rid, "result": ["not", "an", "object"]})
    assert isinstance(event, ErrorReceived)
    assert event.method == "initialize"
    assert client.state is SessionState.NEW  # not stuck in INITIALIZING
    assert client.outgoing() == []


def test_server_handshake_error_returns_to_new() -> None:
    server = server_session()
    server.receive_message(request(1, "initialize", initialize_params()))
    assert server.send_error(1, InternalError("no")) is True
    assert server.outgoing() == [{"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "no"}}]
    assert server.state is SessionState.NEW


def test_initialize_with_bad_version_type_is_refused_and_state_stays_new() -> None:
    server = server_session()
    assert refused(server, request(1, "initialize", {"protocolVersion": 2025, "capabilities": {}})) == (
        1,
        -32602,
    )
    assert server.state is SessionState.NEW


def test_second_initialize_is_refused() -> None:
    server = serving_server()
    assert refused(server, request(9, "initialize", initialize_params())) == (9, -32600)
    assert server.state is SessionState.READY


def test_initialized_pipelined_before_the_initialize_result_completes_the_handshake() -> None:
    """A client that sends `initialized` right behind `initialize` must not stop the server answering it."""
    server = server_session()
    server.receive_message(request(1, "initialize", initialize_params()))
    assert server.receive_message(INITIALIZED) == [
        HandshakeCompleted(version="2025-11-25", peer_info=CLIENT_INFO, peer_capabilities={})
    ]
    assert server.state is SessionState.READY
    assert server.send_result(1, initialize_result("2025-11-25")) is True
    assert server.outgoing() == [{"jsonrpc": "2.0", "id": 1, "result": initialize_result("2025-11-25")}]
    assert server.receive_message(INITIALIZED) == []  # a second one is a harmless stray


def test_request_before_initialize_is_refused_with_the_fix_lc01() -> None:
    """LC-01: a handshake-era request before initialize is refused, and the error says what to do."""
    server = server_session()
    assert server.receive_message(request(1, "tools/list")) == []
    (reply,) = server.outgoing()
    assert error_of(reply) == (1, -32600)
    message = reply["error"]["message"]
    assert "tools/list" in message and "initialize" in message and M.PROTOCOL_VERSION in message
    assert server.state is SessionState.NEW
    assert tables_empty(server)


def test_ping_before_initialize_lc05() -> None:
    """LC-05: ping is allowed before the handshake, both ways."""
    server = server_session()
    assert server.receive_message(request("p", "ping")) == [
        RequestReceived(
            id="p", method="ping", params={}, era="handshake", version=None, client_capabilities={}, client_info={}
        )
    ]
    assert server.send_result("p", {}) is True
    assert server.outgoing() == [{"jsonrpc": "2.0", "id": "p", "result": {}}]
    assert server.state is SessionState.NEW

    client = client_session()
    rid = client.send_request("ping")
    assert client.outgoing() == [{"jsonrpc": "2.0", "id": rid, "method": "ping", "params": {}}]
    assert client.state is SessionState.NEW


def test_server_may_not_send_requests_before_initialized_lc06() -> None:
    server = server_session()
    with pytest.raises(LocalProtocolError):
        server.send_request("roots/list")
    assert server.outgoing() == []


# ------------------------------------------------------------- request ids


def test_ids_7_and_string_7_are_distinct() -> None:
    server = serving_server()
    first = server.receive_message(request(7, "tools/list"))
    second = server.receive_message(request("7", "tools/list"))
    assert [e.id for e in first + second] == [7, "7"]  # type: ignore[union-attr]
    assert server.outgoing() == []
    assert server.pending_inbound == 2
    server.send_result("7", {"which": "string"})
    server.send_result(7, {"which": "int"})
    assert server.outgoing() == [
        {"jsonrpc": "2.0", "id": "7", "result": {"which": "string"}},
        {"jsonrpc": "2.0", "id": 7, "result": {"which": "int"}},
    ]
    assert tables_empty(server)


def test_duplicate_in_flight_id_is_refused_and_the_first_still_answered() -> None:
    server = serving_server()
    assert len(server.receive_message(request(3, "tools/list"))) == 1
    assert refused(server, request(3, "tools/call", {"name": "x"})) == (3, -32600)
    assert server.pending_inbound == 1
    assert server.send_result(3, {"tools": []}) is True
    assert server.outgoing() == [{"jsonrpc": "2.0", "id": 3, "result": {"tools": []}}]
    # Once answered, the id may be used again.
    assert len(server.receive_message(request(3, "tools/list"))) == 1


@pytest.mark.parametrize("bad_id", [True, False, 1.5, None, [1], {"a": 1}])
def test_bad_request_ids_are_refused(bad_id: Any) -> None:
    server = serving_server()
    assert refused(server, request(bad_id, "tools/list")) == (None, -32600)


@pytest.mark.parametrize("params", [[1, 2], "x", 3, True])
def test_params_must_be_an_object(params: Any) -> None:
    server = serving_server()
    assert refused(server, request(4, "tools/list", params)) == (4, -32602)


def test_notification_with_bad_params_is_dropped_silently() -> None:
    server = serving_server()
    assert server.receive_message({"jsonrpc": "2.0", "method": "notifications/x", "params": [1]}) == []
    assert server.outgoing() == []


@pytest.mark.parametrize("batch", [[request(1, "ping")], []])
def test_batches_are_refused(batch: list[Any]) -> None:
    server = serving_server()
    assert refused(server, batch) == (None, -32600)


@pytest.mark.parametrize("version", [None, "1.0", 2.0])
def test_jsonrpc_member_is_required(version: Any) -> None:
    server = serving_server()
    message: dict[str, Any] = {"id": 5, "method": "ping"}
    if version is not None:
        message["jsonrpc"] = version
    assert refused(server, message) == (5, -32600)


@pytest.mark.parametrize("value", ["text", 3, None, True])
def test_non_object_messages_are_refused(value: Any) -> None:
    assert refused(serving_server(), value) == (None, -32600)


def test_method_must_be_a_string() -> None:
    assert refused(serving_server(), request(2, 42)) == (2, -32600)  # type: ignore[arg-type]


def test_notifications_are_reported() -> None:
    server = serving_server()
    assert server.receive_message({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}) == [
        NotificationReceived(method="notifications/roots/list_changed", params={})
    ]
    server.send_notification("notifications/message", {"level": "info", "data": "hi"})
    assert server.outgoing() == [
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hi"}}
    ]


def test_invalid_input_is_answered_with_id_null() -> None:
    server = serving_server()
    server.receive_invalid(InvalidParams("bad"))
    assert server.outgoing() == [{"jsonrpc": "2.0", "id": None, "error": {"code": -32602, "message": "bad"}}]


def test_stray_responses_are_ignored() -> None:
    client, _ = handshake()
    assert client.receive_message({"jsonrpc": "2.0", "id": 999, "result": {}}) == []
    assert client.receive_message({"jsonrpc": "2.0", "id": None, "error": {"code": -1, "message": "x"}}) == []
    assert client.outgoing() == []


def test_request_and_response_round_trip() -> None:
    client, server = handshake()
    rid = client.send_request("tools/call", {"name": "echo", "arguments": {"x": 1}})
    (event,) = deliver(client, server)
    assert event == RequestReceived(
        id=rid,
        method="tools/call",
        params={"name": "echo", "arguments": {"x": 1}},
        era="handshake",
        version="2025-11-25",
        client_capabilities={},
        client_info=CLIENT_INFO,
    )
    server.send_result(rid, {"content": [], "isError": False})
    assert deliver(server, client) == [
        ResponseReceived(id=rid, method="tools/call", result={"content": [], "isError": False})
    ]
    assert tables_empty(client) and tables_empty(server)


def test_error_response_reaches_the_client() -> None:
    client, server = handshake()
    rid = client.send_request("tools/call", {"name": "nope"})
    deliver(client, server)
    server.send_error(rid, InvalidParams("Unknown tool: nope", data={"name": "nope"}))
    (event,) = deliver(server, client)
    assert isinstance(event, ErrorReceived)
    assert (event.id, event.method) == (rid, "tools/call")
    assert event.error.to_error() == {
        "code": -32602,
        "message": "Unknown tool: nope",
        "data": {"name": "nope"},
    }


def test_answering_an_unknown_request_is_a_local_error() -> None:
    server = serving_server()
    with pytest.raises(LocalProtocolError):
        server.send_result(1, {})
    with pytest.raises(LocalProtocolError):
        server.send_error(1, InternalError("x"))
    assert server.outgoing() == []


def test_closing_refuses_new_requests_but_answers_those_in_flight() -> None:
    server = serving_server()
    server.receive_message(request(1, "tools/list"))
    server.start_closing()
    assert refused(server, request(2, "tools/list")) == (2, -32600)
    assert server.send_result(1, {"tools": []}) is True
    assert server.outgoing() == [{"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}]


# --------------------------------------------------------- stateless era


def test_stateless_request_is_served_without_handshake() -> None:
    server = server_session()
    meta = stateless_meta(capabilities={"elicitation": {}}, progressToken="t")
    params = {"cursor": "c", "_meta": meta}
    assert server.receive_message(request(1, "tools/list", params)) == [
        RequestReceived(
            id=1,
            method="tools/list",
            params=params,
            era="stateless",
            version="2026-07-28",
            client_capabilities={"elicitation": {}},
            client_info=CLIENT_INFO,
            log_level=None,
        )
    ]
    assert server.state is SessionState.NEW
    assert server.send_result(1, {"tools": []}) is True
    assert server.outgoing() == [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"resultType": "complete", "tools": [], "_meta": {M.SERVER_INFO: SERVER_INFO}},
        }
    ]
    assert server.state is SessionState.NEW
    assert tables_empty(server)


def test_stateless_request_after_a_handshake_leaves_the_session_ready() -> None:
    server = serving_server()
    server.receive_message(request(1, "tools/list", {"_meta": stateless_meta(capabilities={})}))
    assert server.state is SessionState.READY
    server.send_result(1, {"tools": []})
    (answer,) = server.outgoing()
    assert answer["result"]["resultType"] == "complete"


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        (
            {"x": 1, "_meta": {"k": "v"}},
            {"resultType": "complete", "x": 1, "_meta": {M.SERVER_INFO: SERVER_INFO, "k": "v"}},
        ),
        (
            {"resultType": "input_required", "inputRequests": {}},
            {"resultType": "input_required", "inputRequests": {}, "_meta": {M.SERVER_INFO: SERVER_INFO}},
        ),
        (
            {"resultType": "complete", "_meta": {M.SUBSCRIPTION_ID: "s1"}},
            {"resultType": "complete", "_meta": {M.SERVER_INFO: SERVER_INFO, M.SUBSCRIPTION_ID: "s1"}},
        ),
        (
            {"resultType": "complete", "_meta": {M.SERVER_INFO: {"name": "custom"}}},
            {"resultType": "complete", "_meta": {M.SERVER_INFO: {"name": "custom"}}},
        ),
    ],
)
def test_stateless_results_carry_result_type_and_server_info(result: dict[str, Any], expected: dict[str, Any]) -> None:
    server = server_session()
    server.receive_message(request(1, "tools/call", {"_meta": stateless_meta(capabilities={})}))
    server.send_result(1, result)
    assert server.outgoing() == [{"jsonrpc": "2.0", "id": 1, "result": expected}]


@pytest.mark.parametrize("version", ["1900-01-01", "2025-11-25", 20260728])
def test_unsupported_stateless_version(version: Any) -> None:
    server = server_session()
    assert server.receive_message(request(1, "tools/list", {"_meta": stateless_meta(version, {})})) == []
    assert server.outgoing() == [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {
                "code": -32022,
                "message": "Unsupported protocol version",
                "data": {
                    "supported": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
                    "requested": version,
                },
            },
        }
    ]
    assert tables_empty(server)


@pytest.mark.parametrize(
    "meta",
    [
        stateless_meta(),  # no clientCapabilities
        stateless_meta(capabilities=[]),
        stateless_meta(capabilities={}, **{M.CLIENT_INFO: "me"}),
        stateless_meta(capabilities={}, **{M.LOG_LEVEL: "verbose"}),
        stateless_meta(capabilities={}, progressToken=1.5),
    ],
    ids=[
        "no-capabilities",
        "capabilities-not-object",
        "client-info-not-object",
        "bad-log-level",
        "bad-token",
    ],
)
def test_malformed_stateless_meta_is_invalid_params(meta: dict[str, Any]) -> None:
    server = server_session()
    assert refused(server, request(1, "tools/list", {"_meta": meta})) == (1, -32602)


def test_meta_must_be_an_object() -> None:
    assert refused(serving_server(), request(1, "tools/list", {"_meta": "x"})) == (1, -32602)


def test_stateless_log_level_is_reported() -> None:
    server = server_session()
    (event,) = server.receive_message(
        request(1, "tools/list", {"_meta": stateless_meta(capabilities={}, **{M.LOG_LEVEL: "debug"})})
    )
    assert isinstance(event, RequestReceived)
    assert event.log_level == "debug"


def test_client_gets_no_stateless_requests() -> None:
    client = client_session()
    assert refused(client, request(1, "roots/list", {"_meta": stateless_meta(capabilities={})})) == (1, -32600)


def test_legacy_results_lose_result_type() -> None:
    server = serving_server()
    server.receive_message(request(1, "tools/list"))
    server.send_result(1, {"resultType": "complete", "tools": []})
    assert server.outgoing() == [{"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}]


def test_resource_not_found_code_per_era() -> None:
    """-32002 is reserved in the stateless era: resource-not-found goes out as -32602 there."""
    server = serving_server()
    server.receive_message(request(1, "resources/read", {"uri": "file:///x"}))
    server.receive_message(request(2, "resources/read", {"uri": "file:///x", "_meta": stateless_meta(capabilities={})}))
    server.send_error(1, ResourceNotFound("file:///x"))
    server.send_error(2, ResourceNotFound("file:///x"))
    body = {"message": "Resource not found: file:///x", "data": {"uri": "file:///x"}}
    assert server.outgoing() == [
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32002, **body}},
        {"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, **body}},
    ]


def test_url_elicitation_required_is_refused_in_the_stateless_era() -> None:
    server = server_session()
    server.receive_message(request(1, "tools/call", {"_meta": stateless_meta(capabilities={})}))
    with pytest.raises(LocalProtocolError):
        server.send_error(1, UrlElicitationRequired("go to the url"))
    assert server.outgoing() == []
    # The mistake did not lose the request: it can still be answered.
    assert server.send_error(1, InternalError("sorry")) is True
    assert server.outgoing() == [{"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "sorry"}}]


def test_client_in_the_stateless_era_adds_the_meta_envelope() -> None:
    client = client_session({"elicitation": {"form": {}}})
    with pytest.raises(LocalProtocolError):
        client.use_stateless("2025-11-25")
    client.use_stateless()
    rid = client.send_request("tools/list", {"cursor": "c", "_meta": {"progressToken": "p"}})
    assert client.outgoing() == [
        {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "tools/list",
            "params": {
                "cursor": "c",
                "_meta": {
                    "progressToken": "p",
                    M.PROTOCOL_VERSION: "2026-07-28",
                    M.CLIENT_CAPABILITIES: {"elicitation": {"form": {}}},
                    M.CLIENT_INFO: CLIENT_INFO,
                },
            },
        }
    ]
    assert client.state is SessionState.NEW
    assert client.active_progress_tokens == 1


def test_stateless_client_against_server_end_to_end() -> None:
    client, server = client_session({"roots": {}}), server_session()
    client.use_stateless()
    rid = client.send_request("tools/list")
    (event,) = deliver(client, server)
    assert isinstance(event, RequestReceived)
    assert (event.era, event.version, event.client_capabilities) == ("stateless", "2026-07-28", {"roots": {}})
    server.send_result(rid, {"tools": []})
    assert deliver(server, client) == [
        ResponseReceived(
            id=rid,
            method="tools/list",
            result={"resultType": "complete", "tools": [], "_meta": {M.SERVER_INFO: SERVER_INFO}},
        )
    ]
    assert (client.state, server.state) == (SessionState.NEW, SessionState.NEW)


def test_discovery_probe_with_modern_version_argument() -> None:
    client = client_session()
    rid = client.send_request("server/discover", stateless_version="2026-07-28")
    (sent,) = client.outgoing()
    assert sent["id"] == rid
    assert sent["params"]["_meta"][M.PROTOCOL_VERSION] == "2026-07-28"
    assert client.era is None


def test_server_sends_no_stateless_requests() -> None:
    server = server_session()
    with pytest.raises(LocalProtocolError):
        server.send_request("roots/list", stateless_version="2026-07-28")
    assert server.outgoing() == []


# ------------------------------------------------------------------ progress


def progress_note(token: Any, progress: Any, total: Any = None, message: Any = None) -> dict[str, Any]:
    params: dict[str, Any] = {"progressToken": token, "progress": progress}
    if total is not None:
        params["total"] = total
    if message is not None:
        params["message"] = message
    return {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}


def server_with_request(token: Any = "tok", request_id: Any = 1) -> Session:
    server = serving_server()
    params: dict[str, Any] = {"name": "slow"}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    assert len(server.receive_message(request(request_id, "tools/call", params))) == 1
    return server


def test_progress_is_sent_with_the_request_token_pg04() -> None:
    server = server_with_request("tok")
    assert server.send_progress(1, 1, total=10, message="one") is True
    assert server.send_progress(1, 2) is True
    assert server.outgoing() == [progress_note("tok", 1, 10, "one"), progress_note("tok", 2)]


def test_no_progress_without_a_token_pg03() -> None:
    server = server_with_request(None)
    assert server.send_progress(1, 1) is False
    assert server.outgoing() == []


def test_progress_must_increase_pg05() -> None:
    server = server_with_request(0)
    assert server.send_progress(1, 5) is True
    for value in (5, 4, -1):
        with pytest.raises(LocalProtocolError):
            server.send_progress(1, value)
    assert server.outgoing() == [progress_note(0, 5)]
    assert server.send_progress(1, 6) is True  # a bad value does not poison the request
    assert server.outgoing() == [progress_note(0, 6)]


def test_progress_may_be_fractional_pg06() -> None:
    server = server_with_request("f")
    assert server.send_progress(1, 0.5, total=2.5) is True
    assert server.send_progress(1, 0.75, total=2.5) is True
    assert server.outgoing() == [progress_note("f", 0.5, 2.5), progress_note("f", 0.75, 2.5)]


def test_progress_must_be_a_number() -> None:
    server = server_with_request("n")
    for value in ("1", True, None):
        with pytest.raises(LocalProtocolError):
            server.send_progress(1, value)  # type: ignore[arg-type]
    assert server.outgoing() == []


def test_no_progress_after_the_response_pg09_pg18() -> None:
    server = server_with_request("tok")
    server.send_progress(1, 1)
    server.send_result(1, {"content": []})
    with pytest.raises(LocalProtocolError):
        server.send_progress(1, 2)
    assert server.outgoing() == [
        progress_note("tok", 1),
        {"jsonrpc": "2.0", "id": 1, "result": {"content": []}},
    ]


def client_with_progress_request(token: Any = "t1") -> tuple[Session, int | str]:
    client, _ = handshake()
    rid = client.send_request("tools/call", {"name": "slow", "_meta": {"progressToken": token}})
    client.outgoing()
    return client, rid


def test_client_reports_progress_for_its_active_tokens_pg08() -> None:
    client, rid = client_with_progress_request("t1")
    assert client.receive_message(progress_note("t1", 0.5, 4, "half")) == [
        ProgressReceived(request_id=rid, token="t1", progress=0.5, total=4, message="half")
    ]
    assert client.receive_message(progress_note("other", 1)) == []
    assert client.receive_message(progress_note(1, 1)) == []  # int 1 is not "t1", nor "1"
    assert client.receive_message(progress_note("t1", "2")) == []  # not a number
    assert client.outgoing() == []  # a notification is never answered


def test_client_drops_non_increasing_progress_pg05() -> None:
    client, rid = client_with_progress_request(7)
    assert client.receive_message(progress_note(7, 2)) == [
        ProgressReceived(request_id=rid, token=7, progress=2, total=None, message=None)
    ]
    assert client.receive_message(progress_note(7, 2)) == []
    assert client.receive_message(progress_note(7, 1)) == []
    assert client.receive_message(progress_note(7, 3)) == [
        ProgressReceived(request_id=rid, token=7, progress=3, total=None, message=None)
    ]


def test_client_drops_progress_after_the_response_pg18() -> None:
    client, rid = client_with_progress_request("t1")
    client.receive_message({"jsonrpc": "2.0", "id": rid, "result": {}})
    assert client.receive_message(progress_note("t1", 1)) == []
    assert tables_empty(client)


def test_progress_tokens_are_unique_among_active_requests_pg02() -> None:
    client, rid = client_with_progress_request("dup")
    with pytest.raises(LocalProtocolError):
        client.send_request("tools/call", {"_meta": {"progressToken": "dup"}})
    assert client.outgoing() == []
    assert (client.pending_outbound, client.active_progress_tokens) == (1, 1)
    client.receive_message({"jsonrpc": "2.0", "id": rid, "result": {}})
    client.send_request("tools/call", {"_meta": {"progressToken": "dup"}})  # free again
    assert client.active_progress_tokens == 1


@pytest.mark.parametrize("token", [True, 1.5, None, {"a": 1}])
def test_outbound_progress_token_must_be_string_or_integer_pg01(token: Any) -> None:
    client, _ = handshake()
    with pytest.raises(LocalProtocolError):
        client.send_request("tools/call", {"_meta": {"progressToken": token}})
    assert client.outgoing() == []
    assert tables_empty(client)


def test_bad_progress_token_on_initialize_leaves_state_new() -> None:
    client = client_session()
    with pytest.raises(LocalProtocolError):
        client.send_request("initialize", {**initialize_params(), "_meta": {"progressToken": 1.5}})
    assert client.state is SessionState.NEW
    assert client.outgoing() == []


# -------------------------------------------------------------- cancellation


def cancelled_note(request_id: Any, reason: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"requestId": request_id}
    if reason is not None:
        params["reason"] = reason
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}


def test_cancelled_request_gets_no_response_cn08_cn10() -> None:
    server = server_with_request("tok")
    assert server.receive_message(cancelled_note(1, "user gave up")) == [CancelRequested(id=1, reason="user gave up")]
    assert server.send_progress(1, 1) is False
    assert server.send_result(1, {"content": []}) is False
    assert server.outgoing() == []
    assert tables_empty(server)


def test_cancelled_request_error_is_dropped_too() -> None:
    server = server_with_request(None)
    assert server.receive_message(cancelled_note(1)) == [CancelRequested(id=1, reason=None)]
    assert server.send_error(1, InternalError("boom")) is False
    assert server.outgoing() == []


def test_second_cancellation_is_ignored() -> None:
    server = server_with_request(None)
    server.receive_message(cancelled_note(1))
    assert server.receive_message(cancelled_note(1)) == []


@pytest.mark.parametrize(
    "params",
    [{"requestId": 99}, {"requestId": "1"}, {"requestId": True}, {"requestId": None}, {}, {"requestId": [1]}],
)
def test_invalid_cancellations_are_ignored_cn11_cn16(params: dict[str, Any]) -> None:
    server = server_with_request(None, request_id=1)
    assert server.receive_message({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}) == []
    assert server.outgoing() == []
    assert server.send_result(1, {}) is True  # request 1 is untouched


def test_cancel_for_a_finished_request_is_ignored_cn13() -> None:
    server = server_with_request(None)
    server.send_result(1, {})
    server.outgoing()
    assert server.receive_message(cancelled_note(1)) == []
    assert server.outgoing() == []


def test_inbound_initialize_cannot_be_cancelled_cn03() -> None:
    server = server_session()
    server.receive_message(request(1, "initialize", initialize_params()))
    assert server.receive_message(cancelled_note(1)) == []
    assert server.send_result(1, initialize_result("2025-11-25")) is True
    assert server.outgoing() == [{"jsonrpc": "2.0", "id": 1, "result": initialize_result("2025-11-25")}]


def test_outbound_initialize_cannot_be_cancelled_cn03() -> None:
    client = client_session()
    rid = client.send_request("initialize", initialize_params())
    with pytest.raises(LocalProtocolError):
        client.cancel(rid)
    assert [m["method"] for m in client.outgoing()] == ["initialize"]  # type: ignore[index]
    assert client.pending_outbound == 1


def test_cancel_returns_an_intent_and_drops_the_late_answer_cn12() -> None:
    client, server = handshake()
    rid = client.send_request("tools/call", {"name": "slow", "_meta": {"progressToken": "c"}})
    deliver(client, server)
    intent = client.cancel(rid, "timeout")
    assert intent == CancelIntent(request_id=rid, reason="timeout")
    assert client.outgoing() == [intent]
    assert tables_empty(client)
    assert client.cancel(rid) is None  # already given up
    # The server answered before the cancellation reached it: the late answer yields nothing.
    server.send_progress(rid, 1)
    server.send_result(rid, {"content": []})
    assert deliver(server, client) == []
    assert client.outgoing() == []


def test_cancel_intent_as_notification() -> None:
    assert CancelIntent(request_id=3, reason="timeout").as_notification() == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": 3, "reason": "timeout"},
    }
    assert CancelIntent(request_id="a").as_notification() == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": "a"},
    }


def test_cancel_crosses_the_wire_cn08() -> None:
    client, server = handshake()
    rid = client.send_request("tools/call", {"name": "slow"})
    deliver(client, server)
    client.cancel(rid, "bored")
    assert deliver(client, server) == [CancelRequested(id=rid, reason="bored")]
    assert server.send_result(rid, {}) is False
    assert server.outgoing() == []
    assert tables_empty(client) and tables_empty(server)


# -------------------------------------------------------------- capabilities

FORM = {"message": "Which project?", "requestedSchema": {"type": "object", "properties": {}}}
URL = {"mode": "url", "message": "Log in", "url": "https://example.com/login", "elicitationId": "e1"}
SAMPLE = {"messages": [], "maxTokens": 10}


@pytest.mark.parametrize(
    ("caps", "method", "params", "missing"),
    [
        ({}, "elicitation/create", FORM, "elicitation.form"),  # EL-09
        ({"elicitation": {"url": {}}}, "elicitation/create", FORM, "elicitation.form"),
        ({}, "elicitation/create", URL, "elicitation.url"),
        ({"elicitation": {}}, "elicitation/create", URL, "elicitation.url"),
        ({"elicitation": {"form": {}}}, "elicitation/create", URL, "elicitation.url"),
        ({}, "sampling/createMessage", SAMPLE, "sampling"),
        ({"sampling": {}}, "sampling/createMessage", {**SAMPLE, "tools": [{"name": "t"}]}, "sampling.tools"),
        ({}, "roots/list", {}, "roots"),  # RT-17
    ],
)
def test_server_sends_nothing_the_client_did_not_declare_lc21(
    caps: dict[str, Any], method: str, params: dict[str, Any], missing: str
) -> None:
    _, server = handshake(caps)
    with pytest.raises(MissingCapability) as caught:
        server.send_request(method, params)
    assert caught.value.code == -32021
    assert caught.value.capability == missing
    assert server.outgoing() == []
    assert tables_empty(server)


@pytest.mark.parametrize(
    ("caps", "method", "params"),
    [
        ({"elicitation": {}}, "elicitation/create", FORM),  # EL-07: empty means form
        ({"elicitation": {"form": {}}}, "elicitation/create", {**FORM, "mode": "form"}),
        ({"elicitation": {"url": {}}}, "elicitation/create", URL),
        ({"sampling": {}}, "sampling/createMessage", SAMPLE),
        ({"sampling": {"tools": {}}}, "sampling/createMessage", {**SAMPLE, "tools": [{"name": "t"}]}),
        ({"roots": {}}, "roots/list", {}),
        ({"roots": {"listChanged": False}}, "roots/list", {}),
        ({}, "ping", {}),
    ],
)
def test_server_sends_what_the_client_declared(caps: dict[str, Any], method: str, params: dict[str, Any]) -> None:
    _, server = handshake(caps)
    rid = server.send_request(method, params)
    assert server.outgoing() == [{"jsonrpc": "2.0", "id": rid, "method": method, "params": params}]


def test_client_answers_a_server_request() -> None:
    client, server = handshake({"roots": {}})
    rid = server.send_request("roots/list")
    assert deliver(server, client) == [
        RequestReceived(
            id=rid,
            method="roots/list",
            params={},
            era="handshake",
            version="2025-11-25",
            client_capabilities=SERVER_CAPS,
            client_info=SERVER_INFO,
        )
    ]
    client.send_result(rid, {"roots": [{"uri": "file:///w"}]})
    assert deliver(client, server) == [
        ResponseReceived(id=rid, method="roots/list", result={"roots": [{"uri": "file:///w"}]})
    ]


# ------------------------------------------------------------ connection end


def test_connection_lost_fails_every_pending_request() -> None:
    client, server = handshake({"roots": {}})
    first = client.send_request("tools/list")
    second = client.send_request("tools/call", {"name": "x", "_meta": {"progressToken": "p"}})
    gone = client.send_request("tools/list")
    client.cancel(gone)
    server.send_request("roots/list")
    deliver(server, client)
    assert (client.pending_outbound, client.pending_inbound, client.active_progress_tokens) == (2, 1, 1)

    events = client.connection_lost("stdin closed")
    assert [(type(e), getattr(e, "id", None), getattr(e, "method", None)) for e in events] == [
        (ErrorReceived, first, "tools/list"),
        (ErrorReceived, second, "tools/call"),
        (PeerClosed, None, None),
    ]
    for event in events[:2]:
        assert isinstance(event, ErrorReceived)
        assert isinstance(event.error, ConnectionClosed)
        assert "stdin closed" in event.error.message
    assert events[2] == PeerClosed(reason="stdin closed", failed=(first, second))
    assert client.state is SessionState.CLOSED
    assert tables_empty(client)
    with pytest.raises(LocalProtocolError):
        client.send_request("tools/list")
    with pytest.raises(LocalProtocolError):
        client.send_notification("notifications/x")


def test_connection_lost_with_nothing_pending() -> None:
    client = client_session()
    assert client.connection_lost() == [PeerClosed(reason="connection closed", failed=())]
    assert client.state is SessionState.CLOSED


# ---------------------------------------------------------------- no leaks


def test_no_leaks_after_a_thousand_requests() -> None:
    client, server = handshake()
    for n in range(1000):
        token: Any = n if n % 2 else f"t{n}"
        rid = client.send_request("tools/call", {"name": "x", "_meta": {"progressToken": token}})
        mode = n % 4
        if mode == 0:  # answered
            deliver(client, server)
            server.send_progress(rid, 0.5)
            server.send_result(rid, {"n": n})
            events = deliver(server, client)
            assert [type(e) for e in events] == [ProgressReceived, ResponseReceived]
        elif mode == 1:  # cancelled before the server saw it
            client.cancel(rid)
            assert [type(e) for e in deliver(client, server)] == [RequestReceived, CancelRequested]
            assert server.send_result(rid, {}) is False
        elif mode == 2:  # cancelled while the answer was on its way
            deliver(client, server)
            server.send_error(rid, InternalError("x"))
            client.cancel(rid)
            assert deliver(server, client) == []
            assert deliver(client, server) == []
        else:  # the server failed it
            deliver(client, server)
            server.send_error(rid, InvalidParams("x"))
            assert [type(e) for e in deliver(server, client)] == [ErrorReceived]
        assert client.outgoing() == [] and server.outgoing() == []
    assert tables_empty(client) and tables_empty(server)


def test_modern_requests_declare_capabilities_in_their_2026_shape() -> None:
    """roots.listChanged and tasks do not exist in 2026-07-28: a stateless-era request omits them."""
    client = Session(
        SessionConfig("client", capabilities={"roots": {"listChanged": True}, "tasks": {}, "elicitation": {"form": {}}})
    )
    client.use_stateless()
    client.send_request("tools/list")
    (message,) = client.outgoing()
    assert message["params"]["_meta"][M.CLIENT_CAPABILITIES] == {"roots": {}, "elicitation": {"form": {}}}
