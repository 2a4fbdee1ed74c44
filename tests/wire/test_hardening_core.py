"""Issue #12, items 1-3, on a real stdio wire: input that used to end the process, and an
answer that used to be lost beside a message the encoder could not write.

1. JSON nested deeper than ``MAX_NESTING_DEPTH`` is -32700 with id null, and the next line
   is read; a message at the limit is served.
2. A ``_meta`` value of the wrong JSON type is -32602 naming the field, never a crash.
3. A message that can't be encoded costs only itself: answers queued beside it still leave.

The HTTP side of 1 and 2 is in ``tests/http/test_http_hardening.py``.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
from test_bad_input import WireServer, call, request, stateless_meta, text_of

from backchannel.framing.codec import MAX_NESTING_DEPTH, decode_json, encode_messages, nesting_exceeds
from backchannel.types.errors import MAX_MESSAGE_CHARS, ParseError


def nested(depth: int) -> Any:
    """A JSON value whose nesting is exactly ``depth`` (a list is one level)."""
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


def answers(wire: WireServer, count: int) -> dict[Any, dict[str, Any]]:
    """The next ``count`` responses by id, in whatever order they come (notifications kept aside)."""
    found: dict[Any, dict[str, Any]] = {}
    while len(found) < count:
        message = wire.receive()
        if "method" in message:
            wire.notifications.append(message)
        else:
            found[message["id"]] = message
    return found


def ping_nested_to(total_depth: int, request_id: int) -> dict[str, Any]:
    """A ping whose whole message nests ``total_depth`` levels: message, params, then the list."""
    return request("ping", request_id, {"deep": nested(total_depth - 2)})


# ------------------------------------------------------------------ item 1: nesting


def test_a_deep_nesting_line_is_a_parse_error_and_the_next_line_is_read(unlimited: WireServer) -> None:
    wire = unlimited
    deep = b"[" * 1000 + b"]" * 1000
    wire.send_raw(deep + b"\n" + json.dumps(call("echo", 2, {"text": "next"})).encode() + b"\n")
    error = wire.error(None)
    assert error["code"] == -32700
    assert f"limit of {MAX_NESTING_DEPTH} levels" in error["message"]
    assert text_of(wire.result(2)) == "next"
    wire.assert_alive()


@pytest.mark.parametrize("depth", [10_000, 200_000])
def test_nesting_far_past_the_recursion_limit_does_not_end_the_process(unlimited: WireServer, depth: int) -> None:
    wire = unlimited
    wire.send_raw(b'{"a":' * depth + b"1" + b"}" * depth + b"\n")
    assert wire.error(None)["code"] == -32700
    wire.assert_alive()


def test_both_sides_of_the_nesting_limit(unlimited: WireServer) -> None:
    wire = unlimited
    wire.send(ping_nested_to(MAX_NESTING_DEPTH, 1), ping_nested_to(MAX_NESTING_DEPTH + 1, 2))
    by_id = answers(wire, 2)
    assert by_id[1]["result"] == {}
    assert by_id[None]["error"]["code"] == -32700  # a message that never decoded has no known id
    wire.assert_alive()


def test_decode_json_counts_objects_and_arrays_alike() -> None:
    at_limit = '{"a":' * (MAX_NESTING_DEPTH - 1) + "[]" + "}" * (MAX_NESTING_DEPTH - 1)
    assert decode_json(at_limit.encode()) is not None
    over = '{"a":' * MAX_NESTING_DEPTH + "[]" + "}" * MAX_NESTING_DEPTH
    with pytest.raises(ParseError):
        decode_json(over.encode())
    # Many containers side by side are wide, not deep.
    wide = json.dumps([[{"x": [1]}] for _ in range(5_000)]).encode()
    assert len(decode_json(wide)) == 5_000
    assert not nesting_exceeds(json.loads(wide), 4)
    assert nesting_exceeds(json.loads(wide), 3)


# ------------------------------------------------------------- item 2: _meta types

LOG_LEVEL = "io.modelcontextprotocol/logLevel"
VERSION = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
INFO = "io.modelcontextprotocol/clientInfo"
PROGRESS = "progressToken"

EVERY_WRONG_TYPE: list[Any] = [[], {}, ["debug"], {"level": "debug"}, 1, 1.5, True]


@pytest.mark.parametrize("value", EVERY_WRONG_TYPE, ids=repr)
def test_log_level_of_every_wrong_json_type_is_invalid_params(fresh: WireServer, value: Any) -> None:
    fresh.send(request("tools/list", 1, {"_meta": {**stateless_meta(), LOG_LEVEL: value}}))
    error = fresh.error(1)
    assert error["code"] == -32602
    assert LOG_LEVEL in error["message"]
    fresh.assert_alive(**stateless_meta())


@pytest.mark.parametrize("value", [*EVERY_WRONG_TYPE, None], ids=repr)
def test_protocol_version_of_a_wrong_json_type_is_unsupported_with_the_list(fresh: WireServer, value: Any) -> None:
    fresh.send(request("tools/list", 1, {"_meta": {**stateless_meta(), VERSION: value}}))
    error = fresh.error(1)
    assert error["code"] == -32022
    assert error["data"]["requested"] == value
    assert "2026-07-28" in error["data"]["supported"]
    fresh.assert_alive(**stateless_meta())


@pytest.mark.parametrize("key", [CAPABILITIES, INFO])
@pytest.mark.parametrize("value", [[], "x", 1, True], ids=repr)
def test_envelope_objects_of_a_wrong_json_type_are_invalid_params(fresh: WireServer, key: str, value: Any) -> None:
    fresh.send(request("tools/list", 1, {"_meta": {**stateless_meta(), key: value}}))
    error = fresh.error(1)
    assert error["code"] == -32602
    assert key in error["message"]
    fresh.assert_alive(**stateless_meta())


@pytest.mark.parametrize("value", [[], {}, 1.5, True], ids=repr)
def test_progress_token_of_a_wrong_json_type_is_invalid_params_in_both_eras(wire: WireServer, value: Any) -> None:
    wire.send(call("echo", 1, {"text": "x"}, _meta={PROGRESS: value}))
    assert wire.error(1)["code"] == -32602
    wire.send(call("echo", 2, {"text": "x"}, _meta={**stateless_meta(), PROGRESS: value}))
    assert wire.error(2)["code"] == -32602
    wire.assert_alive()


# ------------------------------------------------------- item 3: encoding failures

UNENCODABLE_SERVER = textwrap.dedent(
    """
    from backchannel.server import Server
    from backchannel.server.context import Context


    class Opaque:
        '''Nothing a JSON encoder knows how to write.'''


    # No redactor: it would turn the object into text first, and this test is about the encoder.
    server = Server("unencodable", "1.0.0", log_redactor=None)


    @server.tool()
    def echo(text: str) -> str:
        return text


    @server.tool()
    def log_opaque(ctx: Context) -> str:
        ctx.log_nowait("info", {"object": Opaque()})
        return "logged"


    server.run()
    """
)


def test_a_log_message_that_cannot_be_encoded_costs_only_itself(tmp_path: Path) -> None:
    script = tmp_path / "unencodable_server.py"
    script.write_text(UNENCODABLE_SERVER, encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    wire = _attach(process)
    try:
        wire.initialize()
        # One read: echo is answered inline, then log_opaque's notification flushes the write
        # queue that holds echo's answer. The log line alone may be lost; both answers leave.
        wire.send(call("echo", 1, {"text": "before"}), call("log_opaque", 2, {}), call("echo", 3, {"text": "after"}))
        by_id = answers(wire, 3)
        assert [text_of(by_id[n]["result"]) for n in (1, 2, 3)] == ["before", "logged", "after"]
        assert not [n for n in wire.notifications if n["method"] == "notifications/message"]
        wire.assert_alive()
        stderr = wire.close()
        assert "could not be encoded as JSON" in stderr
    finally:
        wire.kill()


def _attach(process: subprocess.Popen[bytes]) -> WireServer:
    """A ``WireServer`` reading an already running ``process``."""
    wire = WireServer.__new__(WireServer)
    wire.process = process
    wire._lines = queue.Queue()
    wire._stderr = []
    wire.notifications = []
    wire._readers = [
        threading.Thread(target=wire._pump_stdout, daemon=True),
        threading.Thread(target=wire._pump_stderr, daemon=True),
    ]
    for reader in wire._readers:
        reader.start()
    return wire


def test_an_answer_that_cannot_be_encoded_becomes_an_internal_error_for_its_id() -> None:
    good = {"jsonrpc": "2.0", "id": 1, "result": {}}
    bad_result = {"jsonrpc": "2.0", "id": "two", "result": {"x": object()}}
    bad_notification = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": object()}}
    too_deep_error = {"jsonrpc": "2.0", "id": 3, "error": {"code": 1, "message": "m", "data": nested(5_000)}}
    last = {"jsonrpc": "2.0", "id": 4, "result": {"ok": True}}
    lines = encode_messages([good, bad_result, bad_notification, too_deep_error, last]).splitlines()
    decoded = [json.loads(line) for line in lines]
    assert decoded[0] == good
    assert decoded[1]["id"] == "two" and decoded[1]["error"]["code"] == -32603
    assert decoded[2]["id"] == 3 and decoded[2]["error"]["code"] == -32603
    assert decoded[3] == last
    assert len(decoded) == 4


# ------------------------------------------- errors that echo what the peer sent


@pytest.mark.parametrize(
    "message",
    [
        request("x" * 200_000, 1, {}),  # an unknown method, named in the error
        request("logging/setLevel", 1, {"level": "y" * 200_000}),  # a bad level, echoed
        request("resources/read", 1, {"uri": "z://" + "z" * 200_000}),  # an unknown resource
    ],
    ids=["method", "level", "uri"],
)
def test_an_error_echoing_a_huge_value_is_cut_short(unlimited: WireServer, message: dict[str, Any]) -> None:
    unlimited.send(message)
    error = unlimited.error(1)
    assert error["code"] in (-32601, -32602, -32002)
    assert len(error["message"]) <= MAX_MESSAGE_CHARS + 40
    assert error["message"].endswith("characters cut)")
    unlimited.assert_alive()
