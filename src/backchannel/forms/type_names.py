"""A type annotation written the way its author wrote it: ``list[Address]``, ``int | None``.

Error messages about types (a form field that cannot be, a tool parameter MCP cannot carry)
name the type in these words rather than as ``<class 'module.Address'>``. Pure ``typing``:
importing it costs nothing, so the server's registration errors can use it too.
"""

from __future__ import annotations

__all__ = ["type_name"]

import types
import typing
from typing import Annotated, Any, Literal, get_args, get_origin


def type_name(annotation: Any) -> str:
    """``list[Address]``, ``int | str``, ``Literal['a']``, ``Callable[[int], str]``."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return type_name(args[0])
    if origin is Literal:
        return f"Literal[{', '.join(map(repr, args))}]"
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_name(arg) for arg in args)
    if origin is not None and args:
        return f"{type_name(origin)}[{', '.join(type_name(arg) for arg in args)}]"
    if isinstance(annotation, list):  # the parameters of Callable[[int], str]
        return f"[{', '.join(type_name(arg) for arg in annotation)}]"
    if annotation is Ellipsis:
        return "..."
    if annotation is type(None):
        return "None"
    return str(getattr(annotation, "__name__", None) or repr(annotation).replace("typing.", ""))
