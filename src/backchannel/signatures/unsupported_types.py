"""The one-line error for a signature MCP cannot use: which function, which parameter, which type, and
what to write instead.

pydantic's own error for a type it cannot describe comes under some forty lines of its
internals and ends in advice for pydantic users (``arbitrary_types_allowed``) that a tool's
author cannot act on: arguments arrive as JSON, so a type without a JSON form cannot be one.
``signature.py`` raises these errors ``from None`` instead, and ``backchannel run`` prints
their message alone::

    TypeError
    └── SignatureError        a function MCP cannot call or describe (fix the function)
        └── UnsupportedType   ... because one of its types has no JSON Schema
"""

from __future__ import annotations

__all__ = ["SignatureError", "UnsupportedType", "unsupported_parameter", "unsupported_type", "where_defined"]

import collections.abc
import dataclasses
import inspect
import os
import typing
from collections.abc import Callable, Iterator
from typing import Any, get_args, get_origin

import typing_extensions

from ..forms.type_names import type_name
from .annotations import (
    first_line,
    name_of,
    non_json_defaults_ignored,
    qualname,
    schema_generator,
    strip_annotated,
    unpartial,
)

_JSON_TYPES = "str, int, float, bool, None, list[...], dict[str, ...], Literal, Enum, datetime"
_STREAMS = (
    collections.abc.Iterator,
    collections.abc.Iterable,
    collections.abc.Generator,
    collections.abc.AsyncIterator,
    collections.abc.AsyncIterable,
    collections.abc.AsyncGenerator,
)


class SignatureError(TypeError):
    """A tool, prompt or resource function that MCP cannot call or describe, found when it is registered.

    The message names the function (and where it is defined), the parameter and what to
    change; nothing a client sends can work around it.
    """


class UnsupportedType(SignatureError):
    """A parameter type with no JSON Schema (a plain class, a callable, an iterator...).

    ``parameter`` is the parameter's name (of ``**kwargs`` for the type of its values),
    ``annotation`` its whole type and ``culprit`` the part of it that has no JSON form
    (``Thing`` in ``list[Thing]``).
    """

    def __init__(self, message: str, *, parameter: str | None, annotation: Any, culprit: Any) -> None:
        super().__init__(message)
        self.parameter = parameter
        self.annotation = annotation
        self.culprit = culprit


def where_defined(what: str, name: str | None, fn: Callable[..., Any]) -> str:
    """``tool 'frob' (server.py:12)``: the words a registration error starts with.

    The line is the function's first (its decorator's, if it has one), read from the code
    object: no file is opened while a server registers its tools.
    """
    target = unpartial(fn)
    if not (inspect.isfunction(target) or inspect.ismethod(target)) and callable(target):
        target = type(target).__call__  # a callable object: its __call__ has the parameters
    label = f"{what} {(name or name_of(fn))!r}"
    code = getattr(target, "__code__", None)
    if code is None:  # a builtin or an extension function
        return f"{label} ({qualname(fn)})"
    return f"{label} ({os.path.basename(code.co_filename)}:{code.co_firstlineno})"


def unsupported_parameter(where: str, parameters: list[tuple[str, Any]], exc: Exception) -> SignatureError:
    """The error for a parameter list pydantic could not describe: raise it ``from None``.

    ``parameters`` are ``(name, annotation)`` pairs; the first whose type fails on its own is blamed.
    """
    for name, annotation in parameters:
        if _fails(annotation):
            return unsupported_type(where, f"parameter {name!r}", annotation, name, exc)
    return SignatureError(f"{where}: the signature cannot be described as JSON Schema: {first_line(exc)}")


def unsupported_type(where: str, whose: str, annotation: Any, parameter: str | None, exc: Exception) -> SignatureError:
    """``whose`` is ``parameter 'x'`` or ``the values of **rest``; ``exc`` is pydantic's error."""
    field, culprit = _culprit(annotation, frozenset()) or ("", strip_annotated(annotation))
    shown = type_name(annotation)
    if not _fails(culprit):  # the type is fine, what is annotated on it is not (a Field option): pydantic says what
        return SignatureError(f"{where}: {whose} ({shown}): {first_line(exc)}")
    if culprit is strip_annotated(annotation):
        what = f"{whose} has type {shown}, which"
    elif field:
        what = f"{whose} has type {shown}, and {field} ({type_name(culprit)})"
    else:
        what = f"{whose} has type {shown}, and {type_name(culprit)}"
    message = f"{where}: {what} has no JSON form, so MCP cannot carry it; {_instead(culprit)}"
    return UnsupportedType(message, parameter=parameter, annotation=annotation, culprit=culprit)


def _instead(culprit: Any) -> str:
    origin = get_origin(culprit) or culprit
    if isinstance(origin, type) and _callable(origin) and not _has_fields(origin):
        return "take the name of what to run (a str, or a Literal of the choices) and look it up"
    if origin in _STREAMS:
        return "use list[...] instead (a JSON array)"
    if isinstance(culprit, type):
        return (
            f"make {type_name(culprit)} a dataclass, TypedDict or pydantic model whose fields are JSON types "
            f"({_JSON_TYPES}), or take the values it holds as separate parameters"
        )
    return f"use JSON types instead ({_JSON_TYPES}), or a dataclass, TypedDict or pydantic model made of them"


def _callable(cls: type) -> bool:
    return issubclass(cls, collections.abc.Callable)  # type: ignore[arg-type]  # an ABC, despite typeshed


def _has_fields(cls: type) -> bool:
    from pydantic import BaseModel  # an error path: pydantic has described the types already

    return issubclass(cls, BaseModel) or dataclasses.is_dataclass(cls) or typing_extensions.is_typeddict(cls)


def _fails(annotation: Any) -> bool:
    from pydantic import TypeAdapter

    try:
        with non_json_defaults_ignored():
            TypeAdapter(annotation).json_schema(schema_generator=schema_generator())
    except Exception:  # a PydanticUserError, or whatever else a strange type does under inspection
        return True
    return False


def _culprit(annotation: Any, seen: frozenset[int]) -> tuple[str, Any] | None:
    """(``Owner.field`` or "", the innermost part of ``annotation`` that fails), for an annotation that fails.

    None when it only fails through a type being looked into already (a recursive dataclass):
    the fault is elsewhere in that type, and the caller goes on to its other parts.
    """
    bare = strip_annotated(annotation)
    looped = False
    for field, child in _children(bare):
        if id(child) in seen:
            looped = True
        elif _fails(child) and (found := _culprit(child, seen | {id(bare)})) is not None:
            return found[0] or field, found[1]
    return None if looped else ("", bare)


def _children(annotation: Any) -> Iterator[tuple[str, Any]]:
    """The types ``annotation`` is made of: a generic's arguments, a class's fields (named ``Owner.field``)."""
    if get_origin(annotation) is not None:
        for arg in get_args(annotation):
            if arg is not Ellipsis and not isinstance(arg, list | str | int | bytes | bool):
                yield "", arg
        return
    if not isinstance(annotation, type):
        return
    from pydantic import BaseModel

    hints: dict[str, Any] = {}
    try:
        if issubclass(annotation, BaseModel):
            hints = {name: info.annotation for name, info in annotation.model_fields.items()}
        elif dataclasses.is_dataclass(annotation) or typing_extensions.is_typeddict(annotation):
            hints = typing.get_type_hints(annotation, include_extras=True)
    except Exception:  # hints that do not resolve: the class itself is the culprit
        return
    for name, hint in hints.items():
        yield f"{annotation.__name__}.{name}", hint
