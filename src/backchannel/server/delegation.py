"""``delegate``: a facade's method that forwards to the same method of one of its parts.

``Server.add_tool`` is ``Registry.add_tool``: writing the signature twice would let the two
drift apart. ``delegate`` keeps one: type checkers see the part's parameters and return type,
and ``help()``/IDEs its signature and docstring (through ``functools.wraps``).

``deferred`` is a method that lives in a module imported at its first use, for a part of the
API most servers never touch (``ctx.elicit_url`` and the URL flows).
"""

from __future__ import annotations

__all__ = ["deferred", "delegate"]

import functools
import importlib
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def delegate(attribute: str, method: Callable[Concatenate[Any, P], R]) -> Callable[Concatenate[Any, P], R]:
    """A method for a class body that calls ``method`` on ``self.<attribute>``.

    Use it as ``add_tool = delegate("registry", Registry.add_tool)``; one extra call per use,
    so keep it off per-message paths."""
    name = method.__name__

    @functools.wraps(method)
    def forward(self: Any, /, *args: P.args, **kwargs: P.kwargs) -> R:
        bound: Callable[P, R] = getattr(getattr(self, attribute), name)
        return bound(*args, **kwargs)

    return forward


class deferred:  # (lower case: it is used like the function above, in a class body)
    """A method for a class body that is ``module.name`` (a function whose first parameter is the
    instance), imported when the attribute is first read; the class holds the function itself from
    then on, so later calls cost nothing extra. Pair it with the plain assignment under
    ``TYPE_CHECKING`` so that type checkers read the function's signature."""

    def __init__(self, module: str, name: str) -> None:
        self.module = module
        self.name = name

    def __set_name__(self, owner: type, attribute: str) -> None:
        self.owner = owner
        self.attribute = attribute

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        function = getattr(importlib.import_module(self.module), self.name)
        setattr(self.owner, self.attribute, function)
        return function if instance is None else function.__get__(instance, owner)
