"""The bridge: a server whose answers come from another server, the reverse channel carried across.

``Proxy`` (``backchannel proxy``) serves one upstream, in either era and over either transport, to a
client of either era; ``Upstream`` is the machinery under it (an upstream seen as a client, its
questions, progress and logs relayed to the downstream request they belong to). ``docs/bridge.md``
has the translation table.
"""

from __future__ import annotations

__all__ = ["Proxy", "Upstream", "UpstreamSpec", "remote"]

from typing import Any

from .proxy import Proxy
from .upstream import Upstream, UpstreamSpec


def remote(**where: Any) -> Proxy:
    """A ``Proxy`` for the upstream ``where`` names (``UpstreamSpec``'s fields: ``command=`` or
    ``url=``, with ``headers``, ``auth``, ``era``): what ``Server.mount(command=...)`` mounts."""
    return Proxy(UpstreamSpec(**where))
