"""``Proxy``: a server whose every request is answered by one upstream server (``backchannel proxy``).

The proxy is a ``Server``, so it serves both eras over stdio or HTTP as any backchannel server
does; what it answers it takes from its ``Upstream`` (``upstream.py``), which carries the reverse
channel across. It answers itself only what belongs to its own hop: ``initialize``,
``server/discover`` and ``ping``, the log level a handshake-era client sets (passed upstream too),
and the subscriptions of its clients (each ``resources/subscribe`` also goes upstream). What it
offers is what the upstream offers of the features it carries.
"""

from __future__ import annotations

__all__ = ["Proxy"]

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from .._version import __version__
from ..client.tool_calls import task_support
from ..protocol.events import NotificationReceived, RequestReceived
from ..runtime.connection import Connection
from ..server.context import CURRENT_CONTEXT, Context
from ..server.server import Server
from ..server.tasks.service import CORE_TASK_VERSIONS, TaskService
from ..server.tools import RegisteredTool
from ..state.sealer import StateSealer
from ..types.errors import InvalidParams, MethodNotFound, UpstreamUnavailable
from ..types.tasks import TASKS_EXTENSION
from ..types.versions import Era
from .upstream import Upstream, UpstreamClient, UpstreamSpec

if TYPE_CHECKING:
    from ..composition.middleware import Call

#: The upstream's capabilities the proxy offers in turn (their sub-flags as the upstream has them).
_OFFERED = ("tools", "prompts", "resources", "logging", "completions")
#: Answered by the proxy itself (``Server``'s routes), after the upstream is connected.
_OWN = frozenset(("initialize", "server/discover", "ping", "subscriptions/listen", "logging/setLevel"))
#: Answered here, with the upstream watching the resource for the proxy's clients.
_SUBSCRIBING = frozenset(("resources/subscribe", "resources/unsubscribe"))


class Proxy(Server):
    """A server in front of one upstream server, carrying the reverse channel across eras.

    ``upstream`` says where the upstream is (``UpstreamSpec``: a command or a URL); every other
    keyword is ``Server``'s. ``name`` defaults to ``"backchannel-proxy"``; the ``initialize`` and
    ``server/discover`` answers carry the upstream's ``serverInfo`` and ``instructions``."""

    def __init__(self, upstream: UpstreamSpec, *, name: str = "backchannel-proxy", **options: Any) -> None:
        super().__init__(name, __version__, **options)
        self.upstream = Upstream(upstream, sealer=self.state_sealer, notified=self._upstream_notified)
        self.tasks = _Tasks(self)

    def use_sealer(self, sealer: StateSealer) -> None:
        """Seal with ``sealer`` (a mount's: its mounting server's keys), the upstream's states too."""
        super().use_sealer(sealer)
        self.upstream.sealer = sealer

    def capabilities(self) -> dict[str, Any]:
        """What the upstream offers of the features the proxy carries (nothing before it is connected)."""
        client = self.upstream.connected
        if client is None:
            return {}
        offered = client.server_capabilities
        # Only what the upstream offers: logging too (what an upstream that declares none sends is dropped).
        return {name: offered[name] for name in _OFFERED if name in offered}

    def tool_definition(self, name: str) -> dict[str, Any] | None:
        """Tool ``name`` as the upstream last listed it: the HTTP host checks a stateless-era call's
        ``Mcp-Param-*`` headers against it, as any server that reads the body must (SEP-2243)."""
        return self.upstream.tools.get(name)

    async def ready(self, declared: dict[str, Any] | None, era: Era | None = None) -> None:
        """Connect the upstream (as a mount, before the mounting server says what it offers); one
        that can't be reached is logged in one line, and this proxy offers nothing until it can."""
        with contextlib.suppress(UpstreamUnavailable):
            await self.upstream.client_for(declared, era)

    def answer_now(self, request: RequestReceived, connection: Connection) -> dict[str, Any] | None:
        """Nothing is answered inline: every answer comes from upstream."""
        return None

    async def handle_request(self, request: RequestReceived, connection: Connection) -> dict[str, Any]:
        """Forward ``request`` upstream with its ``Context``, or answer it here (``_OWN``); through
        the proxy's middleware (``add_middleware``) first, as any server's requests."""
        method = request.method
        allowed = self._allowed.get(request.version or "")
        if allowed is not None and method not in allowed:
            raise MethodNotFound(f"Method not found: {method}")
        if self.middleware:
            return await self.middleware.received(request, connection, self._proxied_call)  # type: ignore[no-any-return]
        return await self._proxied(request, connection)

    def _proxied_call(self, call: Call) -> Awaitable[dict[str, Any]]:
        return self._proxied(call.request(), call.connection)

    async def _proxied(self, request: RequestReceived, connection: Connection) -> dict[str, Any]:
        method = request.method
        if method in _OWN:
            return await self._answer_here(request, connection)
        if method in _SUBSCRIBING:
            return await self._subscribe(request, connection)
        if (method == "tools/call" or method.startswith("tasks/")) and (
            self.upstream.connected is None or self._tasks_translated(request)
        ):  # else no task is run here: forwarded at once (``forward`` finds the client)
            client = await self.upstream.client_for(self._declared(request, connection), request.era)
            if await self._tasks_here(request, client):
                return await self._task_here(request, connection)
        context = Context(self, connection, request)
        token = CURRENT_CONTEXT.set(context)
        try:
            result = await self.upstream.forward(method, request.params, context)
        finally:
            CURRENT_CONTEXT.reset(token)
        if method == "tools/list" and request.version in CORE_TASK_VERSIONS and self._tasks_translated(request):
            result = _with_task_support(result)
        return result

    def _declared(self, request: RequestReceived, connection: Connection) -> dict[str, Any] | None:
        if request.era == "stateless":
            return request.client_capabilities
        completed = connection.handshake_completed
        return completed.peer_capabilities if completed is not None else None

    def _tasks_translated(self, request: RequestReceived) -> bool:
        """Whether this client's tasks are run here: the upstream runs them in the other era's form."""
        client = self.upstream.connected
        return client is not None and client.offers_tasks and client.session.era != request.era

    async def _tasks_here(self, request: RequestReceived, client: UpstreamClient) -> bool:
        """Whether ``request`` (``tools/call`` or ``tasks/*``) is served by this proxy's own tasks:
        the client's tasks are of one era's form and the upstream's of the other's."""
        if not self._tasks_translated(request):
            return False
        if request.method != "tools/call":
            return True
        if request.era == "handshake":
            return isinstance(request.params.get("task"), dict) and request.version in CORE_TASK_VERSIONS
        extensions = (request.client_capabilities or {}).get("extensions")
        if not isinstance(extensions, dict) or TASKS_EXTENSION not in extensions:
            return False
        name = request.params.get("name")
        return isinstance(name, str) and await task_support(client, name) in ("optional", "required")

    async def _task_here(self, request: RequestReceived, connection: Connection) -> dict[str, Any]:
        """A ``tools/call`` run as a task of this proxy's (its body calls the upstream, as a task of
        the upstream's form), or a ``tasks/*`` request about one: the server's own routes."""
        if request.method != "tools/call":
            return await self.past_middleware(request, connection)
        params = request.params
        name, arguments = params.get("name"), params.get("arguments") or {}
        if not isinstance(name, str) or not isinstance(arguments, dict):
            raise InvalidParams("tools/call: params.name must be a string and params.arguments an object")
        context = Context(self, connection, request)
        tool = RegisteredTool.build(
            lambda: self.upstream.run_task(name, arguments, context),
            name="upstream-task",
            title=None,
            description=None,
            annotations=None,
            icons=None,
            meta=None,
            structured_output=False,
            context_type=Context,
            input_schema={"type": "object"},
            task="optional",
        )
        token = CURRENT_CONTEXT.set(context)
        try:
            value = await self.tasks.start(tool, {}, context)
        finally:
            CURRENT_CONTEXT.reset(token)
        if context.task is None:  # answered before the task began
            return tool.to_result(value, request.version)
        return value  # type: ignore[no-any-return]

    async def _answer_here(self, request: RequestReceived, connection: Connection) -> dict[str, Any]:
        method = request.method
        declared = request.params.get("capabilities") if method == "initialize" else request.client_capabilities
        if method == "initialize" or request.era == "stateless":
            client = await self.upstream.client_for(declared if isinstance(declared, dict) else None, request.era)
        else:
            client = self.upstream.connected or await self.upstream.client_for(None)
        watched: list[str] = []
        if method == "subscriptions/listen":
            wanted = request.params.get("notifications")
            uris = wanted.get("resourceSubscriptions") if isinstance(wanted, dict) else None
            for uri in uris if isinstance(uris, list) else ():
                if isinstance(uri, str):
                    await self.upstream.watch(uri)
                    watched.append(uri)
        try:
            result = await self.past_middleware(request, connection)
        finally:
            for uri in watched:
                self.upstream.unwatch(uri)
        if method in ("initialize", "server/discover"):
            result = self._introduced(result, client.server_info, client.instructions)
        elif method == "logging/setLevel":
            await self.upstream.level_changed(request.params["level"])
        return result

    async def watch_resource(self, uri: str) -> None:
        """A mounting server's stateless-era client listens for ``uri``: watched upstream until ``unwatch_resource``."""
        await self.upstream.watch(uri)

    def unwatch_resource(self, uri: str) -> None:
        self.upstream.unwatch(uri)

    async def _subscribe(self, request: RequestReceived, connection: Connection) -> dict[str, Any]:
        """``resources/subscribe`` (or ``unsubscribe``): kept here for this client, and watched upstream."""
        before = set(self.connection_state(connection).subscriptions)
        result = await self.past_middleware(request, connection)
        uri = request.params["uri"]
        if request.method == "resources/subscribe" and uri not in before:
            await self.upstream.watch(uri)
        elif request.method == "resources/unsubscribe" and uri in before:
            self.upstream.unwatch(uri)
        return result

    @staticmethod
    def _introduced(result: dict[str, Any], info: dict[str, Any], instructions: str | None) -> dict[str, Any]:
        result = dict(result)
        if "serverInfo" in result and info:
            result["serverInfo"] = info
        if instructions:
            result["instructions"] = instructions
        else:
            result.pop("instructions", None)
        return result

    def handle_notification(self, notification: NotificationReceived, connection: Connection) -> Awaitable[None] | None:
        """A downstream client's notification (through the middleware, as any server's): a change of
        its roots is also told to its upstream sessions."""
        if self.middleware:
            return self.middleware.notified(notification, connection, self._proxy_notified)
        self._proxy_notified(notification, connection)
        return None

    def _proxy_notified(self, notification: NotificationReceived, connection: Connection) -> None:
        self._notified(notification, connection)
        if notification.method == "notifications/roots/list_changed":
            client = self.upstream.connected
            if client is not None and client.session.era == "handshake":
                client.connection.notify("notifications/roots/list_changed")

    def _upstream_notified(self, method: str, params: dict[str, Any]) -> None:
        if method.endswith("/list_changed") and method != "notifications/roots/list_changed":
            self.list_changed_here(method)
        elif method == "notifications/resources/updated" and isinstance(params.get("uri"), str):
            self.resource_updated_here(params["uri"])
        elif method == "notifications/elicitation/complete":
            # Only the client that was asked (client/elicitation.mdx: the server MUST send it to that client).
            connection = self.upstream.url_host(params.get("elicitationId"))
            if connection is not None and not connection.closed.is_set():
                connection.notify(method, params)

    async def aclose(self) -> None:
        """Close the upstream: its clients, its held calls, and a spawned upstream's process (its
        stdin closed, then SIGTERM, then SIGKILL, as the stdio transport stops a server)."""
        await super().aclose()
        await asyncio.shield(self.upstream.aclose())


class _Tasks(TaskService):
    """The proxy's own tasks: offered when the upstream runs tool calls as tasks in either form."""

    def __init__(self, proxy: Proxy) -> None:
        super().__init__(proxy)
        self._proxy = proxy

    def offered(self) -> bool:
        client = self._proxy.upstream.connected
        return client is not None and client.offers_tasks


def _with_task_support(result: dict[str, Any]) -> dict[str, Any]:
    """A 2025-11-25 ``tools/list`` page whose tools may run as this proxy's tasks (``execution.taskSupport``)."""
    tools = result.get("tools")
    if not isinstance(tools, list):
        return result
    marked = [
        {**tool, "execution": {**tool.get("execution", {}), "taskSupport": "optional"}}
        if isinstance(tool, dict) and "taskSupport" not in tool.get("execution", {})
        else tool
        for tool in tools
    ]
    return {**result, "tools": marked}
