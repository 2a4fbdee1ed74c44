"""The method routes: one function per MCP method a client may call, and ``ROUTES``, the table of them.

Each route takes the server, the request and the request's ``Context`` (its connection,
era, client), and returns the result's JSON (or raises an ``MCPError``, which the runtime
answers with). ``Server.handle_request`` picks the route after checking that the request's
version has the method, makes the ``Context`` and hands it over; it is also current
(``Context.current()``) for the handler code the route runs.

``tools/call`` takes one path (``call_tool``): the tool found (``_tool_named``), its arguments
checked (``_arguments``), the call, and a failure the model should read made a result
(``tools.failure_result``). ``call_tool_now`` is the same path for a plain synchronous tool,
taken in the read loop's turn (``INLINE_ROUTES``): nothing in it to wait for.
"""

from __future__ import annotations

__all__ = ["INLINE_ROUTES", "ROUTES", "InlineRoute", "Route", "call"]

import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..protocol.events import RequestReceived
from ..skills.routes import SKILL_ROUTES
from ..types.errors import InvalidParams, MethodNotFound, ResourceNotFound
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
from .tools import RegisteredTool, failure_result

if TYPE_CHECKING:
    from ..runtime.connection import Connection
    from .route_face import RouteServer

Route = Callable[["RouteServer", RequestReceived, Context], Awaitable[dict[str, Any]]]
#: A route that answers in the read loop's turn, without a task, or says None (then ``ROUTES`` serves it).
#: It makes the request's ``Context`` once it knows it answers: a request it leaves gets its own in
#: ``handle_request``, so each request makes one.
InlineRoute = Callable[["RouteServer", RequestReceived, "Connection"], dict[str, Any] | None]


async def initialize(server: RouteServer, request: RequestReceived, context: Context) -> dict[str, Any]:
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


async def ping(server: RouteServer, request: RequestReceived, context: Context) -> dict[str, Any]:
    return {}


async def discover(server: RouteServer, request: RequestReceived, context: Context) -> dict[str, Any]:
    result: dict[str, Any] = {
        "supportedVersions": newer_first(server.versions),
        "capabilities": server.tasks.declare(server.capabilities(), request),
        **_cache_hints(server, request),
    }
    if server.instructions:
        result["instructions"] = server.instructions
    return result


def _cache_hints(server: RouteServer, request: RequestReceived) -> dict[str, Any]:
    if request.era != "stateless":
        return {}
    return {"ttlMs": server.cache_ttl_ms, "cacheScope": server.cache_scope}


def _page(
    server: RouteServer,
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


async def list_tools(server: RouteServer, request: RequestReceived, context: Context) -> dict[str, Any]:
    # Only 2025-11-25 has ``execution.taskSupport`` (the extension has the server decide).
    field = "handshake_definition" if request.version in CORE_TASK_VERSIONS else "definition"
    tools = visible(server.registry.scopes, "tool", server.registry.tools)  # what the caller's token may use
    return _page(server, "tools", "tools", "Tool", tools, request, field)


async def list_prompts(server: RouteServer, request: RequestReceived, context: Context) -> dict[str, Any]:
    prompts = visible(server.registry.scopes, "prompt", server.registry.prompts)
    return _page(server, "prompts", "prompts", "Prompt", prompts, request)


async def list_resources(server: RouteServer, request: RequestReceived, context: Context) -> dict[str, Any]:
    resources = visible(server.registry.scopes, "resource", server.registry.resources)
    return _page(server, "resources", "resources", "Resource", resources, request)


async def list_templates(server: RouteServer, request: RequestReceived, context: Context) -> dict[str, Any]:
    templates = visible(server.registry.scopes, "template", {str(t.template): t for t in server.registry.templates})
    return _page(server, "templates", "resourceTemplates", "ResourceTemplate", templates, request)


async def call_tool(server: RouteServer, request: RequestReceived, context: Context) -> dict[str, Any]:
    """``tools/call``: the tool, its arguments checked, the call (as a task when one is wanted
    and the tool allows it), its value as a result. ``call_tool_now`` takes this path for a
    plain synchronous tool; this serves every other call, in a task of its own."""
    params = request.params
    tool = _tool_named(server, params)
    try:
        kwargs = _arguments(tool, request, context)
        _start_round(server, request, context)
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
    except Exception as failure:
        result = failure_result(failure)  # the model reads a ToolError or refused arguments
        if result is None:
            raise
        return result
    return tool.to_result(value, request.version)


async def complete(server: RouteServer, request: RequestReceived, context: Context) -> dict[str, Any]:
    """``completion/complete`` (``server/completion_request.py``); -32601 when nothing completes."""
    registry = server.registry
    if not registry.completing():
        raise MethodNotFound("Method not found: completion/complete (this server offers no completions)")
    admit = functools.partial(server.completion_limit.check, context)
    return await handle_complete(request.params, registry.prompts, registry.templates, registry.resources, admit)


def call_tool_now(server: RouteServer, request: RequestReceived, connection: Connection) -> dict[str, Any] | None:
    """``call_tool``'s path for a plain synchronous tool (no context, no task): nothing to wait
    for, so answered in the read loop's turn. None for any other tool (``call_tool`` serves it);
    a name that names no tool is refused here as there."""
    params = request.params
    tool = _tool_named(server, params)
    if tool.is_async or tool.parameters.context_parameter is not None or tool.task is not None or "task" in params:
        return None
    context = Context(server, connection, request)
    token = CURRENT_CONTEXT.set(context)  # the tool and the log handler may ask ``Context.current()``
    try:
        value = tool.fn(**tool.parameters.validate(params.get("arguments")))  # (``_arguments``: no context to add)
    except Exception as failure:
        result = failure_result(failure)
        if result is None:
            raise
        return result
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


def _tool_named(server: RouteServer, params: dict[str, Any]) -> RegisteredTool:
    """The tool a ``tools/call`` names; -32602 when the name is not a string or names none
    (tools.mdx "Error Handling": an unknown tool is a protocol error)."""
    name = params.get("name")
    tool = server.registry.tools.get(name) if isinstance(name, str) else None
    if tool is None:
        if not isinstance(name, str):
            raise InvalidParams("tools/call: params.name must be a string")
        raise InvalidParams(f"Unknown tool: {name}", data={"name": name})
    return tool


def _arguments(tool: RegisteredTool, request: RequestReceived, context: Context) -> dict[str, Any]:
    """The keyword arguments of ``tool``'s call: the request's arguments checked (``InvalidArguments``
    when they do not fit) and the context where the tool takes it."""
    kwargs = tool.parameters.validate(request.params.get("arguments"))
    if tool.parameters.context_parameter is not None:
        kwargs[tool.parameters.context_parameter] = context
    return kwargs


def complete_inline(server: RouteServer, request: RequestReceived, connection: Connection) -> dict[str, Any] | None:
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


async def get_prompt(server: RouteServer, request: RequestReceived, context: Context) -> dict[str, Any]:
    params = request.params
    name = params.get("name")
    if not isinstance(name, str):
        raise InvalidParams("prompts/get: params.name must be a string")
    prompt = server.registry.prompts.get(name)
    if prompt is None:
        raise InvalidParams(f"Unknown prompt: {name}", data={"name": name})
    kwargs = prompt.parameters.validate(params.get("arguments"))
    _start_round(server, request, context)
    if prompt.parameters.context_parameter is not None:
        kwargs[prompt.parameters.context_parameter] = context
    try:
        return prompt.to_result(await call(prompt.fn, kwargs))
    except InputRequired as needed:
        return await _input_required(server, context, needed)


async def read_resource(server: RouteServer, request: RequestReceived, context: Context) -> dict[str, Any]:
    uri = request.params.get("uri")
    if not isinstance(uri, str):
        raise InvalidParams("resources/read: params.uri must be a string")
    try:
        return await _read(server, uri, request, context)
    except InputRequired as needed:
        return await _input_required(server, context, needed)


async def _read(server: RouteServer, uri: str, request: RequestReceived, context: Context) -> dict[str, Any]:
    registry = server.registry
    resource = registry.resources.get(uri)
    _start_round(server, request, context)
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


def _start_round(server: RouteServer, request: RequestReceived, context: Context) -> None:
    """In the stateless era, load the round's answers into ``context`` (``Context.request_input``
    reads them; a handler may also reach it through ``Context.current()``)."""
    if request.era == "stateless" and context.round is None:
        context.round = Round.start(server.state_sealer, request.method, request.params, context.principal)


async def _input_required(server: RouteServer, context: Context, needed: InputRequired) -> dict[str, Any]:
    assert context.round is not None, "InputRequired is raised only in the stateless era"
    return await context.round.ended_by(needed, server.state, server.state_sealer)


async def subscribe(server: RouteServer, request: RequestReceived, context: Context) -> dict[str, Any]:
    state = server.connection_state(context.connection)
    state.subscriptions = state.subscriptions | {_subscription_uri(request)}
    return {}


async def unsubscribe(server: RouteServer, request: RequestReceived, context: Context) -> dict[str, Any]:
    state = server.connection_state(context.connection)
    state.subscriptions = state.subscriptions - {_subscription_uri(request)}
    return {}


def _subscription_uri(request: RequestReceived) -> str:
    uri = request.params.get("uri")
    if not isinstance(uri, str):
        raise InvalidParams(f"{request.method}: params.uri must be a string")
    return uri


async def set_level(server: RouteServer, request: RequestReceived, context: Context) -> dict[str, Any]:
    level = request.params.get("level")
    if not isinstance(level, str) or level not in LOG_LEVEL_RANK:
        raise InvalidParams(f"logging/setLevel: level must be one of {', '.join(LOGGING_LEVELS)}; got {level!r}")
    server.connection_state(context.connection).log_level = level
    return {}


async def listen(server: RouteServer, request: RequestReceived, context: Context) -> dict[str, Any]:
    task_ids, stop = await server.tasks.follow(context)  # notifications/tasks (SEP-2663)
    try:
        return await server.subscriptions.listen(request, context.connection, server.capabilities(), task_ids)
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
    **SKILL_ROUTES,  # skills/list, skills/get, resources/directory/read (SEP-2640)
}

#: Method -> inline route: what ``Server.answer_now`` may answer in the read loop's turn.
INLINE_ROUTES: dict[str, InlineRoute] = {
    "tools/call": call_tool_now,
    "completion/complete": complete_inline,
}
