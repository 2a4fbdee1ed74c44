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
    if not capabilities or (type(capabilities) is not dict and not isinstance(capabilities, Mapping)):
        return False
    # Asked three times per question put to the client (the tool, the context, the send), so
    # the usual two-part path is walked without splitting it and without a call per level.
    head, dot, rest = path.partition(".")
    node: Any = capabilities.get(head)
    if dot:
        if type(node) is not dict and not isinstance(node, Mapping):
            return False
        parent = node
        if "." in rest:
            for part in rest.split("."):
                if not _is_mapping(node):
                    return False
                node = node.get(part)
        else:
            node = node.get(rest)
        if node is None and rest == "form" and head == "elicitation":
            return "form" not in parent and "url" not in parent
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
