"""backchannel: an MCP runtime where the reverse channel and the operation lifecycle are first-class.

The public names below load lazily, so ``import backchannel.protocol`` (the
sans-IO core) pulls in no event loop, and a stdio server never imports an HTTP
stack.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__
from ._wiring import wire_remote

_EXPORTS: dict[str, str] = {
    "Server": "backchannel.server.server",
    "Complete": "backchannel.completion.completers",
    "Elicited": "backchannel.server.elicitation",
    "Context": "backchannel.server.context",
    "Image": "backchannel.server.content",
    "Audio": "backchannel.server.content",
    "user": "backchannel.server.prompts",
    "assistant": "backchannel.server.prompts",
    "Client": "backchannel.client.client",
    "ToolError": "backchannel.types.errors",
    "MCPError": "backchannel.types.errors",
    "RequestError": "backchannel.types.errors",
    "RequestTimeout": "backchannel.types.errors",
    "ConnectionClosed": "backchannel.types.errors",
    "InvalidParams": "backchannel.types.errors",
    "ResourceNotFound": "backchannel.types.errors",
    "MissingCapability": "backchannel.types.errors",
}

__all__ = [
    "Audio",
    "Client",
    "Complete",
    "ConnectionClosed",
    "Context",
    "Elicited",
    "Image",
    "InvalidParams",
    "MCPError",
    "MissingCapability",
    "RequestError",
    "RequestTimeout",
    "ResourceNotFound",
    "Server",
    "ToolError",
    "__version__",
    "assistant",
    "user",
]

if TYPE_CHECKING:
    from .client.client import Client
    from .completion.completers import Complete
    from .server.content import Audio, Image
    from .server.context import Context
    from .server.elicitation import Elicited
    from .server.prompts import assistant, user
    from .server.server import Server
    from .types.errors import (
        ConnectionClosed,
        InvalidParams,
        MCPError,
        MissingCapability,
        RequestError,
        RequestTimeout,
        ResourceNotFound,
        ToolError,
    )


def _remote(**where: Any) -> Any:
    """The bridge's ``Proxy`` for a remote upstream, for ``Server.mount(command=...)`` (``_wiring``)."""
    from .bridge import remote

    return remote(**where)


wire_remote(_remote)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'backchannel' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return list(__all__)
