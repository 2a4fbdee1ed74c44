"""Where a lower layer finds what a higher one provides, put there by the package's ``__init__``.

``Server.mount(command=...)`` and ``mount(url=...)`` mount a server that answers for another
process: a ``backchannel.bridge.Proxy``. The bridge is a server answered by a client, so it sits
above the server, which may not import it. The package's ``__init__`` (above both) hands
``wire_remote`` a function that loads the bridge when first called; the server calls
``make_remote``. Nothing else belongs here.
"""

from __future__ import annotations

__all__ = ["make_remote", "wire_remote"]

from collections.abc import Callable
from typing import Any

_remote: Callable[..., Any] | None = None


def wire_remote(maker: Callable[..., Any]) -> None:
    """Make remote upstreams' servers with ``maker`` from now on."""
    global _remote
    _remote = maker


def make_remote(**where: Any) -> Any:
    """The server that answers for the remote upstream ``where`` names."""
    if _remote is None:
        raise RuntimeError("mounting a command or a URL needs backchannel.bridge, which is not wired in")
    return _remote(**where)
