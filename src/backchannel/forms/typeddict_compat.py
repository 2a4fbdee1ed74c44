"""Let ``typing.TypedDict`` work on Python 3.11.

pydantic refuses ``typing.TypedDict`` before Python 3.12 (it cannot see
``Required``/``NotRequired`` there) and asks for ``typing_extensions.TypedDict``.
Users should not have to know that: we rebuild each such class, once, as an
equivalent ``typing_extensions.TypedDict`` with the same keys, requiredness
and docstring, wherever it appears inside an annotation.
"""

from __future__ import annotations

__all__ = ["modernize"]

import sys
import types
import typing
from typing import Annotated, Any, cast, get_args, get_origin

import typing_extensions

_NEEDED = sys.version_info < (3, 12)
_cache: dict[type, Any] = {}
_REQUIREDNESS = (
    typing.Required,
    typing.NotRequired,
    typing_extensions.Required,
    typing_extensions.NotRequired,
)


def _is_old_typeddict(annotation: Any) -> bool:
    return (
        isinstance(annotation, type)
        and type(annotation).__module__ == "typing"
        and hasattr(annotation, "__required_keys__")
    )


def _rebuild(cls: type) -> Any:
    if cls in _cache:
        return _cache[cls]
    hints = typing.get_type_hints(cls, include_extras=True)
    required: frozenset[str] = cls.__required_keys__  # type: ignore[attr-defined]
    fields: dict[str, Any] = {}
    for key, hint in hints.items():
        origin = get_origin(hint)
        # An explicit marker wins: 3.11 misses it in string annotations when filling __required_keys__.
        if origin in _REQUIREDNESS:
            hint = get_args(hint)[0]
            is_required = origin in (typing.Required, typing_extensions.Required)
        else:
            is_required = key in required
        wrapper = typing_extensions.Required if is_required else typing_extensions.NotRequired
        fields[key] = wrapper[modernize(hint)]
    make: Any = typing_extensions.TypedDict  # the functional form, with a computed name
    rebuilt = make(cls.__name__, fields)
    rebuilt.__doc__ = cls.__doc__
    rebuilt.__module__ = cls.__module__
    _cache[cls] = rebuilt
    return rebuilt


def modernize(annotation: Any) -> Any:
    """``annotation`` with every ``typing.TypedDict`` replaced by a pydantic-friendly twin."""
    if not _NEEDED:
        return annotation
    if _is_old_typeddict(annotation):
        return _rebuild(annotation)
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is None or not args:
        return annotation
    if origin is Annotated:
        return cast(Any, Annotated)[(modernize(args[0]), *annotation.__metadata__)]
    new_args = tuple(modernize(arg) for arg in args)
    if new_args == args:
        return annotation
    if origin is typing.Union or origin is types.UnionType:
        return typing.Union[new_args]  # noqa: UP007 - a runtime-built union
    if origin in _REQUIREDNESS:
        return origin[new_args[0]]
    try:
        return annotation.copy_with(new_args)
    except AttributeError:
        return origin[new_args]
