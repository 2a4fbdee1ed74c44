"""The METHODS table agrees with both schema.ts files."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import msgspec
import pytest
from _shared import SHARED

from backchannel import types as T
from backchannel.types import methods as M
from backchannel.types.versions import VERSIONS

SPEC = SHARED / "spec"
SCHEMAS = {
    "2025-11-25": SPEC / "2025-11-25/schema/schema.ts",
    "2026-07-28": SPEC / "2026-07-28/schema/schema.ts",
}

_INTERFACE = re.compile(r"^export interface (\w+)(?:\s+extends\s+([^{]*?))?\s*\{", re.M | re.S)
_METHOD = re.compile(r'^\s{2}method: "([^"]+)";', re.M)
_UNION = re.compile(r"^export type (\w+) =([^;]*);", re.M | re.S)


@dataclass(frozen=True)
class Schema:
    #: interface name -> (method, kind) for JSON-RPC requests and notifications
    messages: dict[str, tuple[str, str]]
    #: interfaces with a ``method`` that are not JSON-RPC messages (MRTR input requests)
    bare: dict[str, str]
    #: ClientRequest, ServerRequest, ClientNotification, ServerNotification -> member names
    unions: dict[str, set[str]]


def parse(path: Path) -> Schema:
    text = path.read_text()
    headers = list(_INTERFACE.finditer(text))
    parents: dict[str, list[str]] = {}
    methods: dict[str, str] = {}
    for i, header in enumerate(headers):
        name = header.group(1)
        parents[name] = re.findall(r"\b[A-Z]\w*", header.group(2) or "")
        body_end = headers[i + 1].start() if i + 1 < len(headers) else len(text)
        body = text[header.end() : body_end]
        body = body[: body.find("\n}")]
        found = _METHOD.findall(body)
        if found:
            assert len(found) == 1, name
            methods[name] = found[0]

    def ancestors(name: str) -> set[str]:
        seen: set[str] = set()
        todo = [name]
        while todo:
            for parent in parents.get(todo.pop(), []):
                if parent not in seen:
                    seen.add(parent)
                    todo.append(parent)
        return seen

    messages: dict[str, tuple[str, str]] = {}
    bare: dict[str, str] = {}
    for name, method in methods.items():
        up = ancestors(name)
        if up & {"JSONRPCRequest", "Request"}:
            messages[name] = (method, "request")
        elif up & {"JSONRPCNotification", "Notification"}:
            messages[name] = (method, "notification")
        else:
            bare[name] = method
    unions = {
        m.group(1): set(re.findall(r"\b[A-Z]\w*", m.group(2)))
        for m in _UNION.finditer(text)
        if m.group(1) in {"ClientRequest", "ServerRequest", "ClientNotification", "ServerNotification"}
    }
    return Schema(messages, bare, unions)


PARSED = {version: parse(path) for version, path in SCHEMAS.items()}


def test_parser_sees_the_schemas() -> None:
    old, new = PARSED["2025-11-25"], PARSED["2026-07-28"]
    assert old.messages["ListToolsRequest"] == ("tools/list", "request")
    assert old.messages["TaskStatusNotification"] == ("notifications/tasks/status", "notification")
    assert len(old.messages) == 31
    assert old.bare == {}
    assert new.messages["DiscoverRequest"] == ("server/discover", "request")
    assert len(new.messages) == 18
    assert new.bare == {
        "CreateMessageRequest": "sampling/createMessage",
        "ListRootsRequest": "roots/list",
        "ElicitRequest": "elicitation/create",
    }
    assert "ServerRequest" not in new.unions
    assert new.unions["ClientNotification"] == {"CancelledNotification"}


@pytest.mark.parametrize("version", sorted(SCHEMAS))
def test_every_schema_method_is_in_the_table(version: str) -> None:
    for name, (method, kind) in PARSED[version].messages.items():
        spec = M.spec_for(method)
        assert spec is not None, method
        assert spec.method == method
        assert spec.kind == kind, method
        assert version in spec.versions, (name, method)


@pytest.mark.parametrize("version", sorted(SCHEMAS))
def test_senders_match_the_schema_unions(version: str) -> None:
    schema = PARSED[version]
    for union, sender in [
        ("ClientRequest", "client"),
        ("ServerRequest", "server"),
        ("ClientNotification", "client"),
        ("ServerNotification", "server"),
    ]:
        kind: M.Kind = "request" if union.endswith("Request") else "notification"
        expected = {schema.messages[name][0] for name in schema.unions.get(union, set())}
        actual = {spec.method for spec in M.methods_for(version, sender, kind)}
        assert actual == expected, (version, union)


@pytest.mark.parametrize("version", sorted(SCHEMAS))
def test_table_has_nothing_the_schema_lacks(version: str) -> None:
    in_schema = {method for method, _ in PARSED[version].messages.values()}
    in_table = {spec.method for spec in M.METHODS.values() if version in spec.versions}
    assert in_table == in_schema


def test_input_requests_of_2026() -> None:
    bare = set(PARSED["2026-07-28"].bare.values())
    listed = {spec.method for spec in M.METHODS.values() if "2026-07-28" in spec.input_request_versions}
    assert listed == bare == {"elicitation/create", "sampling/createMessage", "roots/list"}
    for method in bare:
        assert M.is_input_request(method, "2026-07-28")
        assert not M.is_input_request(method, "2025-11-25")
        assert not M.exists(method, "2026-07-28", "server")
        assert M.exists(method, "2025-11-25", "server")
        assert not M.exists(method, "2025-11-25", "client")


def test_versions_of_older_revisions() -> None:
    def versions(method: str) -> frozenset[str]:
        spec = M.spec_for(method)
        assert spec is not None
        return spec.versions

    legacy = frozenset({"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"})
    assert versions("ping") == legacy
    assert versions("initialize") == legacy
    assert versions("server/discover") == {"2026-07-28"}
    assert versions("elicitation/create") == {"2025-06-18", "2025-11-25"}
    assert versions("completion/complete") == set(VERSIONS)
    assert versions("tasks/get") == {"2025-11-25"}
    assert versions("notifications/elicitation/complete") == {"2025-11-25"}
    assert versions("subscriptions/listen") == {"2026-07-28"}
    assert versions("notifications/roots/list_changed") == legacy
    for spec in M.METHODS.values():
        assert spec.versions <= set(VERSIONS), spec.method
        assert spec.versions, spec.method


def test_exists() -> None:
    assert M.exists("ping", "2025-03-26", "server")
    assert M.exists("ping", "2025-03-26", "client")
    assert not M.exists("ping", "2026-07-28", "client")
    assert M.exists("notifications/progress", "2025-03-26", "client")
    assert M.exists("notifications/progress", "2025-11-25", "client")
    assert not M.exists("notifications/progress", "2026-07-28", "client")
    assert M.exists("notifications/progress", "2026-07-28", "server")
    assert M.exists("notifications/cancelled", "2026-07-28", "server")
    assert not M.exists("elicitation/create", "2025-03-26", "server")
    assert not M.exists("tools/call", "2025-11-25", "server")
    assert not M.exists("no/such", "2025-11-25", "client")
    assert not M.exists("tools/call", "1900-01-01", "client")
    assert M.spec_for("no/such") is None


def test_mrtr_and_types() -> None:
    assert {spec.method for spec in M.METHODS.values() if spec.mrtr} == {
        "tools/call",
        "prompts/get",
        "resources/read",
    }
    for spec in M.METHODS.values():
        if spec.kind == "notification":
            assert spec.result is None, spec.method
        else:
            assert spec.result is not None, spec.method
        assert spec.params is not None, spec.method
    call = M.METHODS["tools/call"]
    params = msgspec.convert({"name": "x", "arguments": {"a": 1}}, call.params)
    assert params.name == "x"
    assert M.METHODS["resources/read"].params is T.ReadResourceRequestParams
    assert M.METHODS["notifications/message"].params is T.LoggingMessageNotificationParams
    assert M.METHODS["server/discover"].result is T.DiscoverResult
    assert M.METHODS["elicitation/create"].params is T.ElicitRequestParams
