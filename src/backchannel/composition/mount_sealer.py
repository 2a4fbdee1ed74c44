"""The ``requestState`` sealer of a mounted server (``Server.mount``): its mounting server's.

A mounted server seals the states of its stateless-era questions (its own, or, for a ``Proxy``,
the upstream's state sealed inside ours) with the keys of the server that mounts it: in a fleet
those are the keys every worker shares (``server/sharing.py`` takes up the fleet's keyring into the
mounting server's sealer), so a retry that lands on another worker opens there. Each state is
also bound to the mount's prefix, so one that a mount sealed opens at no other mount: a client
cannot send one mount's (or its upstream's) state to another.
"""

from __future__ import annotations

__all__ = ["MountSealer"]

from typing import Any

from ..state.sealer import StateSealer


class MountSealer(StateSealer):
    """``parent``'s keys, TTL, clock and generation (followed as they change), each state bound to
    the mount ``prefix`` as well as to its request."""

    def __init__(self, parent: StateSealer, prefix: str) -> None:  # (no super().__init__: all is the parent's)
        self.parent = parent
        self.generation = parent.generation
        self._label = f"\x00mount {prefix}"

    @property
    def keys(self) -> list[bytes]:
        return self.parent.keys

    @keys.setter
    def keys(self, keys: list[bytes]) -> None:
        self.parent.keys = keys

    @property
    def ttl(self) -> float:
        return self.parent.ttl

    @ttl.setter
    def ttl(self, ttl: float) -> None:
        self.parent.ttl = ttl

    def now(self) -> float:
        return self.parent.now()

    def seal(self, payload: dict[str, Any], binding: str, *, not_after: float | None = None) -> str:
        return self.parent.seal(payload, binding + self._label, not_after=not_after)

    def open(self, token: Any, binding: str) -> dict[str, Any]:
        return self.parent.open(token, binding + self._label)
