"""The high-level server: register tools, prompts and resources; serve any transport.

``Server`` is a thin facade over three rooms: its ``Registry`` (``registry.py``: what it
offers), the method routes (``routes.py``: one function per MCP method) and what it keeps
per connection (below). It is a ``Handler`` for the runtime: ``handle_request`` picks a
route. Registration is plain method calls (``add_tool``); the decorators are sugar.
"""

from __future__ import annotations

__all__ = ["Server"]

import asyncio
import dataclasses
import os
import time
import weakref
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, Unpack

from ..protocol.events import NotificationReceived, RequestReceived
from ..protocol.session import Session, SessionConfig
from ..runtime.connection import Answering, Connection
from ..runtime.ratelimit import TokenBucket
from ..skills.catalog import SkillCatalog
from ..state.sealer import StateSealer
from ..transports.base import Transport
from ..types.errors import MethodNotFound
from ..types.methods import requests_served
from ..types.versions import VERSIONS, Era
from .completion_request import CompletionLimit
from .connection_state import ConnectionState
from .context import CURRENT_CONTEXT, Context
from .delegation import delegate
from .hosting import serve_stdio
from .log_sending import send_log
from .options import FlatOptions, ListOptions, LogOptions, StateOptions, TimeoutOptions, resolve_options
from .pagination import paginate
from .registry import Registry, registering
from .roots import RootsCache
from .routes import INLINE_ROUTES, ROUTES
from .scopes import caller_holds
from .sharing import Sharing, restore_session, session_snapshot
from .state import MemoryStore, StateStore
from .subscriptions import Subscriptions
from .tasks import TaskService
from .tools import failure_result

if TYPE_CHECKING:
    from ..apps.app import App
    from ..composition.middleware import Call, CallNext, Chain, Middleware
    from ..composition.mounts import Mount, Mounts
    from ..composition.transforms import Kind, ToolTransform, Transforms
    from ..http_host.app import HttpApp
    from .url_elicitation import UrlElicitations

F = TypeVar("F", bound=Callable[..., Any])
#: What a mount's offer adds to the mounting server's capabilities.
_MOUNTED_FEATURES = ("tools", "prompts", "resources", "completions")


class Server:
    """An MCP server that serves handshake-era and stateless-era clients alike.

    ``Server("name")`` or ``Server("name", "1.0.0")`` is all most servers need. Settings come in
    groups (``server/options.py``): ``lists=ListOptions(page_size, cache hints)``,
    ``logs=LogOptions(level, redactor, rate, burst)``, ``state=StateOptions(key, ttl, store,
    once_limit, decline_ttl)`` and ``timeouts=TimeoutOptions(elicitation, finish_grace)``; each
    field also has its flat keyword (``page_size=``, ``log_level=``, ``state_key=``,
    ``elicitation_timeout=``...), which wins over the group. ``state=`` also takes a bare
    ``StateStore``. What was resolved is in ``server.options``.

    ``versions`` are the protocol revisions served (all by default). ``default_roots`` stand in
    for the roots of a client without the ``roots`` capability (``ctx.list_roots()`` marks them
    ``from_client=False``); default: the working directory when the server was made.

    ``clock`` (seconds, any ``Callable[[], float]``) measures every TTL and expiry: sealed
    ``requestState``, the default ``MemoryStore``, URL-elicitation flows, the log rate limit. Pass
    ``backchannel.testing.FakeClock()`` and ``advance()`` it to expire state without sleeping.
    By default the in-process ones read ``time.monotonic`` and the ``requestState`` sealer
    ``time.time`` (a state sealed by one worker expires at the same moment on every other).
    Timeouts that wait (``elicitation_timeout``) run on the event loop's clock.
    """

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        instructions: str | None = None,
        title: str | None = None,
        website_url: str | None = None,
        versions: tuple[str, ...] = VERSIONS,
        default_roots: Sequence[str | os.PathLike[str]] | None = None,
        clock: Callable[[], float] | None = None,
        lists: ListOptions | None = None,
        logs: LogOptions | None = None,
        state: StateOptions | StateStore | None = None,
        timeouts: TimeoutOptions | None = None,
        **flat: Unpack[FlatOptions],
    ) -> None:
        options = resolve_options(lists=lists, logs=logs, state=state, timeouts=timeouts, flat=flat)
        #: The settings as resolved from the groups and flat keywords (read only).
        self.options = options
        self.name = name
        self.version = version
        self.instructions = instructions
        self.info: dict[str, Any] = {"name": name, "version": version}
        if title:
            self.info["title"] = title
        if website_url:
            self.info["websiteUrl"] = website_url
        self.versions = versions
        #: The clock TTLs are measured on (None: real time; see the class docstring).
        self.clock = clock
        local_clock = time.monotonic if clock is None else clock
        # Read on every request, so kept as plain attributes rather than looked up in ``options``.
        self.page_size = options.lists.page_size
        self.cache_ttl_ms = options.lists.cache_ttl_ms
        self.cache_scope = options.lists.cache_scope
        self.default_log_level = options.logs.level
        self.log_redactor = options.logs.redactor
        self.log_rate = options.logs.rate
        self.log_burst = options.logs.burst
        self.completion_limit = CompletionLimit(options.completions, clock=local_clock)
        self.finish_grace = options.timeouts.finish_grace
        self.elicitation_timeout = options.timeouts.elicitation
        self.state_sealer = StateSealer(
            options.state.key, options.state.ttl, clock=time.time if clock is None else clock
        )
        #: Per-server state that outlives a request: ``ctx.once`` results and declined forms.
        store = options.state.store
        self.state: StateStore = store if store is not None else MemoryStore(clock=local_clock)
        self.once_limit = options.state.once_limit
        self.decline_ttl = options.state.decline_ttl
        #: URL-mode elicitation flows and their pages (``http_app()`` serves them); see ``UrlElicitations``.
        self.url_elicitations: UrlElicitations | None = None
        self.default_roots: list[str | os.PathLike[str]] = (
            [os.getcwd()] if default_roots is None else list(default_roots)  # (pathlib is not loaded at start)
        )
        #: The tools, prompts, resources and templates; ``add_tool`` and the rest change it.
        self.registry = Registry(self._list_changed, extensions=options.extensions.declared)
        #: The skills it publishes (SEP-2640; ``add_skill``): their files are resources of the registry.
        self.skills = SkillCatalog(self.registry, paginate)
        self._connections: weakref.WeakKeyDictionary[Connection, ConnectionState] = weakref.WeakKeyDictionary()
        #: Open ``subscriptions/listen`` streams (stateless era).
        self.subscriptions = Subscriptions()
        #: Its part in a fleet of workers, when ``state`` spans them (``sharing.py``).
        self.sharing = Sharing(self)
        #: Tool calls that outlive their request (``server/tasks/``, ``docs/tasks.md``): settings, running tasks.
        self.tasks = TaskService(self)
        self._allowed = {v: requests_served(v) for v in versions}
        # Composing (``backchannel.composition``) loads with the first mount, transform, rule or
        # middleware: a server that composes nothing never imports it.
        #: Servers mounted under a prefix (``mount``, ``composition/mounts.py``); None before the first.
        self.mounts: Mounts[Server] | None = None
        #: Set on a mounted server: the server and the mount it is served by.
        self.mounted_in: tuple[Server, Mount[Server]] | None = None
        #: What wraps every message received and every question sent (``add_middleware``): a
        #: ``Chain`` (a tuple) of the middleware added, the first outermost; () before the first.
        self.middleware: Chain | tuple[()] = ()
        # The chain around what the read loop's turn can answer (``answer_now``), and what makes its Call.
        self._middleware_now: tuple[CallNext, Callable[[RequestReceived, Connection], Call]] | None = None
        #: Tools shown renamed or reshaped, items switched off (``transform_tool``, ``disable``;
        #: ``composition/transforms.py``); None before the first.
        self.transforms: Transforms | None = None
        #: Counts every change of a list told to clients (a cache of lists is stale once it moves).
        self.list_generation = 0

    # ------------------------------------------------------------ registry

    add_tool = delegate("registry", Registry.add_tool)
    remove_tool = delegate("registry", Registry.remove_tool)
    add_prompt = delegate("registry", Registry.add_prompt)
    remove_prompt = delegate("registry", Registry.remove_prompt)
    add_resource = delegate("registry", Registry.add_resource)
    remove_resource = delegate("registry", Registry.remove_resource)

    def tool(self, name: str | None = None, **options: Any) -> Callable[[F], F]:
        """Decorator form of ``add_tool``."""
        return registering(lambda fn: self.add_tool(fn, name=name, **options))

    def prompt(self, name: str | None = None, **options: Any) -> Callable[[F], F]:
        """Decorator form of ``add_prompt``."""
        return registering(lambda fn: self.add_prompt(fn, name=name, **options))

    def resource(self, uri: str, **options: Any) -> Callable[[F], F]:
        """Decorator form of ``add_resource``."""
        return registering(lambda fn: self.add_resource(uri, fn, **options))

    add_app = delegate("registry", Registry.add_app)

    def app(self, uri: str, html: str, **options: Any) -> App:
        """Publish an MCP App (``App(uri=uri, html=html, **options)``, ``backchannel.apps``) and
        return it, for ``@server.tool(app=...)``; ``docs/extensions.md`` says how."""
        from ..apps.app import App

        return self.add_app(App(uri=uri, html=html, **options))

    def tool_definition(self, name: str) -> dict[str, Any] | None:
        """Tool ``name`` as this server serves it: its own, else that of the mount the name reaches
        (the HTTP host checks a stateless-era call's ``Mcp-Param-*`` headers against it, SEP-2243)."""
        own = self.registry.tool_definition(name)
        if own is not None or not self.mounts:
            return own
        found = self.mounts.by_name(name)
        return None if found is None else found[0].server.tool_definition(found[1])

    add_skill = delegate("skills", SkillCatalog.add_skill)
    add_skills = delegate("skills", SkillCatalog.add_skills)
    remove_skill = delegate("skills", SkillCatalog.remove_skill)

    def skill(self, name: str | None = None, **options: Any) -> Callable[[F], F]:
        """Decorator form of ``add_skill``: the function returns the skill's body (``SkillCatalog.add_function``)."""
        return registering(lambda fn: self.skills.add_function(fn, name=name, **options))

    def required_scopes(self, method: str, params: Any) -> tuple[str, ...]:
        """The OAuth scopes a request needs: its tool's, prompt's or resource's, or its mount's."""
        if self.transforms:
            params = self.transforms.inward(method, params)
        if self.mounts and isinstance(params, dict):
            routed = self.mounts.route(
                RequestReceived(id=0, method=method, params=params, era="handshake", version=None), self
            )
            if routed is not None:
                mount, inner = routed
                return mount.scopes + mount.server.required_scopes(method, inner.params)
        return self.registry.required_scopes(method, params)

    def capabilities(self) -> dict[str, Any]:
        """What this server declares: each feature that has something registered (``Registry.capabilities``),
        and what its mounts offer."""
        capabilities = self.registry.capabilities()
        for mount in self.mounts or ():
            for feature, flags in mount.server.capabilities().items():
                if feature in _MOUNTED_FEATURES and feature not in capabilities:
                    capabilities[feature] = {"listChanged": True} if feature != "completions" else {}
                if feature == "resources" and isinstance(flags, dict) and flags.get("subscribe"):
                    capabilities["resources"] = {**capabilities["resources"], "subscribe": True}
        return capabilities

    def mount(
        self,
        prefix: str,
        server: Server | None = None,
        *,
        command: Sequence[str] | None = None,
        url: str | None = None,
        headers: Mapping[str, str] | None = None,
        auth: Any = None,
        era: str = "auto",
        scopes: Sequence[str] = (),
    ) -> Server:
        """Serve another server's tools, prompts, resources and completions under ``prefix``
        (``composition/mounts.py`` says how names and URIs are rewritten, and how lists merge).

        The upstream is ``server`` (a ``Server`` of this process), ``command`` (a server started
        over stdio) or ``url`` (Streamable HTTP, with ``headers`` and ``auth``; ``era`` to speak
        to it); the last two are served by a ``backchannel.bridge.Proxy``, which carries the
        reverse channel across. ``scopes``: the OAuth scopes a caller needs to see or call any
        of it. Returns the mounted server."""
        from .._wiring import make_remote
        from ..composition.mount_sealer import MountSealer
        from ..composition.mounts import Mount, Mounts, check_prefix

        check_prefix(prefix)
        if (server is not None) + (command is not None) + (url is not None) != 1:
            raise ValueError("mount a server, a command or a URL: exactly one of them")
        if server is None:  # a ``backchannel.bridge.Proxy``, which the package wired in (it sits above us)
            server = make_remote(command=command, url=url, headers=headers or {}, auth=auth, era=era)
        if server is self or server.mounted_in is not None:
            raise ValueError(f"{server.name!r} cannot be mounted here: it is this server or mounted elsewhere")
        if self.mounts is None:
            self.mounts = Mounts(paginate, caller_holds)
        mount = Mount(prefix, server, tuple(scopes))
        self.mounts.add(mount)
        server.mounted_in = (self, mount)
        server._connections = self._connections  # its handlers see this server's connections' state
        server.use_sealer(MountSealer(self.state_sealer, prefix))  # a fleet's keys, bound to this mount
        if self.handshake_listeners():
            self._list_changed("notifications/tools/list_changed")
        return server

    def use_sealer(self, sealer: StateSealer) -> None:
        """Seal and open ``requestState`` with ``sealer`` from now on (a mounted server: its
        mounting server's keys, ``MountSealer``)."""
        self.state_sealer = sealer

    def add_middleware(self, middleware: Middleware) -> Middleware:
        """Wrap every request and notification this server receives (its mounts' too) and every
        question it sends the client in ``middleware`` (``composition/middleware.py``); the last added
        runs innermost. Returns it, so it works as a decorator too."""
        if self.mounted_in is not None:
            raise ValueError("add middleware to the mounting server: it wraps its mounts' messages too")
        from ..composition.middleware import Chain, chain, received_call

        self.middleware = Chain((*self.middleware, middleware))
        self._middleware_now = (chain(self.middleware, self._past_middleware_now), received_call)
        return middleware

    def transform_tool(
        self,
        tool: str,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        hide: Collection[str] = (),
        fix: Mapping[str, Any] | None = None,
    ) -> ToolTransform:
        """Show ``tool`` (one of this server's or a mount's, by the name clients see: ``ev_add``)
        to clients as ``name``, with ``title`` and ``description``, without the arguments it
        ``hide``s (the tool uses their defaults) or ``fix``es (always sent with these values);
        its old name is refused from then on (``composition/transforms.py``; ``docs/gateway.md``).
        ``ValueError`` for a name taken, or an argument of this server's tool that it lacks or
        needs. Clients are told the tool list changed. Returns the transform
        (``server.transforms.remove_tool(tool)`` undoes it)."""
        return self._transforms().add_tool(tool, name=name, title=title, description=description, hide=hide, fix=fix)

    def disable(self, kind: Kind, *names: str, session: Connection | None = None) -> None:
        """Hide the ``kind`` (``"tool"``, ``"prompt"`` or ``"resource"``) items ``names`` (names or
        ``fnmatch`` patterns of the names clients see: ``"ev_*"``) from the lists, and refuse them
        as unknown, for every client or for ``session`` (a connection: ``ctx.connection``) only;
        those it concerns are sent ``notifications/*/list_changed`` (``composition/transforms.py``)."""
        self._transforms().switch(kind, names, False, session)

    def enable(self, kind: Kind, *names: str, session: Connection | None = None) -> None:
        """Show ``names`` again (or despite an earlier, broader ``disable``): as ``disable``, the other way."""
        self._transforms().switch(kind, names, True, session)

    def _transforms(self) -> Transforms:
        if self.transforms is None:
            from ..composition.transforms import Transforms

            tool = self.registry.tool_definition
            self.transforms = Transforms(self.list_changed_here, self.subscriptions, tool, failure_result)
        return self.transforms

    def handshake_listeners(self) -> bool:
        """Whether any client is connected (a change then needs telling)."""
        return bool(self._connections)

    def mounts_offer_tasks(self) -> bool:
        """Whether a mount runs tool calls as tasks (then this server declares tasks, and a task's
        ``tasks/*`` go to the mount that made it)."""
        return any(mount.server.tasks.offered() for mount in self.mounts or ())

    async def watch_resource(self, uri: str) -> None:
        """A mounting server's client listens for changes of ``uri`` of this server: a server that
        must ask for them (a ``Proxy``, of its upstream) does so here; this one tells them anyway.
        ``unwatch_resource`` follows when the listening ends."""

    def unwatch_resource(self, uri: str) -> None:
        """The listening ``watch_resource`` began has ended."""

    async def ready(self, declared: dict[str, Any] | None, era: Era | None = None) -> None:
        """Before a client (of ``era``, that declared ``declared``) is told what this server offers:
        every mount is ready to say what it offers (a remote one connected, in that client's era
        where it can be; one that can't be is left out, with one line logged)."""
        for mount in self.mounts or ():
            await mount.server.ready(declared, era)

    # ----------------------------------------------------------- hosting

    def http_app(self, path: str = "/mcp", *, redis: str | None = None, **options: Any) -> HttpApp:
        """This server as an ASGI app speaking Streamable HTTP at ``path``, both eras.

        Mount it in Starlette or FastAPI, or run it with uvicorn. ``options`` go to
        ``HttpApp`` (allowed hosts and origins, authenticator or ``auth=ResourceAuth(...)``
        (``backchannel.auth``), body limit, idle timeout, event store, and the limits);
        ``redis`` keeps the server's state there, as ``run_http(redis=...)`` does."""
        from ..http_host.app import HttpApp

        if redis is not None:
            from ..state.redis import RedisState

            self.use_state(RedisState(redis))
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
        redis: str | None = None,
        workers: int = 1,
        **options: Any,
    ) -> None:
        """Serve Streamable HTTP on ``host:port`` (loopback unless told otherwise) with our own
        HTTP/1.1 server (``http_host/h1/connection.py``; uvicorn is not loaded).

        Each connection is bounded (``http_host/h1/connection.py``): its request headers must
        arrive within ``header_timeout`` seconds and its body within ``body_timeout`` (else 408),
        and past ``max_connections`` open connections (lowered to fit the file-descriptor limit)
        requests are answered 503 with ``Retry-After: retry_after``; None turns a limit off.
        ``options`` go to ``http_app``. ``redis`` (a ``redis://`` URL) keeps sessions, streams and
        the reverse channel there, so that ``workers`` processes serve one port as one server
        (``docs/deploy.md``). URL-elicitation pages are served here too (``url_elicitations.
        base_url`` defaults to ``http://host:port``). The loop is uvloop when installed.

        SIGTERM or Ctrl-C stops it: the requests under way get 3 seconds to finish, then the
        sessions end and this returns; a second Ctrl-C stops at once. If the app's startup
        fails, the port is taken, Redis does not answer or a worker fails to start twice in a
        row, the process exits with status 3 (the reason on stderr, in one line; a worker's
        whole output with ``debug=True``). ``on_listening()`` is called once it serves."""
        from ..http_host.run_http import serve_http

        serve_http(
            self,
            host,
            port,
            path,
            header_timeout=header_timeout,
            body_timeout=body_timeout,
            max_connections=max_connections,
            retry_after=retry_after,
            redis=redis,
            workers=workers,
            **options,
        )

    async def run_stdio(self, *, max_line_bytes: int | None = None) -> None:
        """Serve on stdin/stdout; ``max_line_bytes`` bounds one inbound line (default 4 MiB)."""
        await serve_stdio(self, max_line_bytes)

    def run(self, *, max_line_bytes: int | None = None) -> None:
        """Serve on stdin/stdout until stdin closes (on uvloop when installed: ``runtime/loops.py``);
        what exists when it starts is left out of the cyclic GC from then on, and at exit everything
        is (``runtime.loops.freeze_startup``)."""
        from ..runtime import loops

        loops.freeze_startup()
        loops.run(self.run_stdio(max_line_bytes=max_line_bytes), stdio=True)

    # --------------------------------------------------------- notifying

    def _list_changed(self, method: str) -> None:
        self.list_changed_here(method)
        self.sharing.announce("list", method)  # every other worker of a fleet tells its own clients

    def list_changed_here(self, method: str) -> None:
        """Send ``method`` (a ``notifications/*/list_changed``) to this process's clients."""
        if self.mounted_in is not None:  # a mounted server's clients are its mounting server's
            self.mounted_in[0].list_changed_here(method)
            return
        self.list_generation += 1
        for connection in list(self._connections):
            if connection.handshake_completed is not None and not connection.closed.is_set():
                connection.notify(method)
        self.subscriptions.list_changed(method)

    def notify_resource_updated(self, uri: str) -> None:
        """Tell every client subscribed to ``uri`` that it changed: handshake-era sessions
        that sent ``resources/subscribe``, and ``subscriptions/listen`` streams that asked
        (on every worker of a fleet)."""
        self.resource_updated_here(uri)
        self.sharing.announce("resource", uri)

    def resource_updated_here(self, uri: str) -> None:
        """Tell this process's subscribers of ``uri`` that it changed (what a fleet's other
        workers call when one announces a change); ``notify_resource_updated`` tells everyone."""
        if self.mounted_in is not None:
            parent, mount = self.mounted_in
            parent.resource_updated_here(mount.uri(uri))
            return
        for connection, state in list(self._connections.items()):
            if uri in state.subscriptions and not connection.closed.is_set():
                connection.notify("notifications/resources/updated", {"uri": uri})
        self.subscriptions.resource_updated(uri)

    def use_state(self, state: StateStore) -> None:
        """Keep ``ctx.once`` results, declined forms and (with a ``SharedState`` that spans
        workers: ``RedisState``) every session's state in ``state``; before serving."""
        self.state = state

    async def start_sharing(self) -> None:
        """Join the fleet the server's state spans (the HTTP app does it at startup)."""
        await self.sharing.start()

    def send_log(
        self, connection: Connection, request: RequestReceived, level: str, data: Any, logger: str | None
    ) -> bool:
        """Send one log message for ``request``, redacted and rate limited; False when dropped."""
        return send_log(self.log_redactor, self._connections.get(connection), connection, request, level, data, logger)

    # ------------------------------------------------------ per connection

    def connection_state(self, connection: Connection) -> ConnectionState:
        """What the server keeps for ``connection`` (``KeyError`` for one it did not ``connect``)."""
        return self._connections[connection]

    def connection_scope(self, connection: Connection) -> str | None:
        """The name of ``connection``'s entries in ``state`` (a random id, never reused)."""
        state = self._connections.get(connection)
        if state is None:
            return None
        if state.scope is None:
            state.scope = "connection:" + os.urandom(16).hex()  # (secrets.token_hex: OpenSSL loaded for it)
        return state.scope

    def roots_cache(self, connection: Connection) -> RootsCache | None:
        """This handshake-era session's cached roots (never shared with another session)."""
        state = self._connections.get(connection)
        return state.roots if state is not None else None

    def session_snapshot(self, connection: Connection) -> dict[str, Any]:
        """What this server keeps for a handshake-era session, as data a fleet's record carries."""
        return session_snapshot(self._connections.get(connection))

    def restore_session(self, connection: Connection, kept: dict[str, Any]) -> None:
        """Take up what ``session_snapshot`` gave (on another worker of the fleet)."""
        restore_session(self._connections.get(connection), kept)

    def log_level_for(self, connection: Connection) -> str | None:
        """The level ``connection``'s client set (or the server's default): ``ctx.log`` sends at or above it."""
        state = self._connections.get(connection)
        return state.log_level if state is not None else self.default_log_level

    # ----------------------------------------------------------- serving

    def answer_now(self, request: RequestReceived, connection: Connection) -> Answering:
        """The answer to a request that needs no waiting, given without a task: a call of a plain
        synchronous tool, a completion by a synchronous completer (``routes.INLINE_ROUTES``);
        None for everything else, which ``handle_request`` serves. With middleware, the chain's
        coroutine, which the read loop starts: its last step answers here too when it can."""
        method = request.method
        inline = INLINE_ROUTES.get(method)
        if inline is None or self.transforms:  # then every request takes handle_request
            return None
        allowed = self._allowed.get(request.version or "")
        if allowed is not None and method not in allowed:
            return None  # handle_request says -32601
        if self._middleware_now is not None:
            run, call_of = self._middleware_now
            return run(call_of(request, connection))  # type: ignore[return-value]
        if self.mounts and (routed := self.mounts.route(request, self)) is not None:
            return routed[0].server.answer_now(routed[1], connection)
        return inline(self, request, connection)

    async def _past_middleware_now(self, call: Call) -> dict[str, Any]:
        """The end of the chain started in the read loop's turn (``answer_now``): answered there when
        the route can; else the rest waits for the handler's own task, as ``handle_request``."""
        request = call.message
        if type(request) is not RequestReceived or call.params is not request.params:
            request = call.request()  # the params a middleware passed on
        connection = call.connection
        if self.mounts and (routed := self.mounts.route(request, self)) is not None:
            answer = routed[0].server.answer_now(routed[1], connection)  # (a mounted server has no middleware)
            if type(answer) is dict:
                return answer
        else:
            answer = INLINE_ROUTES[request.method](self, request, connection)
            if answer is not None:
                return answer
        await asyncio.sleep(0)  # a bare yield: the read loop hands the rest to the handler's own task
        return await self._routed(request, connection)

    async def handle_request(self, request: RequestReceived, connection: Connection) -> dict[str, Any]:
        """Route ``request`` to its method (``routes.py``) with its ``Context``; -32601 for a
        method its version lacks. A tool's ``ToolError`` is its call's result (``call_tool``);
        raised by any other handler, the runtime answers it as -32603 with its message."""
        method = request.method
        route = ROUTES.get(method)
        allowed = self._allowed.get(request.version or "")
        if route is None or (allowed is not None and method not in allowed):
            raise MethodNotFound(f"Method not found: {method}")
        if self.middleware:
            return await self.middleware.received(request, connection, self._past_middleware)  # type: ignore[no-any-return]
        if self.transforms:
            return await self.transforms.answer(request, connection, self._routed)
        if self.mounts:
            return await self._with_mounts(self.mounts, request, connection)
        return await self.own_answer(request, connection)

    def _past_middleware(self, call: Call) -> Awaitable[dict[str, Any]]:
        """The request as the middleware pass it on: through the transforms, to a mount or here."""
        return self.past_middleware(call.request(), call.connection)

    def past_middleware(self, request: RequestReceived, connection: Connection) -> Awaitable[dict[str, Any]]:
        """``request`` answered as after the middleware: through the transforms, to a mount or here."""
        if self.transforms:
            return self.transforms.answer(request, connection, self._routed)
        return self._routed(request, connection)

    def _routed(self, request: RequestReceived, connection: Connection) -> Awaitable[dict[str, Any]]:
        """``request`` answered by a mount or here (after the middleware and the transforms)."""
        if self.mounts:
            return self._with_mounts(self.mounts, request, connection)
        return self.own_answer(request, connection)

    async def _with_mounts(
        self, mounts: Mounts[Server], request: RequestReceived, connection: Connection
    ) -> dict[str, Any]:
        """``request`` answered by the mount it names, or here with the mounts' part merged in."""
        routed = mounts.route(request, self)
        if routed is not None:
            mount, inner = routed
            result = await mount.server.handle_request(inner, connection)
            mounts.subscribed(request, self._connections.get(connection))
            return mounts.answered(mount, inner, result)
        method = request.method
        if method in ("initialize", "server/discover"):
            declared = request.params.get("capabilities") if method == "initialize" else request.client_capabilities
            await self.ready(declared if isinstance(declared, dict) else None, request.era)
        if method == "subscriptions/listen":  # its mounts' resources watched while it listens
            return await mounts.listening(request, lambda: self.own_answer(request, connection))
        if method in mounts.lists:  # its own items from their first page on: the client's cursor is the merged list's
            own_first = {key: value for key, value in request.params.items() if key != "cursor"}
            first = await self.own_answer(dataclasses.replace(request, params=own_first), connection)
            return await mounts.merged(self, request, connection, first)
        return await self.own_answer(request, connection)

    async def own_list(self, request: RequestReceived, connection: Connection) -> dict[str, Any]:
        """A page of this server's own items of a list (without its mounts')."""
        return await self.own_answer(request, connection)

    async def own_answer(self, request: RequestReceived, connection: Connection) -> dict[str, Any]:
        """``request`` answered by this server's own route (``routes.py``)."""
        route = ROUTES[request.method]
        context = Context(self, connection, request)
        # Current for the handler code the route runs (``Context.current()``); reset afterwards:
        # over HTTP the handler may run in the task of the POST that carried it.
        token = CURRENT_CONTEXT.set(context)
        try:
            result: dict[str, Any] = await route(self, request, context)
        finally:
            CURRENT_CONTEXT.reset(token)
        if context.declines is not None:  # a decline remembered before answered a form: say so
            result = context.declines.marked(result)
        return result

    def handle_notification(self, notification: NotificationReceived, connection: Connection) -> Awaitable[None] | None:
        """Act on a notification the client sent on ``connection`` (the runtime calls this with
        those it leaves to the server: a roots change makes the next ``ctx.list_roots()`` ask again)."""
        if self.middleware:
            return self.middleware.notified(notification, connection, self._notified)
        self._notified(notification, connection)
        return None

    def _notified(self, notification: NotificationReceived, connection: Connection) -> None:
        if notification.method == "notifications/roots/list_changed":
            state = self._connections.get(connection)
            if state is not None:
                state.roots.invalidate()  # the next ctx.list_roots() asks again
            for mount in self.mounts or ():  # a remote mount tells its upstream
                mount.server.handle_notification(notification, connection)

    def connect(self, transport: Transport, *, finish_grace: float | None = None) -> Connection:
        """A connection serving this server over ``transport``; ``await connection.run()``."""
        session = Session(SessionConfig("server", info=self.info, versions=self.versions))
        grace = self.finish_grace if finish_grace is None else finish_grace
        connection = Connection(session, transport, self, finish_grace=grace)
        clock = time.monotonic if self.clock is None else self.clock
        bucket = TokenBucket(self.log_rate, self.log_burst, clock=clock)
        self._connections[connection] = ConnectionState(self.default_log_level, bucket)
        return connection

    async def serve(self, transport: Transport) -> None:
        """Serve one client over ``transport`` until it goes away."""
        connection = self.connect(transport)
        try:
            await connection.run()
        finally:
            await self._release_pages(connection)

    async def aclose(self) -> None:
        """Stop what serving started beyond the connections: the mounts' (a remote one's upstream
        process or session). The HTTP app calls it at shutdown, ``run`` when stdin ends."""
        for mount in self.mounts or ():
            await mount.server.aclose()

    async def _release_pages(self, ending: Connection) -> None:
        """Stop the URL-elicitation side listener once no other connection may need it."""
        flows = self.url_elicitations
        if flows is None or not flows.listening:
            return
        if any(other is not ending and not other.closed.is_set() for other in list(self._connections)):
            return
        await flows.stop_pages()
