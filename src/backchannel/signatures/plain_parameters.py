"""Parameters of the plain JSON types (``str``, ``int``, ``float``, ``bool``), described and checked without pydantic.

Most tools take a few strings and numbers. For those, ``signature.py`` writes the schema pydantic
would write (``tests/startup/test_plain_parameters.py`` holds the two side by side) and accepts
arguments that already have the declared JSON type, so a server of such tools never imports
pydantic: about 60 ms of CPU at a cold start and 9 MiB of memory (``docs/performance.md``). Anything
else goes to the pydantic model, built on first need: a wrong or missing argument (for pydantic's
error and its wording), a value pydantic would convert (``"3"`` or ``true`` for an ``int``), an
unknown argument. So what a call gets, and every refusal, is what pydantic gives.
"""

from __future__ import annotations

__all__ = ["MISSING", "PlainField", "argument_model", "plain_arguments", "plain_field", "plain_schema", "same"]

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, get_args, get_origin

if TYPE_CHECKING:
    from pydantic import BaseModel

MISSING: Any = object()
"""The default of a required parameter."""

_JSON_TYPES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_DEFAULT_TYPES = (str, int, float, bool, type(None))
_EXACT_FLOAT = 2**53  # an int a float holds exactly: pydantic's float(value) and ours agree


@dataclass(frozen=True, slots=True)
class PlainField:
    parameter: str
    kind: type
    default: Any  # MISSING: required
    description: str | None

    def schema(self) -> dict[str, Any]:
        # The keys in pydantic's (sorted) order; no title (``annotations.schema_generator``).
        schema: dict[str, Any] = {} if self.default is MISSING else {"default": self.default}
        if self.description:
            schema["description"] = self.description
        schema["type"] = _JSON_TYPES[self.kind]
        return schema


def plain_field(parameter: str, annotation: Any, default: Any, description: str | None) -> PlainField | None:
    """The parameter as a ``PlainField``, or None when pydantic must describe it.

    ``annotation`` has lost its plain-string metadata (``split_annotation``); other metadata is
    allowed only when it is ours and pydantic ignores it (``Complete``): a ``Field`` or an
    ``annotated_types`` bound changes the schema and the checks, so pydantic takes those.
    """
    if get_origin(annotation) is Annotated:
        annotation, *metadata = get_args(annotation)
        if not all(_inert(item) for item in metadata):
            return None
    if not isinstance(annotation, type) or annotation not in _JSON_TYPES:
        return None
    if default is not MISSING and (
        type(default) not in _DEFAULT_TYPES or (type(default) is float and not math.isfinite(default))
    ):
        return None  # a default that is not JSON (pydantic leaves it out of the schema), or inf/nan
    return PlainField(parameter, annotation, default, description)


def _inert(item: Any) -> bool:
    hooks = ("__get_pydantic_core_schema__", "__get_pydantic_json_schema__", "__get_pydantic_json_schema_extra__")
    return type(item).__module__.startswith("backchannel.") and not any(hasattr(item, hook) for hook in hooks)


def plain_schema(fields: tuple[PlainField, ...]) -> dict[str, Any]:
    """The ``properties`` and ``required`` of pydantic's model schema for these fields."""
    schema: dict[str, Any] = {"properties": {field.parameter: field.schema() for field in fields}}
    required = [field.parameter for field in fields if field.default is MISSING]
    if required:
        schema["required"] = required
    return schema


def plain_arguments(fields: tuple[PlainField, ...], arguments: dict[str, Any], strict: bool) -> dict[str, Any] | None:
    """The keyword arguments when every argument has its declared type as is; None: ask pydantic.

    ``strict``: an argument that names no parameter sends the call to pydantic (which refuses it).
    """
    kwargs: dict[str, Any] = {}
    given = 0
    for field in fields:
        value = arguments.get(field.parameter, MISSING)
        if value is MISSING:
            if field.default is MISSING:
                return None
            kwargs[field.parameter] = field.default
            continue
        given += 1
        if type(value) is not field.kind:
            # pydantic gives a float for an int; an int past 2**53 is left to it.
            if field.kind is float and type(value) is int and -_EXACT_FLOAT <= value <= _EXACT_FLOAT:
                value = float(value)
            else:
                return None
        kwargs[field.parameter] = value
    if strict and given != len(arguments):
        return None
    return kwargs


def argument_model(name: str, definitions: dict[str, tuple[Any, dict[str, Any]]]) -> type[BaseModel]:
    """The pydantic model of a signature: ``definitions`` maps field names to (annotation, ``Field`` options)."""
    from pydantic import ConfigDict, Field, create_model

    fields: dict[str, Any] = {key: (annotation, Field(**options)) for key, (annotation, options) in definitions.items()}
    config = ConfigDict(extra="ignore", arbitrary_types_allowed=False)
    return create_model(f"{name}_arguments", __config__=config, **fields)


def same(model: type[BaseModel]) -> type[BaseModel]:
    """``functools.partial(same, model)``: the model getter of a signature whose model exists already."""
    return model
