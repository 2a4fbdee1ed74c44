"""What a ``Server`` keeps for each connection it serves (``Server.connection_state``)."""

from __future__ import annotations

__all__ = ["ConnectionState"]

from dataclasses import dataclass, field

from ..runtime.ratelimit import TokenBucket
from .roots import RootsCache


@dataclass(slots=True)
class ConnectionState:
    """What the server keeps per connection: the handshake era's log level and resource
    subscriptions, and the log rate limit."""

    log_level: str | None
    bucket: TokenBucket
    #: Immutable, replaced on each change: an empty set would cost every idle session 216 bytes.
    subscriptions: frozenset[str] = frozenset()
    #: Names this connection's entries in the state store (declined forms, stdio ``once`` bucket);
    #: made on first use, as most connections (a stateless-era POST each) never need one.
    scope: str | None = None
    roots: RootsCache = field(default_factory=RootsCache)
