"""What a server offers: its tools, prompts, resources and resource templates.

``Server`` owns one ``Registry`` (``server.registry``) and forwards ``add_tool`` and the rest
to it. Every change calls ``on_change`` with the ``notifications/*/list_changed`` method to
announce; the server tells its clients.
"""

from __future__ import annotations

__all__ = ["Registry"]

from collections.abc import Callable, Sequence
from typing import Any

from .completion import CompleterLike, completers_for
from .context import Context
from .elicitation import check_forms
from .prompts import RegisteredPrompt
from .resources import RegisteredResource, RegisteredTemplate, build_resource
from .tools import RegisteredTool

TOOLS_CHANGED = "notifications/tools/list_changed"
PROMPTS_CHANGED = "notifications/prompts/list_changed"
RESOURCES_CHANGED = "notifications/resources/list_changed"


class Registry:
    """The tools, prompts, resources and templates, by the name or URI a client asks for."""

    __slots__ = ("on_change", "prompts", "resources", "templates", "tools")

    def __init__(self, on_change: Callable[[str], None]) -> None:
        self.tools: dict[str, RegisteredTool] = {}
        self.prompts: dict[str, RegisteredPrompt] = {}
        self.resources: dict[str, RegisteredResource] = {}
        self.templates: list[RegisteredTemplate] = []
        self.on_change = on_change

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
        if tool.name in self.tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self.tools[tool.name] = tool
        self.on_change(TOOLS_CHANGED)
        return tool

    def remove_tool(self, name: str) -> None:
        """Withdraw tool ``name`` (``KeyError`` if there is none); clients are told the list changed."""
        del self.tools[name]
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
    ) -> RegisteredPrompt:
        """Register ``fn`` as a prompt; its parameters become the prompt's arguments.

        ``completers`` maps argument names to completers (see ``server.completion``);
        they win over ``Complete(...)`` annotations on the parameters."""
        prompt = RegisteredPrompt.build(
            fn, name=name, title=title, description=description, icons=icons, meta=meta, context_type=Context
        )
        arguments = prompt.parameters.input_schema["properties"]
        prompt.completers = completers_for(fn, completers, arguments, label=f"prompt {prompt.name!r}")
        if prompt.name in self.prompts:
            raise ValueError(f"a prompt named {prompt.name!r} is already registered")
        self.prompts[prompt.name] = prompt
        self.on_change(PROMPTS_CHANGED)
        return prompt

    def remove_prompt(self, name: str) -> None:
        """Withdraw prompt ``name`` (``KeyError`` if there is none); clients are told the list changed."""
        del self.prompts[name]
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
            if any(str(t.template) == uri for t in self.templates):
                raise ValueError(f"a resource template {uri!r} is already registered")
            self.templates.append(entry)
        else:
            if completers:
                raise ValueError(f"resource {uri!r} has no {{variables}} to complete")
            if uri in self.resources:
                raise ValueError(f"a resource {uri!r} is already registered")
            self.resources[uri] = entry
        self.on_change(RESOURCES_CHANGED)
        return entry

    def remove_resource(self, uri: str) -> None:
        """Withdraw the resource or template ``uri``; clients are told the list changed."""
        if uri in self.resources:
            del self.resources[uri]
        else:
            self.templates[:] = [t for t in self.templates if str(t.template) != uri]
        self.on_change(RESOURCES_CHANGED)

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
        return capabilities
