"""A package's public names, each loaded at its first use (PEP 562): ``lazy_names``.

A package's ``__init__`` says where each of its names lives and takes its module ``__getattr__``
from here; the ``TYPE_CHECKING`` imports beside the table are what type checkers and readers see::

    __getattr__ = lazy_names(__name__, {"Client": "client", "Session": ("session", "TerminalSession")})

The first ``package.Client`` (or ``from package import Client``) imports ``package.client`` and
keeps the value in the package, so every later use is a plain attribute.
"""

from __future__ import annotations

__all__ = ["lazy_names"]

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(package: str, where: Mapping[str, str | tuple[str, str]]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package`` (call it from the package's ``__init__``).

    ``where`` maps each name to its submodule, relative to ``package`` (``"client"``,
    ``"server.server"``), or to a pair, the submodule and the name there (a name kept under
    another). Any other name raises ``AttributeError``, as a module without ``__getattr__`` does.
    """
    namespace = vars(sys.modules[package])

    def __getattr__(name: str) -> Any:
        found = where.get(name)
        if found is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attribute = (found, name) if isinstance(found, str) else found
        value = getattr(importlib.import_module(f".{module}", package), attribute)
        namespace[name] = value
        return value

    return __getattr__
