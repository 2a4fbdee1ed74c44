"""``delegate``: a facade's method that forwards to the same method of one of its parts.

``Server.add_tool`` is ``Registry.add_tool``: writing the signature twice would let the two
drift apart. ``delegate`` keeps one: type checkers see the part's parameters and return type,
and ``help()``/IDEs its signature and docstring (through ``functools.wraps``).
"""

from __future__ import annotations

__all__ = ["delegate"]

import functools
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
