"""The high-level server: register tools, prompts and resources; serve any transport.

``Server`` is a ``Handler`` for the runtime: one ``handle_request`` routes each
method to a small function here. Registration is plain method calls
(``add_tool``); the decorators are sugar over them.
"""

from __future__ import annotations

__all__ = ["Server"]

import inspect
import os
import secrets
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..protocol.events import NotificationReceived, RequestReceived
from ..protocol.session import Session, SessionConfig
from ..runtime.connection import Connection
from ..runtime.ratelimit import TokenBucket
from ..transports.base import Transport
from ..types.errors import InvalidParams, MethodNotFound, ResourceNotFound
from ..types.methods import methods_for
from ..types.versions import VERSIONS, newer_first
from .completion import CompleterLike, completers_for, handle_complete
from .context import CURRENT_CONTEXT, LOG_LEVELS, Context
from .elicitation import check_forms
from .mrtr import InputRequired, Round, StateSealer
from .pagination import paginate
from .prompts import RegisteredPrompt
from .redaction import Redactor
from .resources import RegisteredResource, RegisteredTemplate, build_resource, to_contents
from .roots import RootsCache
from .signature import InvalidArguments
from .state import MemoryStore, StateStore
from .subscriptions import Subscriptions
from .tools import RegisteredTool, arguments_refused

if TYPE_CHECKING:
    from ..transports.http.app import HttpApp
    from .url_elicitation import UrlElicitations

F = TypeVar("F", bound=Callable[..., Any])
_DEFAULT_REDACTOR = Redactor()
Route = Callable[[RequestReceived, Connection], Any]


@dataclass(slots=True)
class _PerConnection:
    """What the server keeps per connection: the handshake era's log level and resource
    subscriptions, and the log rate limit."""

    log_level: str | None
    bucket: TokenBucket
    subscriptions: set[str] = field(default_factory=set)
    #: Names this connection's entries in the state store (declined forms, stdio ``once`` bucket);
    #: made on first use, as most connections (a stateless-era POST each) never need one.
    scope: str | None = None
    roots: RootsCache = field(default_factory=RootsCache)


class Server:
    """An MCP server that serves handshake-era and stateless-era clients alike.

    ``page_size`` bounds each page of the list methods (None: one page).
    ``log_level`` is the level used for a handshake-era session until the
    client sets one (None: send no log messages until asked).
    ``cache_ttl_ms`` and ``cache_scope`` are the caching hints stateless-era
    list results and ``server/discover`` carry. ``finish_grace`` is how long
    handlers still running may take to answer once the client's input ends.
    Log messages pass ``log_redactor`` (None sends them as they are) and a
    per-connection rate limit of ``log_rate`` a second with bursts of
    ``log_burst``; what the limit drops is counted and reported.
    ``state_key`` seals the ``requestState`` of stateless-era multi-round
    requests (random per process by default: give every worker the same key),
    valid for ``state_ttl`` seconds.
    ``state`` is the store for what the server keeps between requests (``ctx.once``
    results, declined forms); default: a ``MemoryStore`` in this process.
    ``once_limit`` bounds the ``ctx.once`` results one caller may have kept at a
    time; ``decline_ttl`` is how long a declined form is not shown again.
    ``default_roots`` stand in for the roots of a client without the ``roots``
    capability (``ctx.list_roots()`` marks them ``from_client=False``); default:
    the working directory when the server was made.
    """

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        instructions: str | None = None,
        title: str | None = None,
        website_url: str | None = None,
        page_size: int | None = 100,
        log_level: str | None = "info",
        cache_ttl_ms: int = 60_000,
        cache_scope: str = "private",
        versions: tuple[str, ...] = VERSIONS,
        finish_grace: float = 2.0,
        log_redactor: Redactor | None = _DEFAULT_REDACTOR,
        log_rate: float = 50.0,
        log_burst: int = 200,
        state_key: bytes | None = None,
        state_ttl: float = 600.0,
        elicitation_timeout: float = 600.0,
        default_roots: Sequence[str | os.PathLike[str]] | None = None,
        state: StateStore | None = None,
        once_limit: int = 10_000,
        decline_ttl: float = 3600.0,
    ) -> None:
        if page_size is not None and page_size < 1:
            raise ValueError(f"page_size must be a positive number of items or None, not {page_size!r}")
        if log_level is not None and log_level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {log_level!r}")
        self.name = name
        self.version = version
        self.instructions = instructions
        self.info: dict[str, Any] = {"name": name, "version": version}
        if title:
            self.info["title"] = title
        if website_url:
            self.info["websiteUrl"] = website_url
        self.page_size = page_size
        self.default_log_level = log_level
        self.cache_ttl_ms = cache_ttl_ms
        self.cache_scope = cache_scope
        self.versions = versions
        self.finish_grace = finish_grace
        self.log_redactor = log_redactor
        self.log_rate = log_rate
        self.log_burst = log_burst
        self.state_sealer = StateSealer(state_key, state_ttl)
        self.elicitation_timeout = elicitation_timeout
        #: Per-server state that outlives a request: ``ctx.once`` results and declined forms.
        self.state: StateStore = state if state is not None else MemoryStore()
        self.once_limit = once_limit
        self.decline_ttl = decline_ttl
        #: URL-mode elicitation flows and their pages (``http_app()`` serves them); see ``UrlElicitations``.
        self.url_elicitations: UrlElicitations | None = None
        self.default_roots: list[str | os.PathLike[str]] = (
            [Path.cwd()] if default_roots is None else list(default_roots)
        )
        self._tools: dict[str, RegisteredTool] = {}
        self._prompts: dict[str, RegisteredPrompt] = {}
        self._resources: dict[str, RegisteredResource] = {}
        self._templates: list[RegisteredTemplate] = []
        self._connections: weakref.WeakKeyDictionary[Connection, _PerConnection] = weakref.WeakKeyDictionary()
        #: Open ``subscriptions/listen`` streams (stateless era).
        self.subscriptions = Subscriptions()
        self._allowed = {v: frozenset(spec.method for spec in methods_for(v, "client", "request")) for v in versions}
        self._routes: dict[str, Route] = {
            "initialize": self._initialize,
            "ping": self._ping,
            "server/discover": self._discover,
            "tools/list": self._list_tools,
            "tools/call": self._call_tool,
            "prompts/list": self._list_prompts,
            "prompts/get": self._get_prompt,
            "resources/list": self._list_resources,
            "resources/templates/list": self._list_templates,
            "resources/read": self._read_resource,
            "resources/subscribe": self._subscribe,
            "resources/unsubscribe": self._unsubscribe,
            "logging/setLevel": self._set_level,
            "completion/complete": self._complete,
            "subscriptions/listen": self._listen,
        }

    # ------------------------------------------------------------ registry

    def add_tool(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: dict[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        structured_output: bool | None = None,
        input_schema: dict[str, Any] | None = None,
        elicits: Sequence[Any] = (),
    ) -> RegisteredTool:
        """Register ``fn`` as a tool; its signature becomes ``inputSchema`` and its
        return annotation ``outputSchema``. Raises ``TypeError`` for a signature that
        cannot be described, ``ValueError`` for a bad or duplicate name.

        ``input_schema`` replaces the derived ``inputSchema`` verbatim; the
        arguments are then only checked to be an object and, when the schema says
        ``additionalProperties: false``, to name only what it allows. Each key naming a
        parameter of ``fn`` is passed through unconverted (the rest too if ``fn`` takes
        ``**kwargs``).

        ``elicits`` lists the forms the tool passes to ``ctx.elicit`` (types or dict
        schemas): each is checked and built now, so a nested or invalid one raises
        ``FormSchemaError`` naming the field here rather than during a call."""
        tool = RegisteredTool.build(
            fn,
            name=name,
            title=title,
            description=description,
            annotations=annotations,
            icons=icons,
            meta=meta,
            structured_output=structured_output,
            context_type=Context,
            input_schema=input_schema,
        )
        check_forms(f"tool {tool.name!r}", elicits)
        if tool.name in self._tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool
        self._list_changed("notifications/tools/list_changed")
        return tool

    def tool(self, name: str | None = None, **options: Any) -> Callable[[F], F]:
        """Decorator form of ``add_tool``."""

        def register(fn: F) -> F:
            self.add_tool(fn, name=name, **options)
            return fn

        return register

    def remove_tool(self, name: str) -> None:
        del self._tools[name]
        self._list_changed("notifications/tools/list_changed")

    def add_prompt(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        completers: dict[str, CompleterLike] | None = None,
    ) -> RegisteredPrompt:
        """Register ``fn`` as a prompt; its parameters become the prompt's arguments.

        ``completers`` maps argument names to completers (see ``server.completion``);
        they win over ``Complete(...)`` annotations on the parameters."""
        prompt = RegisteredPrompt.build(
            fn, name=name, title=title, description=description, icons=icons, meta=meta, context_type=Context
        )
        arguments = prompt.parameters.input_schema["properties"]
        prompt.completers = completers_for(fn, completers, arguments, label=f"prompt {prompt.name!r}")
        if prompt.name in self._prompts:
            raise ValueError(f"a prompt named {prompt.name!r} is already registered")
        self._prompts[prompt.name] = prompt
        self._list_changed("notifications/prompts/list_changed")
        return prompt

    def prompt(self, name: str | None = None, **options: Any) -> Callable[[F], F]:
        """Decorator form of ``add_prompt``."""

        def register(fn: F) -> F:
            self.add_prompt(fn, name=name, **options)
            return fn

        return register

    def remove_prompt(self, name: str) -> None:
        del self._prompts[name]
        self._list_changed("notifications/prompts/list_changed")

    def add_resource(
        self,
        uri: str,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        icons: list[dict[str, Any]] | None = None,
        annotations: dict[str, Any] | None = None,
        meta: dict[str, Any] | None = None,
        completers: dict[str, CompleterLike] | None = None,
    ) -> RegisteredResource | RegisteredTemplate:
        """Register a resource; a ``uri`` with RFC 6570 ``{variables}`` makes a template
        whose variables are passed to ``fn`` by name. ``completers`` (templates only)
        maps variable names to completers, like ``add_prompt``'s."""
        entry = build_resource(
            uri,
            fn,
            name=name,
            title=title,
            description=description,
            mime_type=mime_type,
            size=size,
            icons=icons,
            annotations=annotations,
            meta=meta,
            context_type=Context,
        )
        if isinstance(entry, RegisteredTemplate):
            label = f"resource template {uri!r}"
            entry.completers = completers_for(fn, completers, entry.template.variables, label=label)
            if any(str(t.template) == uri for t in self._templates):
                raise ValueError(f"a resource template {uri!r} is already registered")
            self._templates.append(entry)
        else:
            if completers:
                raise ValueError(f"resource {uri!r} has no {{variables}} to complete")
            if uri in self._resources:
                raise ValueError(f"a resource {uri!r} is already registered")
            self._resources[uri] = entry
        self._list_changed("notifications/resources/list_changed")
        return entry

    def resource(self, uri: str, **options: Any) -> Callable[[F], F]:
        """Decorator form of ``add_resource``."""

        def register(fn: F) -> F:
            self.add_resource(uri, fn, **options)
            return fn

        return register

    def remove_resource(self, uri: str) -> None:
        if uri in self._resources:
            del self._resources[uri]
        else:
            self._templates = [t for t in self._templates if str(t.template) != uri]
        self._list_changed("notifications/resources/list_changed")

    def tool_definition(self, name: str) -> dict[str, Any] | None:
        """The ``tools/list`` entry of tool ``name``, or None."""
        tool = self._tools.get(name)
        return tool.definition if tool is not None else None

    def http_app(self, path: str = "/mcp", **options: Any) -> HttpApp:
        """This server as an ASGI app speaking Streamable HTTP at ``path``, both eras.

        Mount it in Starlette or FastAPI, or run it with uvicorn. ``options`` go to
        ``HttpApp`` (allowed hosts and origins, authenticator, body limit, idle timeout,
        event store, and the limits: body timeout, caps on requests and sessions)."""
        from ..transports.http.app import HttpApp

        return HttpApp(self, path=path, **options)

    def run_http(
        self,
        host: str = "127.0.0.1",
        port: int = 8000,
        path: str = "/mcp",
        *,
        header_timeout: float | None = 10.0,
        body_timeout: float | None = 30.0,
        max_connections: int | None = 1000,
        retry_after: int = 5,
        **options: Any,
    ) -> None:
        """Serve Streamable HTTP with uvicorn on ``host:port`` (loopback unless told otherwise).

        Each connection is bounded (``transports/http/serving.py``): its request headers must
        arrive within ``header_timeout`` seconds and its body within ``body_timeout`` (else 408),
        and past ``max_connections`` open connections (lowered to fit the file-descriptor limit)
        requests are answered 503 with ``Retry-After: retry_after``; None turns a limit off.
        ``options`` go to ``http_app`` (its ``max_requests`` is off here: the connection cap
        bounds requests; its body clock too: the connection's covers every path).

        URL-elicitation pages are served here too: ``url_elicitations.base_url`` defaults to
        ``http://host:port`` (a wildcard host becomes loopback). The loop is uvloop when
        installed (``runtime/loops.py``)."""
        import uvicorn

        from ..runtime.loops import loop_name
        from ..transports.http.serving import uvicorn_options
        from .url_elicitation import UrlElicitations

        flows = UrlElicitations.of(self)
        if not flows.base_url and port:
            flows.base_url = _http_base(host, port)
        options.setdefault("max_requests", None)
        app = self.http_app(path, body_timeout=None, retry_after=retry_after, **options)
        guard = uvicorn_options(
            header_timeout=header_timeout,
            body_timeout=body_timeout,
            max_connections=max_connections,
            retry_after=retry_after,
        )
        uvicorn.run(app, host=host, port=port, loop=loop_name(), **guard)

    def capabilities(self) -> dict[str, Any]:
        """What this server declares: each feature that has something registered.

        ``listChanged`` and ``subscribe`` mean ``notifications/*`` and
        ``resources/subscribe`` to a handshake-era client, and the filters
        ``subscriptions/listen`` honours to a stateless-era one; both are served.
        """
        capabilities: dict[str, Any] = {"logging": {}}
        if self._tools:
            capabilities["tools"] = {"listChanged": True}
        if self._prompts:
            capabilities["prompts"] = {"listChanged": True}
        if self._resources or self._templates:
            capabilities["resources"] = {"subscribe": True, "listChanged": True}
        if self._completing():
            capabilities["completions"] = {}
        return capabilities

    def _completing(self) -> bool:
        """True when some prompt argument or template variable has a completer."""
        return any(p.completers for p in self._prompts.values()) or any(t.completers for t in self._templates)

    # --------------------------------------------------------- notifying

    def _list_changed(self, method: str) -> None:
        for connection in list(self._connections):
            if connection.handshake_completed is not None and not connection.closed.is_set():
                connection.notify(method)
        self.subscriptions.list_changed(method)

    def notify_resource_updated(self, uri: str) -> None:
        """Tell every client subscribed to ``uri`` that it changed: handshake-era sessions
        that sent ``resources/subscribe``, and ``subscriptions/listen`` streams that asked."""
        for connection, state in list(self._connections.items()):
            if uri in state.subscriptions and not connection.closed.is_set():
                connection.notify("notifications/resources/updated", {"uri": uri})
        self.subscriptions.resource_updated(uri)

    def send_log(
        self, connection: Connection, request: RequestReceived, level: str, data: Any, logger: str | None
    ) -> bool:
        """Send one log message for ``request``, redacted and rate limited; False when dropped."""
        state = self._connections.get(connection)
        if state is not None:
            if not state.bucket.allow():
                return False
            dropped = state.bucket.take_dropped()
            if dropped:
                note = {"message": f"{dropped} log messages were dropped by the rate limit", "dropped": dropped}
                self._emit_log(connection, request, "warning", note, "backchannel")
        if logger is not None and not isinstance(logger, str):
            logger = str(logger)
        if self.log_redactor is not None:
            data = self.log_redactor.redact(data)
            if logger is not None:  # a logger's name can carry a secret too ("client.alice@example.com")
                logger = self.log_redactor.text(logger)
        self._emit_log(connection, request, level, data, logger)
        return True

    @staticmethod
    def _emit_log(connection: Connection, request: RequestReceived, level: str, data: Any, logger: str | None) -> None:
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        connection.notify("notifications/message", params, related=request.id)

    def connection_scope(self, connection: Connection) -> str | None:
        """The name of ``connection``'s entries in ``state`` (a random id, never reused)."""
        state = self._connections.get(connection)
        if state is None:
            return None
        if state.scope is None:
            state.scope = "connection:" + secrets.token_hex(16)
        return state.scope

    def roots_cache(self, connection: Connection) -> RootsCache | None:
        """This handshake-era session's cached roots (never shared with another session)."""
        state = self._connections.get(connection)
        return state.roots if state is not None else None

    def log_level_for(self, connection: Connection) -> str | None:
        state = self._connections.get(connection)
        return state.log_level if state is not None else self.default_log_level

    # ----------------------------------------------------------- serving

    def answer_now(self, request: RequestReceived, connection: Connection) -> dict[str, Any] | None:
        """The answer to a call of a plain synchronous tool (no context, no awaiting), given
        without a task; None for everything else, which ``handle_request`` serves."""
        if request.method != "tools/call":
            return None
        name = request.params.get("name")
        tool = self._tools.get(name) if isinstance(name, str) else None  # a bad name: handle_request says so
        allowed = self._allowed.get(request.version or "")
        if tool is None or tool.is_async or tool.parameters.context_parameter is not None:
            return None
        if allowed is not None and "tools/call" not in allowed:
            return None
        token = CURRENT_CONTEXT.set(Context(self, connection, request))
        try:
            try:
                kwargs = tool.parameters.validate(request.params.get("arguments"))
            except InvalidArguments as invalid:
                return arguments_refused(invalid)
            value = tool.fn(**kwargs)
        finally:
            CURRENT_CONTEXT.reset(token)
        if inspect.isawaitable(value):  # registration could not tell: an object whose __call__ is async
            self._tools[tool.name].is_async = True  # from now on served as what it is
            close = getattr(value, "close", None)
            if close is not None:
                close()
            return None
        return tool.to_result(value)

    async def handle_request(self, request: RequestReceived, connection: Connection) -> dict[str, Any]:
        method = request.method
        route = self._routes.get(method)
        allowed = self._allowed.get(request.version or "")
        if route is None or (allowed is not None and method not in allowed):
            raise MethodNotFound(f"Method not found: {method}")
        # Reset afterwards: over HTTP the handler may run in the task of the POST that carried it.
        token = CURRENT_CONTEXT.set(Context(self, connection, request))
        try:
            result: dict[str, Any] = await route(request, connection)
        finally:
            CURRENT_CONTEXT.reset(token)
        return result

    def handle_notification(self, notification: NotificationReceived, connection: Connection) -> None:
        if notification.method == "notifications/roots/list_changed":
            state = self._connections.get(connection)
            if state is not None:
                state.roots.invalidate()  # the next ctx.list_roots() asks again
        return None

    def connect(self, transport: Transport, *, finish_grace: float | None = None) -> Connection:
        """A connection serving this server over ``transport``; ``await connection.run()``."""
        session = Session(SessionConfig("server", info=self.info, versions=self.versions))
        grace = self.finish_grace if finish_grace is None else finish_grace
        connection = Connection(session, transport, self, finish_grace=grace)
        bucket = TokenBucket(self.log_rate, self.log_burst)
        self._connections[connection] = _PerConnection(self.default_log_level, bucket)
        return connection

    async def serve(self, transport: Transport) -> None:
        """Serve one client over ``transport`` until it goes away."""
        connection = self.connect(transport)
        try:
            await connection.run()
        finally:
            await self._release_pages(connection)

    async def _release_pages(self, ending: Connection) -> None:
        """Stop the URL-elicitation side listener once no other connection may need it."""
        flows = self.url_elicitations
        if flows is None or not flows.listening:
            return
        if any(other is not ending and not other.closed.is_set() for other in list(self._connections)):
            return
        await flows.stop_pages()

    async def run_stdio(self, *, max_line_bytes: int | None = None) -> None:
        """Serve on stdin/stdout; ``max_line_bytes`` bounds one inbound line (default 4 MiB)."""
        from ..framing.ndjson import DEFAULT_MAX_LINE_BYTES
        from ..transports.stdio import StdioServerTransport

        transport = StdioServerTransport(max_line_bytes=max_line_bytes or DEFAULT_MAX_LINE_BYTES)
        await transport.start()
        try:
            await self.serve(transport)
        finally:
            await transport.close()

    def run(self, *, max_line_bytes: int | None = None) -> None:
        """Serve on stdin/stdout until stdin closes (on uvloop when installed: ``runtime/loops.py``)."""
        from ..runtime import loops

        loops.run(self.run_stdio(max_line_bytes=max_line_bytes), stdio=True)

    # ------------------------------------------------------------ routes

    async def _initialize(self, request: RequestReceived, connection: Connection) -> dict[str, Any]:
        result: dict[str, Any] = {
            "protocolVersion": request.version,
            "capabilities": self.capabilities(),
            "serverInfo": self.info,
        }
        if self.instructions:
            result["instructions"] = self.instructions
        return result

    async def _ping(self, request: RequestReceived, connection: Connection) -> dict[str, Any]:
        return {}

    async def _discover(self, request: RequestReceived, connection: Connection) -> dict[str, Any]:
        result: dict[str, Any] = {
            "supportedVersions": newer_first(self.versions),
            "capabilities": self.capabilities(),
            **self._cache_hints(request),
        }
        if self.instructions:
            result["instructions"] = self.instructions
        return result

    def _cache_hints(self, request: RequestReceived) -> dict[str, Any]:
        if request.era != "modern":
            return {}
        return {"ttlMs": self.cache_ttl_ms, "cacheScope": self.cache_scope}

    def _page(self, kind: str, key: str, items: list[Any], request: RequestReceived) -> dict[str, Any]:
        page, next_cursor = paginate(kind, items, request.params.get("cursor"), self.page_size)
        result: dict[str, Any] = {key: [item.definition for item in page], **self._cache_hints(request)}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result

    async def _list_tools(self, request: RequestReceived, connection: Connection) -> dict[str, Any]:
        return self._page("tools", "tools", list(self._tools.values()), request)

    async def _list_prompts(self, request: RequestReceived, connection: Connection) -> dict[str, Any]:
        return self._page("prompts", "prompts", list(self._prompts.values()), request)

    async def _list_resources(self, request: RequestReceived, connection: Connection) -> dict[str, Any]:
        return self._page("resources", "resources", list(self._resources.values()), request)

    async def _list_templates(self, request: RequestReceived, connection: Connection) -> dict[str, Any]:
        return self._page("templates", "resourceTemplates", self._templates, request)

    async def _call_tool(self, request: RequestReceived, connection: Connection) -> dict[str, Any]:
        params = request.params
        name = params.get("name")
        if not isinstance(name, str):
            raise InvalidParams("tools/call: params.name must be a string")
        tool = self._tools.get(name)
        if tool is None:
            raise InvalidParams(f"Unknown tool: {name}", data={"name": name})
        try:
            kwargs = tool.parameters.validate(params.get("arguments"))
        except InvalidArguments as invalid:
            return arguments_refused(invalid)
        context = self._context_for(request)
        if tool.parameters.context_parameter is not None:
            kwargs[tool.parameters.context_parameter] = context
        try:
            value = await _call(tool.fn, kwargs)
        except InputRequired as needed:
            return self._input_required(context, needed)
        return tool.to_result(value)

    async def _complete(self, request: RequestReceived, connection: Connection) -> dict[str, Any]:
        """``completion/complete`` (``server/completion.py``); -32601 when nothing completes."""
        if not self._completing():
            raise MethodNotFound("Method not found: completion/complete (this server offers no completions)")
        return await handle_complete(request.params, self._prompts, self._templates, self._resources)

    async def _get_prompt(self, request: RequestReceived, connection: Connection) -> dict[str, Any]:
        params = request.params
        name = params.get("name")
        if not isinstance(name, str):
            raise InvalidParams("prompts/get: params.name must be a string")
        prompt = self._prompts.get(name)
        if prompt is None:
            raise InvalidParams(f"Unknown prompt: {name}", data={"name": name})
        kwargs = prompt.parameters.validate(params.get("arguments"))
        context = self._context_for(request)
        if prompt.parameters.context_parameter is not None:
            kwargs[prompt.parameters.context_parameter] = context
        try:
            return prompt.to_result(await _call(prompt.fn, kwargs))
        except InputRequired as needed:
            return self._input_required(context, needed)

    async def _read_resource(self, request: RequestReceived, connection: Connection) -> dict[str, Any]:
        uri = request.params.get("uri")
        if not isinstance(uri, str):
            raise InvalidParams("resources/read: params.uri must be a string")
        try:
            return await self._read(uri, request)
        except InputRequired as needed:
            return self._input_required(CURRENT_CONTEXT.get(), needed)

    async def _read(self, uri: str, request: RequestReceived) -> dict[str, Any]:
        resource = self._resources.get(uri)
        context = self._context_for(request)
        if resource is not None:
            kwargs: dict[str, Any] = {}
            if resource.context_parameter is not None:
                kwargs[resource.context_parameter] = context
            value = await _call(resource.fn, kwargs)
            mime_type = resource.mime_type
        else:
            for template in self._templates:
                variables = template.template.match(uri)
                if variables is not None:
                    assert template.parameters is not None
                    kwargs = template.parameters.validate(variables)
                    if template.parameters.context_parameter is not None:
                        kwargs[template.parameters.context_parameter] = context
                    value = await _call(template.fn, kwargs)
                    mime_type = template.mime_type
                    break
            else:
                raise ResourceNotFound(uri)
        result: dict[str, Any] = {"contents": to_contents(uri, value, mime_type)}
        if request.era == "modern":
            result.update(ttlMs=0, cacheScope=self.cache_scope)
        return result

    def _context_for(self, request: RequestReceived) -> Context:
        """This request's context; in the stateless era with the round's answers loaded."""
        context = CURRENT_CONTEXT.get()
        if request.era == "modern" and context.round is None:
            context.round = Round.start(self.state_sealer, request.method, request.params, context.principal)
        return context

    def _input_required(self, context: Context, needed: InputRequired) -> dict[str, Any]:
        assert context.round is not None, "InputRequired is raised only in the stateless era"
        return context.round.input_required(self.state_sealer, needed)

    async def _subscribe(self, request: RequestReceived, connection: Connection) -> dict[str, Any]:
        uri = request.params.get("uri")
        if not isinstance(uri, str):
            raise InvalidParams("resources/subscribe: params.uri must be a string")
        self._connections[connection].subscriptions.add(uri)
        return {}

    async def _unsubscribe(self, request: RequestReceived, connection: Connection) -> dict[str, Any]:
        uri = request.params.get("uri")
        if not isinstance(uri, str):
            raise InvalidParams("resources/unsubscribe: params.uri must be a string")
        self._connections[connection].subscriptions.discard(uri)
        return {}

    async def _set_level(self, request: RequestReceived, connection: Connection) -> dict[str, Any]:
        level = request.params.get("level")
        if level not in LOG_LEVELS:
            raise InvalidParams(f"logging/setLevel: level must be one of {', '.join(LOG_LEVELS)}; got {level!r}")
        self._connections[connection].log_level = level
        return {}

    async def _listen(self, request: RequestReceived, connection: Connection) -> dict[str, Any]:
        return await self.subscriptions.listen(request, connection, self.capabilities())


def _http_base(host: str, port: int) -> str:
    """The URL a local browser reaches ``run_http(host, port)`` by."""
    if host in ("", "0.0.0.0"):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}"


async def _call(fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    value = fn(**kwargs)
    if inspect.isawaitable(value):
        value = await value
    return value
