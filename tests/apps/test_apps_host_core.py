"""The host's half of MCP Apps without a browser: ``ViewSession`` (every kind of message an app may
post, good and bad), the CSP a host builds from a server's metadata, and where it goes in the
document (SEP-1865, "Host Behavior", "Content Security Policy Enforcement", "Sandbox proxy")."""

from __future__ import annotations

from typing import Any

import pytest

from backchannel.apps import ViewSession, allow_attribute, content_security_policy, with_policy

TOOL = {"name": "clock", "inputSchema": {"type": "object"}, "_meta": {"ui": {"resourceUri": "ui://clock"}}}
RESOURCE = {
    "uri": "ui://clock",
    "_meta": {
        "ui": {
            "csp": {"connectDomains": ["https://api.example.com", "https://x; script-src *"]},
            "permissions": {"camera": {}, "usb": {}},
        }
    },
}


def _view() -> ViewSession:
    return ViewSession("1", tool=TOOL, arguments={"city": "Oslo"}, resource=RESOURCE, host_info={"name": "h"})


def _initialized(view: ViewSession) -> None:
    hello = {"protocolVersion": "2026-01-26", "appInfo": {"name": "a", "version": "1"}, "appCapabilities": {}}
    step = view.receive({"jsonrpc": "2.0", "id": 1, "method": "ui/initialize", "params": hello})
    assert "result" in step.send[0]


def _request(request_id: int, method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def _error(step: Any) -> tuple[object, int]:
    [answer] = step.send
    return answer["id"], answer["error"]["code"]


@pytest.mark.parametrize(
    ("message", "answer"),
    [
        ("text", (None, -32600)),
        ([1, 2], (None, -32600)),
        ({"jsonrpc": "1.0", "id": 3, "method": "ping"}, (3, -32600)),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"}, (None, -32600)),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, (None, -32600)),
        ({"jsonrpc": "2.0", "id": 4}, (4, -32600)),
        ({"jsonrpc": "2.0", "id": 5, "method": 7}, (5, -32600)),
        ({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": [1]}, (6, -32602)),
        ({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "x"}}, (7, -32600)),  # before init
    ],
)
def test_malformed_messages_get_their_json_rpc_errors(message: Any, answer: tuple[object, int]) -> None:
    assert _error(_view().receive(message)) == answer


def test_requests_after_initialize() -> None:
    view = _view()
    assert _error(view.receive({"jsonrpc": "2.0", "id": 1, "method": "ui/initialize", "params": {}})) == (1, -32602)
    _initialized(view)
    cases = [
        ("no/such", {}, -32601),
        ("tools/call", {"name": 3}, -32602),
        ("tools/call", {"name": "x", "arguments": [1]}, -32602),
        ("resources/read", {}, -32602),
        ("ui/open-link", {"url": "javascript:alert(1)"}, -32602),
        ("ui/open-link", {"url": "https://"}, -32602),
        ("ui/message", {"role": "assistant", "content": [{"type": "text", "text": "x"}]}, -32602),
        ("ui/message", {"role": "user", "content": [{"type": "image"}]}, -32602),
        ("ui/update-model-context", {"content": "x"}, -32602),
        ("ui/request-display-mode", {"mode": "tiny"}, -32602),
    ]
    for index, (method, params, code) in enumerate(cases, start=10):
        assert _error(view.receive(_request(index, method, params))) == (index, code)

    step = view.receive({"jsonrpc": "2.0", "id": 30, "method": "tools/call", "params": {"name": "t", "x": 1}})
    assert step.send == [] and step.forward is not None and step.forward.params == {"name": "t"}
    assert view.refusal(step.forward, None)["error"]["code"] == -32602  # type: ignore[index]
    model_only = {"name": "t", "_meta": {"ui": {"visibility": ["model"]}}}
    assert "may not call 't'" in view.refusal(step.forward, model_only)["error"]["message"]  # type: ignore[index]
    assert view.refusal(step.forward, {"name": "t", "_meta": {"ui": {"visibility": ["app"]}}}) is None
    assert view.refusal(step.forward, {"name": "t"}) is None  # default visibility: model and app
    assert view.answered(step.forward, {"content": []}) == {"jsonrpc": "2.0", "id": 30, "result": {"content": []}}

    link = view.receive({"jsonrpc": "2.0", "id": 31, "method": "ui/open-link", "params": {"url": "https://x.example/"}})
    assert link.page == [{"open": "https://x.example/"}] and link.send[0]["result"] == {}
    said = view.receive(_request(32, "ui/message", {"role": "user", "content": [{"type": "text", "text": "hi"}]}))
    assert said.said == ["The app says: hi"]
    mode = view.receive({"jsonrpc": "2.0", "id": 33, "method": "ui/request-display-mode", "params": {"mode": "pip"}})
    assert mode.send[0]["result"] == {"mode": "inline"}


def test_initialize_answers_with_the_host_context_and_what_it_allows() -> None:
    view = _view()
    hello = {"protocolVersion": "1999-01-01"}
    context = {"theme": "dark", "width": 640, "locale": "nb-NO", "timeZone": "Europe/Oslo", "touch": False, "x": 1}
    result = view.receive(_request(1, "ui/initialize", hello), context).send[0]["result"]
    assert result["protocolVersion"] == "2026-01-26"
    assert result["hostCapabilities"]["sandbox"] == {
        "permissions": {"camera": {}, "usb": {}},
        "csp": {"connectDomains": ["https://api.example.com"]},  # the injected source is not approved
    }
    host = result["hostContext"]
    assert host["toolInfo"] == {"tool": TOOL} and host["theme"] == "dark" and host["locale"] == "nb-NO"
    assert host["containerDimensions"] == {"maxHeight": 4000, "width": 640} and "x" not in host


def test_pushes_wait_for_initialized_and_replay_in_order() -> None:
    view = _view()
    result = view.finished({"content": [{"type": "text", "text": "12:00"}]})
    assert result["n"] == 2
    _initialized(view)
    replay = view.receive({"jsonrpc": "2.0", "method": "ui/notifications/initialized"}).replay
    assert [(p["n"], p["message"]["method"]) for p in replay] == [
        (1, "ui/notifications/tool-input"),
        (2, "ui/notifications/tool-result"),
    ]
    assert replay[0]["message"]["params"] == {"arguments": {"city": "Oslo"}}
    size = view.receive({"jsonrpc": "2.0", "method": "ui/notifications/size-changed", "params": {"height": 300}})
    assert size.page == [{"resize": {"height": 300}}]
    for bad in ({"height": -1}, {"height": float("inf")}, {"width": "9"}, {"height": True}):
        assert view.receive({"jsonrpc": "2.0", "method": "ui/notifications/size-changed", "params": bad}).page == []
    teardown = view.receive({"jsonrpc": "2.0", "method": "ui/notifications/request-teardown"}).pushes
    assert teardown[0]["message"]["method"] == "ui/resource-teardown"
    request_id = teardown[0]["message"]["id"]
    assert view.receive({"jsonrpc": "2.0", "id": "other", "result": {}}).page == []
    assert view.receive({"jsonrpc": "2.0", "id": request_id, "result": {}}).page == [{"close": "torn down"}]


def test_the_policy_allows_only_declared_origins() -> None:
    policy, dropped = content_security_policy(None)  # the spec's restrictive default
    assert "default-src 'none'" in policy and "connect-src 'none'" in policy and "frame-src 'none'" in policy
    assert "base-uri 'self'" in policy and "object-src 'none'" in policy and dropped == []
    given = {
        "connectDomains": ["wss://live.example.com", "https://a.example; script-src *"],
        "resourceDomains": ["https://*.cdn.example", "'unsafe-eval'", 7],
        "frameDomains": ["https://www.youtube.com"],
        "baseUriDomains": "https://not-a-list",
    }
    policy, dropped = content_security_policy(given)
    assert "connect-src wss://live.example.com;" in policy
    assert "script-src 'self' 'unsafe-inline' https://*.cdn.example;" in policy
    assert "frame-src https://www.youtube.com;" in policy and "base-uri 'self'" in policy
    assert "unsafe-eval" not in policy and "script-src *" not in policy
    assert dropped == [
        "connectDomains: 'https://a.example; script-src *'",
        "resourceDomains: \"'unsafe-eval'\"",
        "resourceDomains: 7",
    ]
    assert content_security_policy("nonsense")[1] == ["csp: 'nonsense'"]
    assert allow_attribute({"camera": {}, "clipboardWrite": {}, "usb": {}}) == "camera; clipboard-write"


@pytest.mark.parametrize(
    ("document", "start"),
    [
        ("<!DOCTYPE html><html><script>x()</script>", "<!DOCTYPE html><meta http-equiv"),
        ("\ufeff <!-- c --> <!doctype HTML>\n<html>", "\ufeff <!-- c --> <!doctype HTML><meta http-equiv"),
        ("<html><head><script>x()</script>", "<meta http-equiv"),
    ],
)
def test_the_policy_comes_before_anything_that_runs(document: str, start: str) -> None:
    placed = with_policy(document, "default-src 'none'; script-src 'self'")
    assert placed.startswith(start)
    assert 'content="default-src &#x27;none&#x27;; script-src &#x27;self&#x27;">' in placed
    assert placed.index("<meta http-equiv") < placed.index("<html")
