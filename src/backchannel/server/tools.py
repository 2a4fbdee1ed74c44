"""Tools: a Python function, described once at registration, called per request."""

from __future__ import annotations

__all__ = ["RegisteredTool", "TaskStart", "TaskSupport", "failure_result"]

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, get_args

import msgspec

from ..signatures.signature import InvalidArguments, OutputShape, ParameterSet, derive_output, derive_parameters
from ..types.content import AudioContent, EmbeddedResource, ImageContent, ResourceLink, TextContent
from ..types.errors import InvalidParams, ToolError
from ..types.field_revisions import versions_without
from ..types.tools import CallToolResult
from .content import Audio, Image, to_content
from .definitions import wire_definition

#: The revisions without ``structuredContent`` (before 2025-06-18): their results carry only content.
_NO_STRUCTURED_CONTENT = versions_without("CallToolResult", "structuredContent")
# SEP-986: 1-128 characters from this set.
_encode_json = msgspec.json.encode
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")

#: ``add_tool(task=...)``: the tool may run as a task, or runs only as one (``server/tasks/``).
TaskSupport: TypeAlias = Literal["optional", "required"]
#: ``add_tool(task_start=...)``: the task begins before the body runs, or where it calls ``ctx.start_task()``.
TaskStart: TypeAlias = Literal["call", "explicit"]


@dataclass(slots=True)
class RegisteredTool:
    name: str
    fn: Callable[..., Any]
    parameters: ParameterSet
    output: OutputShape
    description: str | None = None
    title: str | None = None
    annotations: dict[str, Any] | None = None
    icons: list[dict[str, Any]] | None = None
    meta: dict[str, Any] | None = None
    is_async: bool = False
    definition: dict[str, Any] = field(default_factory=dict)
    task: TaskSupport | None = None
    task_start: TaskStart = "call"
    #: ``definition`` with 2025-11-25's ``execution.taskSupport`` (the same dict without a task).
    handshake_definition: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None,
        title: str | None,
        description: str | None,
        annotations: dict[str, Any] | None,
        icons: list[dict[str, Any]] | None,
        meta: dict[str, Any] | None,
        structured_output: bool | None,
        context_type: type,
        input_schema: dict[str, Any] | None = None,
        task: TaskSupport | None = None,
        task_start: TaskStart = "call",
    ) -> RegisteredTool:
        name = name or fn.__name__
        if task is not None and task not in get_args(TaskSupport):
            raise ValueError(f"tool {name!r}: task must be 'optional', 'required' or None, not {task!r}")
        if task_start not in get_args(TaskStart):
            raise ValueError(f"tool {name!r}: task_start must be 'call' or 'explicit', not {task_start!r}")
        if not _TOOL_NAME.match(name):
            raise ValueError(
                f"tool name {name!r} is not valid: use 1-128 ASCII letters, digits, '_', '-' or '.' (SEP-986)"
            )
        parameters = derive_parameters(fn, context_type=context_type, name=name)
        if input_schema is not None:
            parameters = _passthrough(parameters, input_schema, name)
        output = (
            OutputShape(None, False)
            if structured_output is False
            else derive_output(fn, name=name, content_types=_content_types())
        )
        if structured_output and output.output_schema is None:
            raise TypeError(f"tool {name!r}: structured_output=True needs a return annotation that has a schema")
        tool = cls(
            name=name,
            fn=fn,
            parameters=parameters,
            output=output,
            description=description or inspect.getdoc(fn),
            title=title,
            annotations=annotations,
            icons=icons,
            meta=meta,
            is_async=inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__),
            task=task,
            task_start=task_start,
        )
        tool.definition = tool._definition()
        tool.handshake_definition = tool.definition
        if task is not None:  # 2026-07-28's Tool has no execution field: only the handshake era sees it
            tool.handshake_definition = {**tool.definition, "execution": {"taskSupport": task}}
        return tool

    def _definition(self) -> dict[str, Any]:
        return wire_definition(
            ("name", self.name),
            ("title", self.title),
            ("description", self.description),
            ("inputSchema", self.parameters.input_schema),
            ("outputSchema", self.output.output_schema),
            ("annotations", self.annotations),
            ("icons", self.icons),
            ("_meta", self.meta),
        )

    def to_result(self, value: Any, version: str | None = None) -> dict[str, Any]:
        """A handler's return value as a ``CallToolResult`` of revision ``version`` (the newest
        shape when None): ``structuredContent`` only where the revision has it (2025-06-18+)."""
        if isinstance(value, CallToolResult):
            result: dict[str, Any] = msgspec.to_builtins(value)
        elif self.output.output_schema is None:
            return {"content": to_content(value)}
        else:
            structured = self.output.structure(value)
            # For clients that read only content, the same data as JSON text (the spec's SHOULD).
            result = {
                "content": [{"type": "text", "text": _encode_json(structured).decode()}],
                "structuredContent": structured,
            }
        if "structuredContent" in result and version in _NO_STRUCTURED_CONTENT:
            return _without_structured(result)
        return result


@dataclass(frozen=True, slots=True)
class _PassthroughParameters(ParameterSet):
    """Arguments for a tool registered with an explicit ``input_schema``.

    The schema is published verbatim and not enforced, except that an argument
    its top level does not allow (``additionalProperties: false``, matching no
    ``properties`` or ``patternProperties``) is refused like a bad argument, so the
    schema and the server agree about unknown arguments. Each key that names a
    parameter of the function is passed as is (no conversion); other allowed keys
    go to the function's ``**kwargs`` if it has one, and are ignored otherwise.
    """

    _closed: frozenset[str] | None = field(default=None, repr=False, compare=False)  # None: any name
    _patterns: tuple[re.Pattern[str], ...] = field(default=(), repr=False, compare=False)

    def validate(self, arguments: dict[str, Any] | None) -> dict[str, Any]:
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise InvalidParams(
                f"Invalid arguments for {self._label}: expected an object, got {type(arguments).__name__}"
            )
        if self._closed is not None and not arguments.keys() <= self._closed:
            self._refuse_unknown(arguments)
        if self._rest is not None:
            if not self._reserved.isdisjoint(arguments):
                raise self._refusal(self._unexpected(key for key in arguments if key in self._reserved))
            return dict(arguments)
        return {parameter: arguments[parameter] for _, parameter in self._fields if parameter in arguments}

    def _refuse_unknown(self, arguments: dict[str, Any]) -> None:
        assert self._closed is not None
        unknown = [
            key
            for key in arguments
            if key not in self._closed and not any(pattern.search(key) for pattern in self._patterns)
        ]
        if unknown:
            raise self._refusal(self._unexpected(unknown))


def _passthrough(parameters: ParameterSet, input_schema: dict[str, Any], name: str) -> ParameterSet:
    if not isinstance(input_schema, dict) or input_schema.get("type") != "object":
        raise ValueError(f'tool {name!r}: input_schema must be a JSON Schema object with "type": "object"')
    closed: frozenset[str] | None = None
    patterns: list[re.Pattern[str]] = []
    if input_schema.get("additionalProperties") is False:
        properties = input_schema.get("properties")
        closed = frozenset(properties if isinstance(properties, dict) else ())
        for pattern in input_schema.get("patternProperties") or {}:
            try:
                patterns.append(re.compile(pattern))
            except (re.error, TypeError):
                # An ECMA-262 pattern Python cannot read: better accept too much than refuse a good call.
                closed = None
                break
    return _PassthroughParameters(
        input_schema,
        parameters.context_parameter,
        parameters._model,
        parameters._fields,
        parameters._label,
        parameters._json_strings,
        _rest=parameters._rest,
        _reserved=parameters._reserved,
        _closed=closed,
        _patterns=tuple(patterns),
    )


def _without_structured(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` for a revision without ``structuredContent``: its JSON text stands in for it
    when the content does not carry it already (no content at all)."""
    structured = result["structuredContent"]
    kept = {key: item for key, item in result.items() if key != "structuredContent"}
    if not kept.get("content") and structured is not None:
        kept["content"] = [{"type": "text", "text": _encode_json(structured).decode()}]
    return kept


def failure_result(failure: BaseException) -> dict[str, Any] | None:
    """The result a failed tool call answers with, for every way a tool runs (in the read loop's
    turn, in a task, as a task): a tool execution error the client hands to the model
    (``isError: true``, the message as text) when the tool raised ``ToolError`` or its arguments
    do not fit (SEP-1303, rather than -32602; tools.mdx "Error Handling"). None for any other
    failure: the caller raises it again, and the runtime answers it as a JSON-RPC error (an
    ``MCPError`` as itself, anything else as -32603 with its detail in the log only)."""
    if isinstance(failure, ToolError):
        text = str(failure)
    elif isinstance(failure, InvalidArguments):
        text = failure.message
    else:
        return None
    return {"content": [{"type": "text", "text": text}], "isError": True}


def _content_types() -> tuple[type, ...]:
    return (
        TextContent,
        ImageContent,
        AudioContent,
        ResourceLink,
        EmbeddedResource,
        CallToolResult,
        Image,
        Audio,
    )
