"""What a server offers: its tools, prompts, resources and resource templates, and the extensions it supports.

``Server`` owns one ``Registry`` (``server.registry``) and forwards ``add_tool`` and the rest
to it. Every change calls ``on_change`` with the ``notifications/*/list_changed`` method to
announce; the server tells its clients.
"""

from __future__ import annotations

__all__ = ["Registry", "registering"]

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ..completion.completers import CompleterLike, completers_for
from ..forms.specs import check_forms
from ..types.capabilities import declared_extensions, with_extensions
from .context import Context
from .prompts import RegisteredPrompt
from .scopes import ScopeTable
from .tools import RegisteredTool, TaskStart, TaskSupport

if TYPE_CHECKING:
    from ..apps.app import App, Visibility
    from .resources import RegisteredResource, RegisteredTemplate

F = TypeVar("F", bound=Callable[..., Any])
TOOLS_CHANGED = "notifications/tools/list_changed"
PROMPTS_CHANGED = "notifications/prompts/list_changed"
RESOURCES_CHANGED = "notifications/resources/list_changed"


class Registry:
    """The tools, prompts, resources and templates, by the name or URI a client asks for."""

    __slots__ = ("apps", "extensions", "on_change", "prompts", "resources", "scopes", "templates", "tools")

    def __init__(
        self, on_change: Callable[[str], None], *, extensions: Mapping[str, Mapping[str, Any]] | None = None
    ) -> None:
        self.tools: dict[str, RegisteredTool] = {}
        self.prompts: dict[str, RegisteredPrompt] = {}
        self.resources: dict[str, RegisteredResource] = {}
        self.templates: list[RegisteredTemplate] = []
        self.on_change = on_change
        #: The OAuth scopes each item needs (``scopes=``): checked over HTTP with ``ResourceAuth``.
        self.scopes = ScopeTable()
        #: The extensions the server supports (SEP-2133): identifier -> settings, declared in its capabilities.
        self.extensions = declared_extensions(extensions)
        #: The MCP Apps published (``add_app``), by their ``ui://`` URI: each is also a resource.
        self.apps: dict[str, App] = {}

    def declare_extension(self, identifier: str, settings: Mapping[str, Any] | None = None) -> None:
        """Support extension ``identifier`` with ``settings`` (default ``{}``: none) from now on: it is
        declared in ``capabilities.extensions`` of every later ``server/discover`` result (the
        handshake era's ``initialize`` has no such field: the protocol core leaves it out there).
        ``ValueError`` for an identifier the spec does not allow (``check_extension_id``)."""
        self.extensions.update(declared_extensions({identifier: settings or {}}))

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
        task: TaskSupport | None = None,
        task_start: TaskStart = "call",
        scopes: Collection[str] = (),
        app: App | str | None = None,
        visibility: Collection[Visibility] | None = None,
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
        ``FormSchemaError`` naming the field here rather than during a call.

        ``scopes`` are the OAuth scopes a caller's token must grant (over HTTP with
        ``ResourceAuth``): others do not see the tool listed, and their calls get 403.

        ``task`` lets the tool run as a task (``"optional"``) or only as one (``"required"``):
        the call is answered at once with a task the client polls, and the same body runs
        on in the background (``docs/tasks.md``). ``task_start="explicit"`` runs the body as
        the request until it calls ``await ctx.start_task()``, so that what it asks before
        is asked synchronously (multi round-trip in the stateless era).

        ``app`` is the MCP App the host shows for the tool's calls (an ``App``, published here by
        ``add_app`` if it is not yet, or a ``ui://`` URI published otherwise): its
        ``_meta.ui.resourceUri``. ``visibility`` (``_meta.ui.visibility``): who may call it, the
        model and/or the app (``["app"]``: only an app, through its host); default both."""
        if app is not None or visibility is not None:
            from ..apps.app import tool_meta  # (loaded by the first tool with an app: others never need it)

            meta = tool_meta(meta, app, visibility)
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
            task=task,
            task_start=task_start,
        )
        check_forms(f"tool {tool.name!r}", elicits)
        if tool.name in self.tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        if app is not None and not isinstance(app, str):
            self.add_app(app)
        self.scopes.set(f"tool:{tool.name}", scopes)
        self.tools[tool.name] = tool
        self.on_change(TOOLS_CHANGED)
        return tool

    def add_app(self, app: App) -> App:
        """Publish ``app`` (``backchannel.apps.App``): its ``ui://`` resource, read as its document
        (``text/html;profile=mcp-app``) with its ``_meta.ui``, and the MCP Apps extension declared.
        The same app again changes nothing; another resource at its URI is a ``ValueError``."""
        from ..apps.app import APP_MIME_TYPE, UI_EXTENSION

        if self.apps.get(app.uri) == app:
            return app
        contents = app.contents()

        def read() -> dict[str, Any]:
            return contents

        name, description = app.name or app.uri, app.description
        self.add_resource(
            app.uri, read, name=name, title=app.title, description=description, mime_type=APP_MIME_TYPE, meta=app.meta
        )
        self.apps[app.uri] = app
        self.declare_extension(UI_EXTENSION)
        return app

    def remove_tool(self, name: str) -> None:
        """Withdraw tool ``name`` (``KeyError`` if there is none); clients are told the list changed."""
        del self.tools[name]
        self.scopes.set(f"tool:{name}", ())
        self.on_change(TOOLS_CHANGED)

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
        scopes: Collection[str] = (),
    ) -> RegisteredPrompt:
        """Register ``fn`` as a prompt; its parameters become the prompt's arguments.

        ``completers`` maps argument names to completers (see ``backchannel.completion``);
        they win over ``Complete(...)`` annotations on the parameters. ``scopes``: as ``add_tool``'s."""
        prompt = RegisteredPrompt.build(
            fn, name=name, title=title, description=description, icons=icons, meta=meta, context_type=Context
        )
        arguments = prompt.parameters.input_schema["properties"]
        prompt.completers = completers_for(fn, completers, arguments, label=f"prompt {prompt.name!r}")
        if prompt.name in self.prompts:
            raise ValueError(f"a prompt named {prompt.name!r} is already registered")
        self.scopes.set(f"prompt:{prompt.name}", scopes)
        self.prompts[prompt.name] = prompt
        self.on_change(PROMPTS_CHANGED)
        return prompt

    def remove_prompt(self, name: str) -> None:
        """Withdraw prompt ``name`` (``KeyError`` if there is none); clients are told the list changed."""
        del self.prompts[name]
        self.scopes.set(f"prompt:{name}", ())
        self.on_change(PROMPTS_CHANGED)

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
        scopes: Collection[str] = (),
    ) -> RegisteredResource | RegisteredTemplate:
        """Register a resource; a ``uri`` with RFC 6570 ``{variables}`` makes a template
        whose variables are passed to ``fn`` by name. ``completers`` (templates only)
        maps variable names to completers, like ``add_prompt``'s. ``scopes``: as ``add_tool``'s."""
        # (resources and URI templates are loaded by the first one: a server of tools never needs them)
        from .resources import RegisteredTemplate, build_resource

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
            if any(str(t.template) == uri for t in self.templates):
                raise ValueError(f"a resource template {uri!r} is already registered")
            self.scopes.set(f"template:{uri}", scopes)
            self.templates.append(entry)
        else:
            if completers:
                raise ValueError(f"resource {uri!r} has no {{variables}} to complete")
            if uri in self.resources:
                raise ValueError(f"a resource {uri!r} is already registered")
            self.scopes.set(f"resource:{uri}", scopes)
            self.resources[uri] = entry
        self.on_change(RESOURCES_CHANGED)
        return entry

    def remove_resource(self, uri: str) -> None:
        """Withdraw the resource or template ``uri``; clients are told the list changed."""
        if uri in self.resources:
            del self.resources[uri]
            self.apps.pop(uri, None)
        else:
            self.templates[:] = [t for t in self.templates if str(t.template) != uri]
        self.scopes.set(f"resource:{uri}", ())
        self.scopes.set(f"template:{uri}", ())
        self.on_change(RESOURCES_CHANGED)

    def required_scopes(self, method: str, params: Any) -> tuple[str, ...]:
        """The OAuth scopes a request needs (its tool's, prompt's, resource's; none for the rest)."""
        return self.scopes.for_request(method, params, self.templates)

    def tool_definition(self, name: str) -> dict[str, Any] | None:
        """The ``tools/list`` entry of tool ``name``, or None."""
        tool = self.tools.get(name)
        return tool.definition if tool is not None else None

    def completing(self) -> bool:
        """True when some prompt argument or template variable has a completer."""
        return any(p.completers for p in self.prompts.values()) or any(t.completers for t in self.templates)

    def capabilities(self) -> dict[str, Any]:
        """What this registry lets the server declare: each feature that has something registered.

        ``listChanged`` and ``subscribe`` mean ``notifications/*`` and
        ``resources/subscribe`` to a handshake-era client, and the filters
        ``subscriptions/listen`` honours to a stateless-era one; both are served.
        """
        capabilities: dict[str, Any] = {"logging": {}}
        if self.tools:
            capabilities["tools"] = {"listChanged": True}
        if self.prompts:
            capabilities["prompts"] = {"listChanged": True}
        if self.resources or self.templates:
            capabilities["resources"] = {"subscribe": True, "listChanged": True}
        if self.completing():
            capabilities["completions"] = {}
        return with_extensions(capabilities, self.extensions)


def registering(add: Callable[[F], object]) -> Callable[[F], F]:
    """A decorator that registers with ``add`` and gives the function back unchanged."""

    def register(fn: F) -> F:
        add(fn)
        return fn

    return register
