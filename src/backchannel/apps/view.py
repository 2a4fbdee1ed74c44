"""The host's half of the Apps protocol for one rendered app (a View), with no I/O.

SEP-1865 "Communication Protocol": the View speaks JSON-RPC 2.0 with the host over
``postMessage``. ``ViewSession.receive`` takes one message the View posted, whatever it is
(it comes from an untrusted document), and says what to do in a ``Step``: the messages to post
back now (answers, JSON-RPC errors), the host-to-View notifications it may now deliver
(``replay`` to the frame that posted, ``pushes`` to all), what the page must do (resize the
frame, open a link, remove the frame), what to tell the person, and the one request to send the
server on the View's behalf (``Forward``: ``tools/call`` or ``resources/read``), answered later
with ``answered``. The host's own news goes the other way: ``finished`` (the tool's result),
``cancelled`` and ``teardown`` each return a numbered push.

Pushes are numbered from 1 (``{"n": n, "message": ...}``) and replayed whole to every frame that
sends ``ui/notifications/initialized``: the tool's input, then its result, so that a frame that
loads late, or a page that is reloaded, shows the same state and gets nothing before it is
initialized (the spec: "The Host MUST NOT send any request or notification to the View before it
receives an initialized notification"); a frame skips the numbers it has had.

Bad input is answered, never raised: a message that is not a JSON-RPC object, a request before
``ui/initialize``, unknown methods and bad params each get their JSON-RPC error; a malformed
notification is dropped (a notification gets no answer). A ``tools/call`` for a tool the app may
not call (not listed, or whose ``_meta.ui.visibility`` leaves out ``"app"``) is refused by
``refusal`` before anything reaches the server.
"""

from __future__ import annotations

__all__ = ["APPS_PROTOCOL_VERSIONS", "Forward", "Step", "ViewSession"]

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ..types.errors import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND
from .app import app_visibility
from .csp import CSP_KEYS, check_source

#: The Apps protocol revisions this host speaks, newest first ("2026-01-26" is the stable one).
APPS_PROTOCOL_VERSIONS = ("2026-01-26", "2025-11-21")
_DISPLAY_MODES = ("inline", "fullscreen", "pip")
_MAX_SIZE = 20000  # pixels: a size-changed past this is ignored
_SAID = 300  # characters of an app's message or log line shown to the person


@dataclass(frozen=True, slots=True)
class Forward:
    """A request to send the server for the View: ``method`` with ``params`` (only what the host
    chose to pass on). For ``tools/call``, ``tool`` names the tool: check ``refusal`` first."""

    request_id: int | str
    method: str
    params: dict[str, Any]
    tool: str | None = None


@dataclass(slots=True)
class Step:
    """What one message from the View calls for (see the module docstring)."""

    send: list[dict[str, Any]] = field(default_factory=list)
    #: Pushes for this frame only, after its ``initialized``: every one so far, in order.
    replay: list[dict[str, Any]] = field(default_factory=list)
    #: New pushes, for every initialized frame of the View.
    pushes: list[dict[str, Any]] = field(default_factory=list)
    page: list[dict[str, Any]] = field(default_factory=list)
    said: list[str] = field(default_factory=list)
    forward: Forward | None = None


def _error(request_id: object, code: int, message: str) -> Step:
    return Step(send=[{"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}])


def _result(request_id: object, result: dict[str, Any]) -> Step:
    return Step(send=[{"jsonrpc": "2.0", "id": request_id, "result": result}])


def _valid_id(value: object) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _short(value: object) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= _SAID else text[: _SAID - 1] + "…"


class ViewSession:
    """One app shown for one tool call: ``tool`` is the tool's definition, ``arguments`` the call's,
    ``resource`` the app's ``resources/read`` contents (for the CSP and permissions it was given),
    ``host_info`` what the host calls itself, ``call_id`` the id of the ``tools/call`` request."""

    def __init__(
        self,
        view_id: str,
        *,
        tool: Mapping[str, Any],
        arguments: Mapping[str, Any] | None,
        resource: Mapping[str, Any],
        host_info: Mapping[str, Any],
        call_id: int | str | None = None,
    ) -> None:
        self.view_id = view_id
        self.tool = dict(tool)
        self.host_info = dict(host_info)
        self.call_id = call_id
        meta = resource.get("_meta")
        ui = meta.get("ui") if isinstance(meta, Mapping) else None
        self.resource_ui: Mapping[str, Any] = ui if isinstance(ui, Mapping) else {}
        #: Host-to-View notifications so far, numbered from 1.
        self.pushes: list[dict[str, Any]] = []
        #: Set by the first ``ui/initialize``; requests before it are refused.
        self.initialize_seen = False
        #: What the app last asked the model to know (``ui/update-model-context``).
        self.model_context: dict[str, Any] | None = None
        #: The View's last reported size (``ui/notifications/size-changed``).
        self.size: dict[str, float] = {}
        #: The id of the teardown request sent, and whether the View answered it.
        self.teardown_id: str | None = None
        self.torn_down = False
        self.outcome: str | None = None  # "result" or "cancelled", once the tool call ended
        self._push({"method": "ui/notifications/tool-input", "params": {"arguments": dict(arguments or {})}})

    # -- the host's news -------------------------------------------------------------------------

    def _push(self, message: dict[str, Any]) -> dict[str, Any]:
        push = {"n": len(self.pushes) + 1, "message": {"jsonrpc": "2.0", **message}}
        self.pushes.append(push)
        return push

    def finished(self, result: Mapping[str, Any]) -> dict[str, Any]:
        """The tool call's ``CallToolResult``: the push that carries it to the View."""
        self.outcome = "result"
        return self._push({"method": "ui/notifications/tool-result", "params": dict(result)})

    def cancelled(self, reason: str) -> dict[str, Any]:
        """The tool call ended without a result (an error, Ctrl-C): the push that says so."""
        self.outcome = "cancelled"
        return self._push({"method": "ui/notifications/tool-cancelled", "params": {"reason": reason}})

    def teardown(self, reason: str) -> dict[str, Any]:
        """Ask the View to wind down before its frame goes (a request: its answer, or the host's
        wait running out, lets the page remove the frame)."""
        self.teardown_id = f"teardown-{self.view_id}"
        return self._push({"id": self.teardown_id, "method": "ui/resource-teardown", "params": {"reason": reason}})

    # -- the View's messages ---------------------------------------------------------------------

    def receive(self, message: object, context: Mapping[str, Any] | None = None) -> Step:
        """Handle one message the View posted; ``context`` is what the page knows of where it shows
        the View (``theme``, ``width``, ``locale``, ``timeZone``, ``touch``, ``hover``)."""
        if not isinstance(message, dict):
            return _error(None, INVALID_REQUEST, "not a JSON-RPC message: expected a JSON object")
        has_id = "id" in message
        request_id = message.get("id")
        if has_id and not _valid_id(request_id):
            return _error(None, INVALID_REQUEST, "a JSON-RPC id is a string or an integer")
        if message.get("jsonrpc") != "2.0":
            return _error(request_id, INVALID_REQUEST, 'not a JSON-RPC 2.0 message: "jsonrpc" must be "2.0"')
        method = message.get("method")
        if method is None:
            if has_id and ("result" in message or "error" in message):
                return self._response(request_id)
            return _error(request_id, INVALID_REQUEST, "a request or notification needs a method")
        if not isinstance(method, str) or not method:
            return _error(request_id, INVALID_REQUEST, "method must be a non-empty string")
        params = message.get("params")
        if params is None:
            params = {}
        if not has_id:
            return self._notification(method, params) if isinstance(params, dict) else Step()
        if not isinstance(params, dict):
            return _error(request_id, INVALID_PARAMS, f"{_short(method)}: params must be an object")
        assert isinstance(request_id, int | str)
        return self._request(request_id, method, params, context or {})

    def _request(self, request_id: int | str, method: str, params: dict[str, Any], context: Mapping[str, Any]) -> Step:
        if method == "ui/initialize":
            return self._initialize(request_id, params, context)
        if method == "ping":
            return _result(request_id, {})
        if not self.initialize_seen:
            return _error(request_id, INVALID_REQUEST, f"{_short(method)}: send ui/initialize first")
        if method == "tools/call":
            name, arguments = params.get("name"), params.get("arguments")
            if not isinstance(name, str) or not name or not (arguments is None or isinstance(arguments, dict)):
                return _error(request_id, INVALID_PARAMS, "tools/call: name must be a string and arguments an object")
            forwarded = {"name": name, **({"arguments": arguments} if arguments is not None else {})}
            return Step(forward=Forward(request_id, method, forwarded, tool=name))
        if method == "resources/read":
            uri = params.get("uri")
            if not isinstance(uri, str) or not uri:
                return _error(request_id, INVALID_PARAMS, "resources/read: uri must be a string")
            return Step(forward=Forward(request_id, method, {"uri": uri}))
        if method == "ui/open-link":
            url = params.get("url")
            if not isinstance(url, str) or urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).netloc:
                return _error(request_id, INVALID_PARAMS, "ui/open-link: url must be an http or https URL")
            step = _result(request_id, {})
            step.page.append({"open": url})
            return step
        if method == "ui/message":
            text = _message_text(params)
            if params.get("role") != "user" or text is None:
                return _error(request_id, INVALID_PARAMS, 'ui/message: role must be "user" and content text blocks')
            step = _result(request_id, {})
            step.said.append(f"The app says: {_short(text)}")
            return step
        if method == "ui/update-model-context":
            content, structured = params.get("content"), params.get("structuredContent")
            if not (content is None or isinstance(content, list)) or not (
                structured is None or isinstance(structured, dict)
            ):
                return _error(
                    request_id,
                    INVALID_PARAMS,
                    "ui/update-model-context: content is a list, structuredContent an object",
                )
            self.model_context = {k: v for k, v in params.items() if k in ("content", "structuredContent")}
            return _result(request_id, {})
        if method == "ui/request-display-mode":
            if params.get("mode") not in _DISPLAY_MODES:
                return _error(request_id, INVALID_PARAMS, f"ui/request-display-mode: mode is one of {_DISPLAY_MODES}")
            return _result(request_id, {"mode": "inline"})  # the one mode this host shows
        return _error(request_id, METHOD_NOT_FOUND, f"the host does not serve {_short(method)!r} to apps")

    def _initialize(self, request_id: int | str, params: dict[str, Any], context: Mapping[str, Any]) -> Step:
        asked = params.get("protocolVersion")
        if not isinstance(asked, str):
            return _error(request_id, INVALID_PARAMS, "ui/initialize: protocolVersion must be a string")
        self.initialize_seen = True
        version = asked if asked in APPS_PROTOCOL_VERSIONS else APPS_PROTOCOL_VERSIONS[0]
        return _result(
            request_id,
            {
                "protocolVersion": version,
                "hostInfo": self.host_info,
                "hostCapabilities": self._capabilities(),
                "hostContext": self.host_context(context),
            },
        )

    def _capabilities(self) -> dict[str, Any]:
        sandbox: dict[str, Any] = {}
        permissions = self.resource_ui.get("permissions")
        if isinstance(permissions, Mapping) and permissions:
            sandbox["permissions"] = {name: {} for name in permissions if isinstance(name, str)}
        csp = self.resource_ui.get("csp")
        if isinstance(csp, Mapping):
            approved = {key: _valid_sources(csp.get(key)) for key in CSP_KEYS}
            if approved := {key: sources for key, sources in approved.items() if sources}:
                sandbox["csp"] = approved
        return {
            "openLinks": {},
            "serverTools": {},
            "serverResources": {},
            "logging": {},
            **({"sandbox": sandbox} if sandbox else {}),
        }

    def host_context(self, context: Mapping[str, Any]) -> dict[str, Any]:
        """``hostContext`` for ``ui/initialize``: the tool call, and what the page said of itself
        (only the fields it may set, each checked)."""
        host: dict[str, Any] = {
            "toolInfo": {**({"id": self.call_id} if self.call_id is not None else {}), "tool": self.tool},
            "displayMode": "inline",
            "availableDisplayModes": ["inline"],
            "platform": "web",
            "userAgent": f"{self.host_info.get('name', 'host')}/{self.host_info.get('version', '')}",
        }
        theme = context.get("theme")
        host["theme"] = theme if theme in ("light", "dark") else "light"
        width = context.get("width")
        dimensions: dict[str, Any] = {"maxHeight": 4000}
        if isinstance(width, int | float) and not isinstance(width, bool) and 100 <= width <= _MAX_SIZE:
            dimensions["width"] = int(width)
        host["containerDimensions"] = dimensions
        for key, longest in (("locale", 35), ("timeZone", 64)):
            value = context.get(key)
            if isinstance(value, str) and 0 < len(value) <= longest:
                host[key] = value
        device = {key: context[key] for key in ("touch", "hover") if isinstance(context.get(key), bool)}
        if device:
            host["deviceCapabilities"] = device
        return host

    def _notification(self, method: str, params: dict[str, Any]) -> Step:
        if method == "ui/notifications/initialized":
            return Step(replay=list(self.pushes))
        if method == "ui/notifications/size-changed":
            size = {key: params[key] for key in ("width", "height") if _pixels(params.get(key))}
            if not size:
                return Step()
            self.size.update(size)
            return Step(page=[{"resize": size}])
        if method == "notifications/message":
            level = params.get("level")
            shown = level if isinstance(level, str) and level.isalpha() else "info"
            return Step(said=[f"App log ({_short(shown)}): {_short(params.get('data'))}"])
        if method == "ui/notifications/request-teardown":
            if self.teardown_id is not None:
                return Step()
            return Step(pushes=[self.teardown("the app asked to close")])
        return Step()  # a notification the host does not act on: dropped, as JSON-RPC says

    def _response(self, request_id: object) -> Step:
        if request_id is not None and request_id == self.teardown_id and not self.torn_down:
            self.torn_down = True
            return Step(page=[{"close": "torn down"}])
        return Step()  # an answer to nothing we asked: dropped

    # -- answers from the server -----------------------------------------------------------------

    def refusal(self, forward: Forward, tool: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """The error to answer ``forward`` (a ``tools/call``) with when the app may not call the
        tool, given its definition (None: the server lists no such tool); None when it may."""
        if forward.tool is None:
            return None
        if tool is None:
            message = f"tools/call: the server lists no tool {_short(forward.tool)!r}"
        elif "app" not in app_visibility(tool):
            message = (
                f"tools/call: the app may not call {_short(forward.tool)!r} (its _meta.ui.visibility has no 'app')"
            )
        else:
            return None
        return {"jsonrpc": "2.0", "id": forward.request_id, "error": {"code": INVALID_PARAMS, "message": message}}

    @staticmethod
    def answered(
        forward: Forward, result: Mapping[str, Any] | None = None, *, code: int = 0, message: str = "", data: Any = None
    ) -> dict[str, Any]:
        """The View's answer to ``forward``: ``result``, or the server's error (``code``, ``message``)."""
        if result is not None:
            return {"jsonrpc": "2.0", "id": forward.request_id, "result": dict(result)}
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        return {"jsonrpc": "2.0", "id": forward.request_id, "error": error}


def _message_text(params: Mapping[str, Any]) -> str | None:
    content = params.get("content")
    blocks = content if isinstance(content, list) else [content]
    texts = [b.get("text") for b in blocks if isinstance(b, Mapping) and b.get("type") == "text"]
    if not texts or not all(isinstance(t, str) for t in texts):
        return None
    return " ".join(t for t in texts if isinstance(t, str))


def _pixels(value: object) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and 0 <= value <= _MAX_SIZE
    )


def _valid_sources(value: object) -> list[str]:
    kept = []
    for source in value if isinstance(value, list) else []:
        try:
            kept.append(check_source(source))
        except ValueError:
            continue
    return kept
