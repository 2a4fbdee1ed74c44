"""Capabilities are plain data; these checks are pure functions over it.

A capability path names a key and its sub-keys with dots: ``"elicitation.url"``,
``"sampling.tools"``, ``"roots.listChanged"``. A declared object counts as
present whatever it holds, except that flags like ``listChanged`` must be true.
"""

from __future__ import annotations

__all__ = ["has", "require"]

from collections.abc import Mapping
from typing import Any, TypeGuard

from ..types.errors import MissingCapability


def has(capabilities: Mapping[str, Any] | None, path: str) -> bool:
    """Whether ``capabilities`` declare ``path``.

    ``elicitation: {}`` declares form mode: the spec reads an empty elicitation
    object as form-only, for clients older than the ``form``/``url`` split.
    """
    if not capabilities:
        return False
    if path == "elicitation.form":
        elicitation = capabilities.get("elicitation")
        if _is_mapping(elicitation) and "form" not in elicitation and "url" not in elicitation:
            return True
    node: Any = capabilities
    for part in path.split("."):
        if not _is_mapping(node) or part not in node:
            return False
        node = node[part]
    if type(node) is bool:
        return node
    return node is not None


def _is_mapping(node: object) -> TypeGuard[Mapping[str, Any]]:
    # Checked per request that needs a capability: decoded JSON is a dict, and the ABC check
    # (a Python-level __instancecheck__) runs only for another Mapping.
    return type(node) is dict or isinstance(node, Mapping)


def require(capabilities: Mapping[str, Any] | None, path: str) -> None:
    """Raise ``MissingCapability`` (-32021) unless ``path`` was declared."""
    if not has(capabilities, path):
        raise MissingCapability(path)
