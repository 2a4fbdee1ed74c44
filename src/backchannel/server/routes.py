"""The method routes: one function per MCP method a client may call, and ``ROUTES``, the table of them.

Each route takes the server, the request and its connection, and returns the result's
JSON (or raises an ``MCPError``, which the runtime answers with). ``Server.handle_request``
picks the route after checking that the request's version has the method, and sets the
request's ``Context`` first: a route reads it from ``CURRENT_CONTEXT``.
"""

from __future__ import annotations

__all__ = ["INLINE_ROUTES", "ROUTES", "InlineRoute", "Route", "call"]

import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..protocol.events import RequestReceived
from ..signatures.signature import InvalidArguments
from ..types.errors import InvalidParams, MethodNotFound, ResourceNotFound, ToolError
from ..types.field_revisions import for_revision, trims
from ..types.logging import LOG_LEVEL_RANK, LOGGING_LEVELS
from ..types.versions import newer_first
from .completion_request import complete_now, handle_complete
from .context import CURRENT_CONTEXT, Context
from .mrtr import InputRequired, Round
from .pagination import paginate
from .scopes import visible
from .tasks.routes import TASK_ROUTES
from .tasks.service import CORE_TASK_VERSIONS
from .tools import arguments_refused, tool_failed

if TYPE_CHECKING:
    from ..runtime.connection import Connection
    from .server import Server

Route = Callable[["Server", RequestReceived, "Connection"], Awaitable[dict[str, Any]]]
#: A route that answers in the read loop's turn, without a task, or says None (then ``ROUTES`` serves it).
InlineRoute = Callable[["Server", RequestReceived, "Connection"], dict[str, Any] | None]


async def initialize(server: Server, request: RequestReceived, connection: Connection) -> dict[str, Any]:
    # What the agreed revision lacks is left out (the ``completions`` capability before 2025-03-26...).
    version = request.version
    capabilities = server.tasks.declare(server.capabilities(), request)
    result: dict[str, Any] = {
        "protocolVersion": version,
        "capabilities": for_revision("ServerCapabilities", capabilities, version),
        "serverInfo": for_revision("Implementation", server.info, version),
    }
    if server.instructions:
        result["instructions"] = server.instructions
    return result


async def ping(server: Server, request: RequestReceived, connection: Connection) -> dict[str, Any]:
    return {}


async def discover(server: Server, request: RequestReceived, connection: Connection) -> dict[str, Any]:
    result: dict[str, Any] = {
        "supportedVersions": newer_first(server.versions),
        "capabilities": server.tasks.declare(server.capabilities(), request),
        **_cache_hints(server, request),
    }
    if server.instructions:
        result["instructions"] = server.instructions
    return result


def _cache_hints(server: Server, request: RequestReceived) -> dict[str, Any]:
    if request.era != "stateless":
        return {}
    return {"ttlMs": server.cache_ttl_ms, "cacheScope": server.cache_scope}


def _page(
    server: Server,
    kind: str,
    key: str,
    shape: str,
    items: list[Any],
    request: RequestReceived,
    field: str = "definition",
) -> dict[str, Any]:
    """A page of ``items``' definitions (each a ``shape``), without the fields the request's revision lacks."""
    page, next_cursor = paginate(kind, items, request.params.get("cursor"), server.page_size)
    definitions = [getattr(item, field) for item in page]
    version = request.version
    if trims(shape, version):
        definitions = [for_revision(shape, definition, version) for definition in definitions]
    result: dict[str, Any] = {key: definitions, **_cache_hints(server, request)}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result


async def list_tools(server: Server, request: RequestReceived, connection: Connection) -> dict[str, Any]:
    # Only 2025-11-25 has ``execution.taskSupport`` (the extension has the server decide).
    field = "handshake_definition" if request.version in CORE_TASK_VERSIONS else "definition"
    tools = visible(server.registry.scopes, "tool", server.registry.tools)  # what the caller's token may use
    return _page(server, "tools", "tools", "Tool", tools, request, field)


async def list_prompts(server: Server, request: RequestReceived, connection: Connection) -> dict[str, Any]:
    prompts = visible(server.registry.scopes, "prompt", server.registry.prompts)
    return _page(server, "prompts", "prompts", "Prompt", prompts, request)


async def list_resources(server: Server, request: RequestReceived, connection: Connection) -> dict[str, Any]:
    resources = visible(server.registry.scopes, "resource", server.registry.resources)
    return _page(server, "resources", "resources", "Resource", resources, request)


async def list_templates(server: Server, request: RequestReceived, connection: Connection) -> dict[str, Any]:
    templates = visible(server.registry.scopes, "template", {str(t.template): t for t in server.registry.templates})
    return _page(server, "templates", "resourceTemplates", "ResourceTemplate", templates, request)


async def call_tool(server: Server, request: RequestReceived, connection: Connection) -> dict[str, Any]:
    params = request.params
    name = params.get("name")
    if not isinstance(name, str):
        raise InvalidParams("tools/call: params.name must be a string")
    tool = server.registry.tools.get(name)
    if tool is None:
        raise InvalidParams(f"Unknown tool: {name}", data={"name": name})
    try:
        kwargs = tool.parameters.validate(params.get("arguments"))
    except InvalidArguments as invalid:
        return arguments_refused(invalid)
    context = _context_for(server, request)
    if tool.parameters.context_parameter is not None:
        kwargs[tool.parameters.context_parameter] = context
    try:
        if tool.task is not None and server.tasks.wanted(tool, request):
            value = await server.tasks.start(tool, kwargs, context)  # the CreateTaskResult, or inline
            if context.task is not None:
                return value  # type: ignore[no-any-return]
        else:
            if "task" in params and tool.task is None and request.era == "handshake":
                server.tasks.refuse_task_param(request)
            value = await call(tool.fn, kwargs)
    except InputRequired as needed:
        return await _input_required(server, context, needed)
    return tool.to_result(value, request.version)


async def complete(server: Server, request: RequestReceived, connection: Connection) -> dict[str, Any]:
    """``completion/complete`` (``server/completion_request.py``); -32601 when nothing completes."""
    registry = server.registry
    if not registry.completing():
        raise MethodNotFound("Method not found: completion/complete (this server offers no completions)")
    admit = functools.partial(server.completion_limit.check, CURRENT_CONTEXT.get())
    return await handle_complete(request.params, registry.prompts, registry.templates, registry.resources, admit)


def call_tool_now(server: Server, request: RequestReceived, connection: Connection) -> dict[str, Any] | None:
    """``tools/call`` of a plain synchronous tool (no context, no task): nothing to wait for."""
    params = request.params
    name = params.get("name")
    tool = server.registry.tools.get(name) if isinstance(name, str) else None  # a bad name: ``call_tool`` says so
    if tool is None or tool.is_async or tool.parameters.context_parameter is not None or tool.task is not None:
        return None
    if "task" in params:  # a task: ``call_tool`` decides
        return None
    token = CURRENT_CONTEXT.set(Context(server, connection, request))
    try:
        try:
            kwargs = tool.parameters.validate(params.get("arguments"))
        except InvalidArguments as invalid:
            return arguments_refused(invalid)
        try:
            value = tool.fn(**kwargs)
        except ToolError as failure:
            return tool_failed(failure)
    finally:
        CURRENT_CONTEXT.reset(token)
    # (``isawaitable`` asks the ``Awaitable`` ABC: skipped for what plain tools return.)
    if type(value) not in _PLAIN_VALUES and inspect.isawaitable(value):  # an object whose __call__ is async
        tool.is_async = True  # from now on served as what it is
        close = getattr(value, "close", None)
        if close is not None:
            close()
        return None
    return tool.to_result(value, request.version)


_PLAIN_VALUES = frozenset({str, dict, list, tuple, int, float, bool, bytes, type(None)})


def complete_inline(server: Server, request: RequestReceived, connection: Connection) -> dict[str, Any] | None:
    """``completion/complete`` when the argument's completer is synchronous (a static list, a
    plain function): answered as ``complete`` would (``completion_request.complete_now``)."""
    registry = server.registry
    context = Context(server, connection, request)
    admit = functools.partial(server.completion_limit.check, context)
    token = CURRENT_CONTEXT.set(context)  # a completer may read ``Context.current()``
    try:
        return complete_now(
            request.params, registry.prompts, registry.templates, registry.resources, admit, registry.completing
        )
    finally:
        CURRENT_CONTEXT.reset(token)


async def get_prompt(server: Server, request: RequestReceived, connection: Connection) -> dict[str, Any]:
    params = request.params
    name = params.get("name")
    if not isinstance(name, str):
        raise InvalidParams("prompts/get: params.name must be a string")
    prompt = server.registry.prompts.get(name)
    if prompt is None:
        raise InvalidParams(f"Unknown prompt: {name}", data={"name": name})
    kwargs = prompt.parameters.validate(params.get("arguments"))
    context = _context_for(server, request)
    if prompt.parameters.context_parameter is not None:
        kwargs[prompt.parameters.context_parameter] = context
    try:
        return prompt.to_result(await call(prompt.fn, kwargs))
    except InputRequired as needed:
        return await _input_required(server, context, needed)


async def read_resource(server: Server, request: RequestReceived, connection: Connection) -> dict[str, Any]:
    uri = request.params.get("uri")
    if not isinstance(uri, str):
        raise InvalidParams("resources/read: params.uri must be a string")
    try:
        return await _read(server, uri, request)
    except InputRequired as needed:
        return await _input_required(server, CURRENT_CONTEXT.get(), needed)


async def _read(server: Server, uri: str, request: RequestReceived) -> dict[str, Any]:
    registry = server.registry
    resource = registry.resources.get(uri)
    context = _context_for(server, request)
    if resource is not None:
        kwargs: dict[str, Any] = {}
        if resource.context_parameter is not None:
            kwargs[resource.context_parameter] = context
        value = await call(resource.fn, kwargs)
        mime_type = resource.mime_type
    else:
        for template in registry.templates:
            variables = template.template.match(uri)
            if variables is not None:
                assert template.parameters is not None
                kwargs = template.parameters.validate(variables)
                if template.parameters.context_parameter is not None:
                    kwargs[template.parameters.context_parameter] = context
                value = await call(template.fn, kwargs)
                mime_type = template.mime_type
                break
        else:
            raise ResourceNotFound(uri)
    from .resources import to_contents  # (loaded with the first resource registered: not at start)

    result: dict[str, Any] = {"contents": to_contents(uri, value, mime_type)}
    if request.era == "stateless":
        result.update(ttlMs=0, cacheScope=server.cache_scope)
    return result


def _context_for(server: Server, request: RequestReceived) -> Context:
    """This request's context; in the stateless era with the round's answers loaded."""
    context = CURRENT_CONTEXT.get()
    if request.era == "stateless" and context.round is None:
        context.round = Round.start(server.state_sealer, request.method, request.params, context.principal)
    return context


async def _input_required(server: Server, context: Context, needed: InputRequired) -> dict[str, Any]:
    assert context.round is not None, "InputRequired is raised only in the stateless era"
    return await context.round.ended_by(needed, server.state, server.state_sealer)


async def subscribe(server: Server, request: RequestReceived, connection: Connection) -> dict[str, Any]:
    state = server.connection_state(connection)
    state.subscriptions = state.subscriptions | {_subscription_uri(request)}
    return {}


async def unsubscribe(server: Server, request: RequestReceived, connection: Connection) -> dict[str, Any]:
    state = server.connection_state(connection)
    state.subscriptions = state.subscriptions - {_subscription_uri(request)}
    return {}


def _subscription_uri(request: RequestReceived) -> str:
    uri = request.params.get("uri")
    if not isinstance(uri, str):
        raise InvalidParams(f"{request.method}: params.uri must be a string")
    return uri


async def set_level(server: Server, request: RequestReceived, connection: Connection) -> dict[str, Any]:
    level = request.params.get("level")
    if not isinstance(level, str) or level not in LOG_LEVEL_RANK:
        raise InvalidParams(f"logging/setLevel: level must be one of {', '.join(LOGGING_LEVELS)}; got {level!r}")
    server.connection_state(connection).log_level = level
    return {}


async def listen(server: Server, request: RequestReceived, connection: Connection) -> dict[str, Any]:
    task_ids, stop = await server.tasks.follow(CURRENT_CONTEXT.get())  # notifications/tasks (SEP-2663)
    try:
        return await server.subscriptions.listen(request, connection, server.capabilities(), task_ids)
    finally:
        stop()


async def call(fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """``fn(**kwargs)``, awaited when it returns an awaitable (a handler may be sync or async)."""
    value = fn(**kwargs)
    if inspect.isawaitable(value):
        value = await value
    return value


#: Method -> route: every request method this server answers (each era allows its own subset).
ROUTES: dict[str, Route] = {
    "initialize": initialize,
    "ping": ping,
    "server/discover": discover,
    "tools/list": list_tools,
    "tools/call": call_tool,
    "prompts/list": list_prompts,
    "prompts/get": get_prompt,
    "resources/list": list_resources,
    "resources/templates/list": list_templates,
    "resources/read": read_resource,
    "resources/subscribe": subscribe,
    "resources/unsubscribe": unsubscribe,
    "logging/setLevel": set_level,
    "completion/complete": complete,
    "subscriptions/listen": listen,
    **TASK_ROUTES,
}

#: Method -> inline route: what ``Server.answer_now`` may answer in the read loop's turn.
INLINE_ROUTES: dict[str, InlineRoute] = {
    "tools/call": call_tool_now,
    "completion/complete": complete_inline,
}
