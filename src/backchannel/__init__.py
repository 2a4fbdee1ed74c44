"""backchannel: an MCP runtime where the reverse channel and the operation lifecycle are first-class.

The public names below load lazily, so ``import backchannel.protocol`` (the
sans-IO core) pulls in no event loop, and a stdio server never imports an HTTP
stack.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._lazy import lazy_names
from ._version import __version__
from ._wiring import wire_remote

_EXPORTS: dict[str, str] = {
    "Server": "server.server",
    "Complete": "completion.completers",
    "Elicited": "server.elicitation",
    "Context": "server.context",
    "Image": "server.content",
    "Audio": "server.content",
    "user": "server.prompts",
    "assistant": "server.prompts",
    "Client": "client.client",
    "ToolError": "types.errors",
    "MCPError": "types.errors",
    "RequestError": "types.errors",
    "RequestTimeout": "types.errors",
    "ConnectionClosed": "types.errors",
    "InvalidParams": "types.errors",
    "ResourceNotFound": "types.errors",
    "MissingCapability": "types.errors",
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


__getattr__ = lazy_names(__name__, _EXPORTS)


def __dir__() -> list[str]:
    return list(__all__)
