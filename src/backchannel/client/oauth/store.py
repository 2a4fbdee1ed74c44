"""Where tokens and client registrations are kept between requests, and between runs.

A store is a small async key-value map of JSON objects (``TokenStore``); ``OAuth`` decides the
keys, each naming the authorization server it belongs to, so that what one issued is never
offered to another:

- ``tokens <issuer> <resource>``: the tokens (and a DPoP key) for one resource, from one issuer;
- ``client <issuer> ...``: a client registered with that issuer (dynamic registration);
- ``endpoint <url>``: which resource and issuer an MCP endpoint was last found to use.

``MemoryTokenStore`` (the default) forgets at exit. ``FileTokenStore`` keeps one JSON file,
created with mode 0600 in a directory created with 0700 (``backchannel connect`` uses it, at
``$XDG_CONFIG_HOME/backchannel/oauth.json``); anything with ``get``/``set`` (a keyring, a
database) plugs in the same way.

A store that several processes use at once is a ``SharedTokenStore``: it also has ``lock(name)``,
which ``OAuth`` holds, one per authorization server, for a whole login and for each refresh,
reading the store again once it holds it. ``FileTokenStore`` is one: its locks are files beside
it (``oauth.json.<digest>.lock``, see ``filelock.py``), and each write holds ``oauth.json.lock``
for its read, change and atomic replace, so two processes writing different keys lose neither.
"""

from __future__ import annotations

__all__ = ["FileTokenStore", "MemoryTokenStore", "SharedTokenStore", "TokenStore", "default_token_file"]

import asyncio
import contextlib
import hashlib
import json
import os
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from .filelock import FileLock

#: How long a write waits for another process's write (a few milliseconds each) before it fails.
_WRITE_WAIT = 30.0


@runtime_checkable
class TokenStore(Protocol):
    """What ``OAuth`` keeps: ``set(key, None)`` forgets a key."""

    async def get(self, key: str) -> dict[str, Any] | None:
        """The value kept under ``key``, or ``None``."""

    async def set(self, key: str, value: dict[str, Any] | None) -> None:
        """Keep ``value`` under ``key``; ``None`` forgets the key."""


@runtime_checkable
class SharedTokenStore(TokenStore, Protocol):
    """A store other processes use at the same time, with a lock they all see."""

    def lock(self, name: str, timeout: float, *, doing: str) -> AbstractAsyncContextManager[None]:
        """Hold the lock called ``name`` for the block, waiting at most ``timeout`` seconds for another holder
        (then ``StoreLocked``, whose message says the holder is ``doing`` something). Not reentrant."""
        ...


class MemoryTokenStore:
    """A store for the life of the process."""

    def __init__(self) -> None:
        self.entries: dict[str, dict[str, Any]] = {}

    async def get(self, key: str) -> dict[str, Any] | None:
        """A copy of the value kept under ``key``, or ``None``."""
        value = self.entries.get(key)
        return json.loads(json.dumps(value)) if value is not None else None

    async def set(self, key: str, value: dict[str, Any] | None) -> None:
        """Keep a copy of ``value`` under ``key``; ``None`` forgets the key."""
        if value is None:
            self.entries.pop(key, None)
        else:
            self.entries[key] = json.loads(json.dumps(value))


def default_token_file() -> Path:
    """``$XDG_CONFIG_HOME/backchannel/oauth.json`` (``~/.config/...`` when the variable is unset)."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "backchannel" / "oauth.json"


class FileTokenStore:
    """One JSON file readable by its owner only (0600), rewritten whole and atomically on each change.

    The file holds refresh tokens and client secrets: it is created 0600 before anything is
    written to it, and a file found with wider permissions is narrowed on the next write.
    Processes share it safely (a ``SharedTokenStore``: its locks are files beside it).
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_token_file()
        self._lock = asyncio.Lock()

    def lock(
        self, name: str, timeout: float, *, doing: str = "using the token store"
    ) -> AbstractAsyncContextManager[None]:
        """Hold the lock called ``name`` (an issuer, say) for the block: ``oauth.json.<digest of name>.lock``
        beside the file, shared with every process that uses it."""
        digest = hashlib.sha256(name.encode()).hexdigest()[:16]
        return FileLock(self.path.with_name(f"{self.path.name}.{digest}.lock")).hold(timeout, doing=doing)

    def is_empty(self) -> bool:
        """Whether the file keeps nothing: missing, empty, or damaged (as good as none, as ``get`` reads it)."""
        return not self._read()

    async def get(self, key: str) -> dict[str, Any] | None:
        """The value kept under ``key`` in the file, or ``None``."""
        entries = await asyncio.to_thread(self._read)
        value = entries.get(key)
        return value if isinstance(value, dict) else None

    async def set(self, key: str, value: dict[str, Any] | None) -> None:
        """Write ``value`` under ``key`` to the file (``None`` forgets the key); one writer at a time."""
        async with self._lock:
            await asyncio.to_thread(self._update, key, value)

    def _read(self) -> dict[str, Any]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        try:
            entries = json.loads(text)
        except ValueError:
            return {}  # a damaged file is as good as none: the next login rewrites it
        return entries if isinstance(entries, dict) else {}

    def _update(self, key: str, value: dict[str, Any] | None) -> None:
        with FileLock(self.path.with_name(f"{self.path.name}.lock")).held(_WRITE_WAIT, doing="writing it"):
            self._replace(key, value)

    def _replace(self, key: str, value: dict[str, Any] | None) -> None:
        entries = self._read()
        if value is None:
            if key not in entries:
                return
            del entries[key]
        else:
            entries[key] = value
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:
                json.dump(entries, file, indent=1, sort_keys=True)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                temporary.unlink()
            raise
