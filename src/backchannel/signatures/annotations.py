"""What a signature's annotations say, read once at registration: the helpers of ``signature.py``.

``Annotated`` metadata, ``Context`` parameters, awaitable returns, a callable's name, and the
wording of a schema that cannot be generated. Nothing here builds a model; ``signature.py`` does.
"""

from __future__ import annotations

__all__ = [
    "annotated",
    "blame",
    "field_info_class",
    "first_line",
    "inline_root_ref",
    "is_context",
    "mentions",
    "name_of",
    "non_json_defaults_ignored",
    "qualname",
    "schema_generator",
    "split_annotation",
    "strip_annotated",
    "type_hints",
    "undescribable",
    "unpartial",
    "unwrap_awaitable",
]

import collections.abc
import contextlib
import functools
import inspect
import sys
import types
import typing
import warnings
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Annotated, Any, cast, get_args, get_origin

from ..forms.typeddict_compat import modernize

if TYPE_CHECKING:
    from pydantic.json_schema import GenerateJsonSchema

# pydantic is imported when a signature needs it (``plain_parameters.py`` covers str/int/float/bool
# without it): a server of plain tools starts without its imports and models (docs/performance.md).


@functools.cache
def schema_generator() -> type[GenerateJsonSchema]:
    """The JSON Schema generator every derivation uses (a class, made on first use)."""
    from pydantic.json_schema import GenerateJsonSchema

    class SchemaGenerator(GenerateJsonSchema):
        # Per-field titles ("A", "User Id") repeat the property name and cost tokens
        # in every tools/list; class titles (in $defs) stay because they name types.
        def field_title_should_be_set(self, schema: Any) -> bool:
            return False

    return SchemaGenerator


def field_info_class() -> type | None:
    """pydantic's ``FieldInfo``, or None while pydantic is not loaded (then nothing can be one)."""
    fields = sys.modules.get("pydantic.fields")
    return getattr(fields, "FieldInfo", None)


@contextlib.contextmanager
def non_json_defaults_ignored() -> Iterator[None]:
    """Generate a schema inside this: a default that is not JSON (a sentinel object) is left out, silently."""
    from pydantic.json_schema import PydanticJsonSchemaWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PydanticJsonSchemaWarning)
        yield


def undescribable(where: str, whose: str, exc: Exception) -> TypeError:
    """The registration error for a type pydantic cannot describe: raise it ``from exc``."""
    return TypeError(f"{where}: {whose}cannot be described as JSON Schema: {first_line(exc)}")


def unpartial(fn: Any) -> Any:
    while isinstance(fn, functools.partial):
        fn = fn.func
    return fn


def name_of(fn: Callable[..., Any]) -> str:
    return str(getattr(unpartial(fn), "__name__", type(unpartial(fn)).__name__))


def qualname(fn: Callable[..., Any]) -> str:
    fn = unpartial(fn)
    return f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', type(fn).__qualname__)}"


def type_hints(fn: Callable[..., Any], where: str) -> dict[str, Any]:
    target = unpartial(fn)
    if not (inspect.isfunction(target) or inspect.ismethod(target)) and callable(target):
        target = type(target).__call__  # a callable object: its __call__ has the hints
    try:
        hints = typing.get_type_hints(target, include_extras=True)
    except Exception as exc:  # NameError for forward references that do not resolve, and others
        raise TypeError(f"{where}: cannot resolve type hints: {exc}") from exc
    return {name: modernize(hint) for name, hint in hints.items()}


def strip_annotated(annotation: Any) -> Any:
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return annotation


def annotated(base: Any, metadata: tuple[Any, ...]) -> Any:
    return cast(Any, Annotated)[(base, *metadata)] if metadata else base


def split_annotation(annotation: Any) -> tuple[Any, str | None, bool]:
    """(annotation without plain-string metadata, that string, has a Field description)."""
    if get_origin(annotation) is not Annotated:
        return annotation, None, False
    base, *metadata = get_args(annotation)
    texts = [item for item in metadata if isinstance(item, str)]
    kept = tuple(item for item in metadata if not isinstance(item, str))
    field_info = field_info_class()
    described = field_info is not None and any(
        isinstance(item, field_info) and getattr(item, "description", None) is not None for item in kept
    )
    return annotated(base, kept), (texts[0] if texts else None), described


def is_context(annotation: Any, context_type: type) -> bool:
    annotation = strip_annotated(annotation)
    union = get_origin(annotation) in (typing.Union, types.UnionType)
    for member in get_args(annotation) if union else (annotation,):
        origin = get_origin(member) or member
        if isinstance(origin, type) and issubclass(origin, context_type):
            return True
    return False


def mentions(annotation: Any, classes: tuple[type, ...]) -> bool:
    if not classes:
        return False
    annotation = strip_annotated(annotation)
    origin = get_origin(annotation) or annotation
    if isinstance(origin, type) and issubclass(origin, classes):
        return True
    return any(mentions(arg, classes) for arg in get_args(annotation))


def unwrap_awaitable(annotation: Any) -> Any:
    # ``async def`` hints already name the awaited type; this covers ``-> Awaitable[X]``.
    while get_origin(strip_annotated(annotation)) in (collections.abc.Awaitable, collections.abc.Coroutine):
        annotation = get_args(strip_annotated(annotation))[-1]
    return annotation


def inline_root_ref(schema: dict[str, Any]) -> dict[str, Any]:
    # Recursive types come out as {"$ref": ..., "$defs": ...}; MCP wants the
    # object itself at the top, and the refs inside still resolve via $defs.
    ref = schema.get("$ref")
    definitions = schema.get("$defs") or {}
    if isinstance(ref, str) and ref.startswith("#/$defs/") and set(schema) <= {"$ref", "$defs"}:
        target = definitions.get(ref.removeprefix("#/$defs/"))
        if isinstance(target, dict):
            return {**target, "$defs": definitions}
    return schema


def blame(definitions: dict[str, Any], mapping: list[tuple[str, str]]) -> str:
    from pydantic import TypeAdapter
    from pydantic.errors import PydanticSchemaGenerationError, PydanticUserError

    for field_name, parameter in mapping:
        try:
            TypeAdapter(definitions[field_name][0]).json_schema()
        except (PydanticSchemaGenerationError, PydanticUserError):
            return f"the type of parameter {parameter!r} "
    return "the signature "


def first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
