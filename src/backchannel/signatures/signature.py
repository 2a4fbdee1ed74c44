"""Python signatures → MCP schemas, argument validation and structured output.

Everything here runs once, when a tool or prompt is registered: the function's
type hints become a pydantic model (for arguments) and a ``TypeAdapter`` (for the
return value), so a call only pays for validation, never for introspection.
Parameters that are all ``str``, ``int``, ``float`` or ``bool`` need no pydantic until a
call's arguments need converting or refusing (``plain_parameters.py``).

Rules worth knowing:

* A tool's ``inputSchema`` says ``additionalProperties: false`` and an argument
  it does not name is refused like any other bad argument, so the schema and the
  validation agree. A tool that takes ``**kwargs`` publishes
  ``additionalProperties`` instead (``true``, or the schema of the ``**kwargs``
  annotation) and receives the unknown arguments there. Only the top level is
  concerned: a parameter's own type (dataclass, TypedDict, model) keeps whatever
  it says about extra keys. Prompt arguments and resource template variables
  that name no parameter are ignored.
* Arguments that fail validation raise ``InvalidArguments`` (an ``InvalidParams``,
  -32602): its message names each failing field and what was expected, for a
  person or a model to act on. For a tool the server turns it into a result with
  ``isError: true`` (SEP-1303); for a prompt or a resource it stays -32602.
* A ``set`` or ``frozenset`` is published with ``uniqueItems: true``, and an
  array that repeats an item is refused like any other bad argument (pydantic
  alone would drop the repeats without a word).
* A type with no JSON form (a plain class, a callable) is refused at registration
  with a one-line ``UnsupportedType`` naming the parameter and what to use
  instead; ``backchannel run`` prints just that line.
* Return types decide ``outputSchema``: see ``output_shape.py``.
* Prompt arguments and resource template variables arrive as strings, so for
  ``what="prompt"``/``"resource"`` a failing string argument is retried after
  decoding it as JSON (``"[1, 2]"`` → ``list[int]``); lax mode already does
  ``"3"`` → ``3``.
"""

from __future__ import annotations

__all__ = [
    "InvalidArguments",
    "OutputMismatch",
    "OutputShape",
    "ParameterSet",
    "SignatureError",
    "UnsupportedType",
    "derive_arguments_for_prompt",
    "derive_output",
    "derive_parameters",
    "type_hints",
]

import contextlib
import copy
import dataclasses
import functools
import inspect
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec

from backchannel.types.errors import InvalidParams
from backchannel.types.meta import ARGUMENT_SCHEMA

from .annotations import (
    annotated,
    field_info_class,
    is_context,
    name_of,
    non_json_defaults_ignored,
    schema_generator,
    split_annotation,
    type_hints,
)
from .argument_problems import MAX_PROBLEMS, Problem, is_refusal, path_text, problems_of, repeated_items
from .docstrings import docstring_args
from .output_shape import OutputMismatch, OutputShape, derive_output  # the result side, re-exported
from .plain_parameters import MISSING, PlainField, argument_model, plain_arguments, plain_field, plain_schema, same
from .unsupported_types import SignatureError, UnsupportedType, unsupported_parameter, unsupported_type, where_defined

if TYPE_CHECKING:
    from pydantic import BaseModel, TypeAdapter, ValidationError

_TEXT_KEYS = frozenset({"type", "title", "description", "default"})  # a property that says "any text"


class InvalidArguments(InvalidParams):
    """Arguments that do not fit the parameters, each problem named in the message.

    A subclass of ``InvalidParams`` so that prompts and resources answer -32602 as
    before; a tool call catches it and answers with ``isError: true`` instead,
    because the spec counts input validation among tool execution errors.
    """


@dataclass(frozen=True, slots=True)
class ParameterSet:
    """The argument side of a tool or prompt, derived once at registration."""

    input_schema: dict[str, Any]
    context_parameter: str | None
    _model: Callable[[], type[BaseModel]] = field(repr=False, compare=False)  # built on first need
    _fields: tuple[tuple[str, str], ...] = field(repr=False, compare=False)  # (model field, parameter)
    _label: str = field(repr=False, compare=False, default="tool")
    _json_strings: bool = field(repr=False, compare=False, default=False)
    # Unknown arguments: refused (a tool), ignored (a prompt or resource), or taken by **kwargs.
    _strict: bool = field(repr=False, compare=False, default=False)
    _rest: str | None = field(repr=False, compare=False, default=None)  # the **kwargs parameter
    _rest_adapter: TypeAdapter[dict[str, Any]] | None = field(repr=False, compare=False, default=None)
    _reserved: frozenset[str] = field(repr=False, compare=False, default=frozenset())  # context, skipped
    _unique: bool = field(repr=False, compare=False, default=False)  # the schema says uniqueItems somewhere
    _plain: tuple[PlainField, ...] | None = field(repr=False, compare=False, default=None)  # no pydantic needed

    def validate(self, arguments: dict[str, Any] | None) -> dict[str, Any]:
        """Check ``arguments`` and return the keyword arguments for the call.

        Values come back converted to the declared types (a dataclass parameter
        gets an instance), and omitted optional parameters get their defaults,
        so the function sees exactly what its signature asks for. Arguments that
        are not an object raise ``InvalidParams``; arguments that do not fit
        raise ``InvalidArguments`` naming every problem.
        """
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise InvalidParams(
                f"Invalid arguments for {self._label}: expected an object, got {type(arguments).__name__}"
            )
        if self._plain is not None and (kwargs := plain_arguments(self._plain, arguments, self._strict)) is not None:
            return kwargs
        try:
            instance = self._model().model_validate(arguments)
        except Exception as exc:
            if not is_refusal(exc):
                raise
            retried = self._json_retry(arguments, exc) if self._json_strings else None
            if retried is None:
                raise self._refusal(problems_of(exc) + self._repeats(arguments) + self._unknown(arguments)[1]) from None
            instance, arguments = retried
        # pydantic turns [1, 1] into {1} without a word; the schema we published says uniqueItems.
        if repeats := self._repeats(arguments):
            raise self._refusal(repeats)
        kwargs = {parameter: getattr(instance, name) for name, parameter in self._fields}
        # Every argument that names a parameter sets one field, so a count that differs means an
        # unknown argument: the one test on the success path, as cheap as pydantic's own check.
        if self._strict and len(arguments) != len(instance.__pydantic_fields_set__):
            extras, problems = self._unknown(arguments)
            if problems:
                raise self._refusal(problems)
            kwargs |= extras
        return kwargs

    def prompt_arguments(self) -> list[dict[str, Any]]:
        """The ``arguments`` list of an MCP ``Prompt``: name, description?, required."""
        required = set(self.input_schema.get("required", ()))
        return [
            {"name": name}
            | ({"description": schema["description"]} if "description" in schema else {})
            | {"required": name in required}
            for name, schema in self.input_schema["properties"].items()
        ]

    def with_argument_schema(self, meta: dict[str, Any] | None) -> dict[str, Any] | None:
        """A prompt's or template's ``_meta``: ``meta`` plus ``ARGUMENT_SCHEMA`` when an argument is not text.

        The wire says nothing of an argument's type; with this, a client that knows the key asks
        for an ``int`` as a number (``meta`` from the author wins over it).
        """
        properties = self.input_schema["properties"].values()
        if all(isinstance(p, dict) and p.get("type") == "string" and set(p) <= _TEXT_KEYS for p in properties):
            return meta
        return {ARGUMENT_SCHEMA: self.input_schema, **(meta or {})}

    def _unknown(self, arguments: dict[str, Any]) -> tuple[dict[str, Any], list[Problem]]:
        """The arguments that name no parameter, for ``**kwargs``, and the problems with them."""
        if not self._strict:
            return {}, []
        names = self.input_schema["properties"]
        extras = {key: value for key, value in arguments.items() if key not in names}
        if self._rest is None:
            return {}, self._unexpected(extras)
        # A name the function takes otherwise (its context) cannot also arrive through **kwargs.
        problems = self._unexpected(key for key in extras if key in self._reserved)
        if self._rest_adapter is not None:
            try:
                extras = self._rest_adapter.validate_python(extras)
            except Exception as exc:
                if not is_refusal(exc):
                    raise
                problems += problems_of(exc)
        return extras, problems

    @staticmethod
    def _unexpected(names: Iterable[str]) -> list[Problem]:
        return [((name,), "unexpected argument", "unexpected_argument") for name in names]

    def _refusal(self, problems: list[Problem]) -> InvalidArguments:
        # Bounded: a call with thousands of bad keys gets an answer of a readable size.
        shown = problems[:MAX_PROBLEMS]
        text = "; ".join(f"{path_text(path)}: {message}" if path else message for path, message, _ in shown)
        if len(problems) > len(shown):
            text += f"; and {len(problems) - len(shown)} more"
        details = [{"path": list(path), "message": message, "type": kind} for path, message, kind in shown]
        return InvalidArguments(f"Invalid arguments for {self._label}: {text}", data={"errors": details})

    def _repeats(self, arguments: dict[str, Any]) -> list[Problem]:
        return repeated_items(self.input_schema, arguments) if self._unique else []

    def _json_retry(self, arguments: dict[str, Any], exc: ValidationError) -> tuple[BaseModel, dict[str, Any]] | None:
        # Only string values of failing top-level arguments are decoded, so a
        # ``str`` parameter never sees its text turned into a number.
        import json  # (for refused arguments only: not loaded at start)

        patched = dict(arguments)
        for key in {error["loc"][0] for error in exc.errors() if error["loc"]}:
            if isinstance(value := arguments.get(str(key)), str):
                with contextlib.suppress(ValueError):
                    patched[str(key)] = json.loads(value)
        try:
            return None if patched == arguments else (self._model().model_validate(patched), patched)
        except Exception as retry_exc:
            if not is_refusal(retry_exc):
                raise
            return None


# What a function's signature derives to, per (context type, skipped names, kind), while the function
# lives: a handler registered under many names (the tools generated from an API description share
# one) costs a pydantic model and a schema once, not per name (``docs/performance.md``).
_derived: weakref.WeakKeyDictionary[Callable[..., Any], dict[tuple[Any, ...], ParameterSet]] = (
    weakref.WeakKeyDictionary()
)


def derive_parameters(
    fn: Callable[..., Any],
    *,
    context_type: type | None = None,
    skip_names: frozenset[str] = frozenset(),
    what: str = "tool",
    name: str | None = None,
) -> ParameterSet:
    """Build the input schema and validator for ``fn``.

    ``what="prompt"`` or ``"resource"`` also turns on JSON decoding of string
    arguments (see the module docstring). Raises ``TypeError`` for signatures MCP cannot call.
    The same function derived again shares the validator; each result has its own schema dict.
    """
    label = f"{what} {(name or name_of(fn))!r}"
    key = (context_type, skip_names, what)
    try:
        known = _derived.get(fn, {}).get(key)
    except TypeError:  # a callable that cannot be weakly referenced or hashed: derived every time
        known = None
    if known is not None:
        return dataclasses.replace(known, input_schema=copy.deepcopy(known.input_schema), _label=label)
    derived = _derive_parameters(fn, context_type, skip_names, what, name, label)
    with contextlib.suppress(TypeError):
        kept = dataclasses.replace(derived, input_schema=copy.deepcopy(derived.input_schema))
        _derived.setdefault(fn, {})[key] = kept
    return derived


def _derive_parameters(
    fn: Callable[..., Any],
    context_type: type | None,
    skip_names: frozenset[str],
    what: str,
    name: str | None,
    label: str,
) -> ParameterSet:
    where = where_defined(what, name, fn)
    hints = type_hints(fn, where)
    documented = docstring_args(inspect.getdoc(fn))
    definitions: dict[str, tuple[Any, dict[str, Any]]] = {}  # field name: (annotation, Field options)
    mapping: list[tuple[str, str]] = []
    plain: list[PlainField | None] = []
    context_parameter: str | None = None
    rest: str | None = None
    for index, param in enumerate(inspect.signature(fn).parameters.values()):
        if param.kind is param.VAR_KEYWORD and what == "tool" and param.name not in skip_names:
            rest = param.name
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            stars = "*" if param.kind is param.VAR_POSITIONAL else "**"
            raise SignatureError(
                f"{where}: parameter {stars}{param.name} is not supported; MCP arguments are a JSON object "
                "of named values, so declare each argument as its own parameter"
            )
        if param.name in skip_names:
            continue
        annotation = hints.get(param.name, Any)
        if context_type is not None and is_context(annotation, context_type):
            if context_parameter is not None:
                raise SignatureError(f"{where}: both {context_parameter!r} and {param.name!r} take the context")
            context_parameter = param.name
            continue
        if param.kind is param.POSITIONAL_ONLY:
            raise SignatureError(f"{where}: parameter {param.name!r} is positional-only; arguments are by name")
        annotation, description, described = split_annotation(annotation)
        options: dict[str, Any] = {"alias": param.name}
        if param.default is not param.empty:
            if (info := field_info_class()) is not None and isinstance(param.default, info):
                # ``x: int = Field(3, ...)``: let pydantic merge it like an Annotated Field.
                described = described or getattr(param.default, "description", None) is not None
                annotation = annotated(annotation, (param.default,))
            else:
                options["default"] = param.default
        description = description or (None if described else documented.get(param.name))
        if description:
            options["description"] = description
        # Synthetic field names keep parameter names such as ``_x``, ``json`` or
        # ``model_config`` from colliding with pydantic; the alias is what shows.
        definitions[f"p{index}"] = (annotation, options)
        mapping.append((f"p{index}", param.name))
        plain.append(plain_field(param.name, annotation, options.get("default", MISSING), options.get("description")))

    plain_fields = tuple(item for item in plain if item is not None) if None not in plain else None
    if plain_fields is not None and rest is None:
        make_model: Callable[[], type[BaseModel]] = functools.cache(
            functools.partial(argument_model, name_of(fn), definitions)
        )
        raw = plain_schema(plain_fields)
    else:
        plain_fields = None
        from pydantic.errors import PydanticUserError

        try:
            model = argument_model(name_of(fn), definitions)
            with non_json_defaults_ignored():
                raw = model.model_json_schema(schema_generator=schema_generator())
        except PydanticUserError as exc:  # PydanticSchemaGenerationError, PydanticInvalidForJsonSchema among them
            named = [(parameter, definitions[field_name][0]) for field_name, parameter in mapping]
            raise unsupported_parameter(where, named, exc) from None
        make_model = functools.partial(same, model)
    schema: dict[str, Any] = {"type": "object", "properties": raw.get("properties", {})}
    schema |= {key: raw[key] for key in ("required", "$defs") if raw.get(key)}
    strict = what == "tool"
    rest_adapter: TypeAdapter[dict[str, Any]] | None = None
    if rest is not None:
        rest_adapter, schema["additionalProperties"] = _rest_schema(hints.get(rest, Any), schema, where, rest)
    elif strict:
        schema["additionalProperties"] = False
    if "$defs" in schema:
        schema["$defs"] = schema.pop("$defs")  # last, after what a reader looks for first
    reserved = frozenset(skip_names) | ({context_parameter} if context_parameter else set())
    return ParameterSet(
        schema,
        context_parameter,
        make_model,
        tuple(mapping),
        label,
        what in ("prompt", "resource"),
        _strict=strict,
        _rest=rest,
        _rest_adapter=rest_adapter,
        _reserved=reserved,
        _unique=b"uniqueItems" in msgspec.json.encode(schema, enc_hook=str),  # (json is not loaded at start)
        _plain=plain_fields,
    )


def _rest_schema(
    annotation: Any, schema: dict[str, Any], where: str, rest: str
) -> tuple[TypeAdapter[dict[str, Any]] | None, Any]:
    """The validator of ``**rest``'s values (None: any value) and its ``additionalProperties``."""
    annotation, _, _ = split_annotation(annotation)
    if annotation is Any or annotation is object:
        return None, True
    from pydantic import TypeAdapter
    from pydantic.errors import PydanticUserError

    try:
        adapter: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, annotation])
        with non_json_defaults_ignored():
            value = adapter.json_schema(schema_generator=schema_generator())
    except PydanticUserError as exc:
        raise unsupported_type(where, f"the values of **{rest}", annotation, rest, exc) from None
    # Types the parameters also use come out under the same $defs names, with the same schema.
    definitions = {**value.pop("$defs", {}), **schema.get("$defs", {})}
    if definitions:
        schema["$defs"] = definitions
    return adapter, value.get("additionalProperties", True)


def derive_arguments_for_prompt(
    fn: Callable[..., Any],
    *,
    context_type: type | None = None,
    skip_names: frozenset[str] = frozenset(),
    name: str | None = None,
) -> list[dict[str, Any]]:
    """The MCP ``PromptArgument`` list for a prompt function.

    Validate calls with ``derive_parameters(fn, what="prompt")``, which derives
    the same arguments and converts their string values to the declared types.
    """
    options: dict[str, Any] = {"context_type": context_type, "skip_names": skip_names, "name": name}
    return derive_parameters(fn, what="prompt", **options).prompt_arguments()
