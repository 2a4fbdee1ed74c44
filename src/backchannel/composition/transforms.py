"""Transforms and visibility: a tool shown under another name or shape, and items switched off.

What a server offers can be reshaped without touching the code that offers it, for its own
tools and for its mounts' alike (``Server.mount``)::

    server.mount("ev", command=["node", "server.js", "stdio"])
    server.transform_tool("ev_add", name="add", description="Add two lengths.", hide=["debug"], fix={"units": "cm"})
    server.disable("tool", "ev_*")                     # every client, from now on
    server.enable("tool", "add")                       # a later rule wins over an earlier one
    server.disable("prompt", "setup", session=ctx.connection)  # one session only
    ctx.disable("resource", "ev+file://*")             # the same, from a handler

**A transform** (``Server.transform_tool``) replaces a tool as clients see it: its ``name``,
``title`` or ``description``; arguments it ``hide``s (left out of the ``inputSchema``: the tool
uses its default) and arguments it ``fix``es (left out too, and always sent with the value
given). The tool is listed under its new name only, and a call of the new name reaches it with
the fixed values set; its old name is refused as an unknown tool. A call that sends a hidden or
fixed argument is refused as a tool's arguments are (``isError``, "unexpected argument"), so no
client can set what the server fixed.

**Visibility** (``Server.disable`` / ``Server.enable``, ``Context.disable`` / ``Context.enable``):
each rule names a kind (``"tool"``, ``"prompt"`` or ``"resource"``, which covers templates too)
and ``fnmatch`` patterns of the names clients see (after a transform; a mount's with its prefix:
``ev_*``, ``ev+file://*``). A disabled item is left out of the lists and refused as one that does
not exist: the same error, code and message as an unknown tool, prompt or resource. The rules of
a session (``session=connection``) come before the server's, and among each the rule made last
wins. Each change sends ``notifications/*/list_changed``: to every client for the server's rules,
to that session only for its own. A resource's rules are matched against a listed resource's URI,
a template's URI template, and the URI a read or a subscription names: to hide a template and its
reads, disable a pattern that covers both.

Where it applies: between the middleware and the server's routes (a middleware sees the names
clients see), for requests of both eras. A list page is filtered after it is made, so it may hold
fewer than ``page_size`` items. The rules live in this process: in a fleet of workers
(``run_http(workers=N)``) make them on every worker (from configuration at start). A session of
the stateless era over HTTP is one request, so per-session rules are for handshake-era sessions
(and any stdio connection); for per-caller rules across requests, use a middleware.
"""

from __future__ import annotations

__all__ = ["KINDS", "ToolTransform", "Transforms"]

import dataclasses
import re
import weakref
from collections.abc import Awaitable, Callable, Collection, Mapping
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any, Literal

from ..signatures.signature import InvalidArguments
from ..types.errors import InvalidParams, ResourceNotFound

if TYPE_CHECKING:
    from ..protocol.events import RequestReceived
    from ..runtime.connection import Connection
    from .faces import ListenStreams

Kind = Literal["tool", "prompt", "resource"]
KINDS: tuple[Kind, ...] = ("tool", "prompt", "resource")
#: A rule: the kind it is about, the pattern of names, and whether they are shown.
Rule = tuple[str, str, bool]
#: The notification that tells a client the list of a kind changed.
_CHANGED = {
    "tool": "notifications/tools/list_changed",
    "prompt": "notifications/prompts/list_changed",
    "resource": "notifications/resources/list_changed",
}
#: The list methods: the key of their items, the field naming each, and its kind.
_LISTS = {
    "tools/list": ("tools", "name", "tool"),
    "prompts/list": ("prompts", "name", "prompt"),
    "resources/list": ("resources", "uri", "resource"),
    "resources/templates/list": ("resourceTemplates", "uriTemplate", "resource"),
}
_BY_URI = frozenset(("resources/read", "resources/subscribe", "resources/unsubscribe"))
#: A tool's name as the spec allows it (tools.mdx "Tool names").
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
#: The rules one session may hold (a handler that makes one per call must not grow it forever).
MAX_SESSION_RULES = 256

Inner = Callable[["RequestReceived", "Connection"], Awaitable[dict[str, Any]]]
#: ``failure_result(failure)``: the ``isError`` result of a tool call that failed so (None: not a tool's failure).
FailureResult = Callable[[BaseException], dict[str, Any] | None]


@dataclasses.dataclass(frozen=True, slots=True)
class ToolTransform:
    """Tool ``source`` as clients see it: under ``name``, with ``hide`` and ``fix`` left out of its
    arguments (``Server.transform_tool``)."""

    source: str
    name: str
    title: str | None = None
    description: str | None = None
    hide: frozenset[str] = frozenset()
    fix: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def removed(self) -> frozenset[str]:
        """The arguments clients neither see nor send."""
        return self.hide | self.fix.keys()

    def definition(self, listed: dict[str, Any]) -> dict[str, Any]:
        """The ``tools/list`` entry of the tool as clients see it, made from the one ``listed``."""
        shown = {**listed, "name": self.name}
        if self.title is not None:
            shown["title"] = self.title
        if self.description is not None:
            shown["description"] = self.description
        schema = listed.get("inputSchema")
        removed = self.removed
        if removed and isinstance(schema, dict):
            schema = dict(schema)
            properties = schema.get("properties")
            if isinstance(properties, dict):
                schema["properties"] = {key: value for key, value in properties.items() if key not in removed}
            required = schema.get("required")
            if isinstance(required, list):
                schema["required"] = [key for key in required if key not in removed]
            shown["inputSchema"] = schema
        return shown

    def arguments(self, sent: Any) -> dict[str, Any]:
        """The arguments the tool gets for a call that sent ``sent``: the fixed ones set.
        ``InvalidArguments`` when the call sends one it may not."""
        if sent is None:
            sent = {}
        if not isinstance(sent, dict):
            return sent  # type: ignore[no-any-return]  # (the tool's own check words the refusal)
        if unexpected := [key for key in sent if key in self.removed]:
            text = "; ".join(f"{key}: unexpected argument" for key in unexpected)
            details = [
                {"path": [key], "message": "unexpected argument", "type": "unexpected_argument"} for key in unexpected
            ]
            raise InvalidArguments(f"Invalid arguments for tool {self.name!r}: {text}", data={"errors": details})
        return {**sent, **self.fix} if self.fix else sent


class Transforms:
    """A server's tool transforms and visibility rules (``Server.transforms``).

    The server makes it at its first transform or rule. It is false (``active``) until one is
    made, and the server's paths skip it while it is. ``everyone(method)`` tells every client a
    list changed (the server's ``list_changed_here``); ``subscriptions`` are the server's listen
    streams (a session's rule is told to the streams of its connection); ``own_tool(name)`` is
    the definition of a tool of the server's own; ``failure_result`` makes the result of a call
    refused for an argument it may not send, as the server makes any tool's."""

    def __init__(
        self,
        everyone: Callable[[str], None],
        subscriptions: ListenStreams,
        own_tool: Callable[[str], dict[str, Any] | None],
        failure_result: FailureResult,
    ) -> None:
        self.active = False
        self._everyone = everyone
        self._subscriptions = subscriptions
        self._own_tool = own_tool
        self._failure_result = failure_result
        self._by_source: dict[str, ToolTransform] = {}
        self._by_name: dict[str, ToolTransform] = {}
        self._rules: tuple[Rule, ...] = ()
        self._sessions: weakref.WeakKeyDictionary[Connection, tuple[Rule, ...]] = weakref.WeakKeyDictionary()

    def __bool__(self) -> bool:
        return self.active

    # ------------------------------------------------------------ transforms

    def add_tool(
        self,
        source: str,
        *,
        name: str | None,
        title: str | None,
        description: str | None,
        hide: Collection[str],
        fix: Mapping[str, Any] | None,
    ) -> ToolTransform:
        """Show tool ``source`` as ``Server.transform_tool`` says; ``ValueError`` for one that can't be."""
        if isinstance(hide, str):
            raise TypeError(f"hide must be a list of argument names, not the string {hide!r}")
        transform = ToolTransform(source, name or source, title, description, frozenset(hide), dict(fix or {}))
        if transform.hide & transform.fix.keys():
            raise ValueError(f"transform of {source!r}: an argument is hidden or fixed, not both")
        if not _TOOL_NAME.match(transform.name):
            raise ValueError(f"transform of {source!r}: {transform.name!r} is not a valid tool name")
        if source in self._by_source:
            raise ValueError(f"tool {source!r} is transformed already (remove_transform first)")
        taken = self._by_name.get(transform.name)
        if taken is not None or (transform.name != source and self._own_tool(transform.name) is not None):
            raise ValueError(f"transform of {source!r}: a tool named {transform.name!r} is shown already")
        own = self._own_tool(source)
        if own is not None:
            _check_arguments(transform, own)
        self._by_source[source] = transform
        self._by_name[transform.name] = transform
        self.active = True
        self._everyone(_CHANGED["tool"])
        return transform

    def remove_tool(self, source: str) -> None:
        """Show tool ``source`` as it is again (``KeyError`` if it is not transformed)."""
        transform = self._by_source.pop(source)
        del self._by_name[transform.name]
        self._everyone(_CHANGED["tool"])

    def tool(self, name: str) -> ToolTransform | None:
        """The transform that shows a tool as ``name``, if any."""
        return self._by_name.get(name)

    # ------------------------------------------------------------ visibility

    def switch(self, kind: str, patterns: tuple[str, ...], shown: bool, session: Connection | None) -> None:
        """Add the rule that ``patterns`` of ``kind`` are ``shown`` (or not), for ``session`` or for
        everyone, and tell whom it concerns that the list changed."""
        if kind not in _CHANGED:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
        if not patterns or not all(isinstance(pattern, str) and pattern for pattern in patterns):
            raise ValueError("name at least one item (a name or an fnmatch pattern)")
        rules = self._rules if session is None else self._sessions.get(session, ())
        kept = tuple(rule for rule in rules if not (rule[0] == kind and rule[1] in patterns))
        changed = kept + tuple((kind, pattern, shown) for pattern in patterns)
        if changed == rules:
            return
        if session is None:
            self._rules = changed
        else:
            if len(changed) > MAX_SESSION_RULES:
                raise ValueError(f"a session holds at most {MAX_SESSION_RULES} visibility rules")
            self._sessions[session] = changed
        self.active = True
        method = _CHANGED[kind]
        if session is None:
            self._everyone(method)
            return
        if session.handshake_completed is not None and not session.closed.is_set():
            session.notify(method)
        self._subscriptions.list_changed(method, only=session)

    def session_rules(self, connection: Connection) -> tuple[Rule, ...]:
        """The rules of ``connection``'s session alone (what a cache of lists must tell apart)."""
        return self._sessions.get(connection, ())

    def shown(self, kind: str, name: str, connection: Connection) -> bool:
        """Whether the item ``name`` of ``kind`` is shown on ``connection``."""
        return _shown(self._ordered(connection), kind, name)

    def _ordered(self, connection: Connection) -> tuple[Rule, ...]:
        """The rules that apply on ``connection``, the deciding one first: the session's (latest
        first), then the server's."""
        return self._sessions.get(connection, ())[::-1] + self._rules[::-1]

    # ------------------------------------------------------------ serving

    def inward(self, method: str, params: Any) -> Any:
        """``params`` with a transformed tool's name as the server knows it (to ask its scopes)."""
        if method == "tools/call" and isinstance(params, dict):
            transform = self._by_name.get(params.get("name"))  # type: ignore[arg-type]
            if transform is not None:
                return {**params, "name": transform.source}
        return params

    async def answer(self, request: RequestReceived, connection: Connection, inner: Inner) -> dict[str, Any]:
        """``request`` answered by ``inner`` as the server offers it (names as clients see them,
        hidden items refused as unknown), and a list's page as clients see it."""
        method = request.method
        listing = _LISTS.get(method)
        if listing is not None:
            return self._listed(await inner(request, connection), listing, connection)
        params = request.params
        rules = self._ordered(connection)
        if method == "tools/call":
            name = params.get("name")
            if isinstance(name, str):
                transform = self._by_name.get(name)
                if (transform is None and name in self._by_source) or not _shown(rules, "tool", name):
                    raise InvalidParams(f"Unknown tool: {name}", data={"name": name})  # as routes._tool_named
                if transform is not None:
                    try:
                        arguments = transform.arguments(params.get("arguments"))
                    except InvalidArguments as refused:
                        result = self._failure_result(refused)
                        assert result is not None
                        return result
                    request = dataclasses.replace(
                        request, params={**params, "name": transform.source, "arguments": arguments}
                    )
        elif method == "prompts/get":
            name = params.get("name")
            if isinstance(name, str) and not _shown(rules, "prompt", name):
                raise InvalidParams(f"Unknown prompt: {name}", data={"name": name})  # as routes.get_prompt
        elif method in _BY_URI:
            uri = params.get("uri")
            if isinstance(uri, str) and not _shown(rules, "resource", uri):
                raise ResourceNotFound(uri)
        elif method == "completion/complete":
            _check_completion(rules, params.get("ref"))
        return await inner(request, connection)

    def _listed(self, result: dict[str, Any], listing: tuple[str, str, str], connection: Connection) -> dict[str, Any]:
        key, field, kind = listing
        items = result.get(key)
        if not isinstance(items, list):
            return result
        rules = self._ordered(connection)
        shown: list[Any] = []
        for item in items:
            name = item.get(field) if isinstance(item, dict) else None
            if not isinstance(name, str):
                shown.append(item)
                continue
            if kind == "tool":
                transform = self._by_source.get(name)
                if transform is not None:
                    item = transform.definition(item)
                    name = transform.name
                elif name in self._by_name:
                    continue  # a transform shows another tool under this name
            if _shown(rules, kind, name):
                shown.append(item)
        return {**result, key: shown}


def _shown(rules: tuple[Rule, ...], kind: str, name: str) -> bool:
    for rule_kind, pattern, shown in rules:
        if rule_kind == kind and fnmatchcase(name, pattern):
            return shown
    return True


def _check_completion(rules: tuple[Rule, ...], ref: Any) -> None:
    """Refuse a completion for a hidden prompt or resource as ``completion_request`` refuses an unknown one."""
    if not isinstance(ref, dict) or not rules:
        return
    if ref.get("type") == "ref/prompt":
        name = ref.get("name")
        if isinstance(name, str) and not _shown(rules, "prompt", name):
            raise InvalidParams(f"completion/complete: unknown prompt {name!r}", data={"name": name})
    else:
        uri = ref.get("uri")
        if isinstance(uri, str) and not _shown(rules, "resource", uri):
            raise InvalidParams(f"completion/complete: unknown resource template {uri!r}", data={"uri": uri})


def _check_arguments(transform: ToolTransform, definition: dict[str, Any]) -> None:
    """``ValueError`` for a transform that removes an argument the tool does not have, or hides one
    it needs (a required argument has no default to fall back on: ``fix`` it instead)."""
    schema = definition.get("inputSchema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    required = schema.get("required") if isinstance(schema, dict) else None
    if isinstance(properties, dict):
        unknown = sorted(key for key in transform.removed if key not in properties)
        if unknown:
            raise ValueError(f"transform of {transform.source!r}: the tool has no argument {', '.join(unknown)}")
    needed = sorted(key for key in transform.hide if isinstance(required, list) and key in required)
    if needed:
        raise ValueError(
            f"transform of {transform.source!r}: {', '.join(needed)} is required, so it cannot be hidden "
            "(fix it instead)"
        )
