"""What a server does when its state spans a fleet of workers (``--redis``, ``--workers``).

- **Announcements.** A change of the tool, prompt or resource lists, or of a resource, made on
  one worker is told to every worker (one channel), and each tells its own clients: its
  handshake-era sessions and its ``subscriptions/listen`` streams.
- **The keyring.** ``requestState`` sealed by one worker is opened by any: the keys live in the
  shared state, made once by the first worker, and rotated with ``rotate_keyring`` (the new key
  seals at once; the old one keeps opening states until the next rotation drops it).
- **The store's generation.** The states a worker seals name the generation of the shared store
  (``state/generation.py``), read when the worker joins and checked every few seconds; a store
  that lost it (Redis restarted without persistence) gets a new one, and ``ctx.once`` refuses the
  states of the old (``once.py``). The keyring outlives such a loss (the workers put their keys
  back), so a state whose request needs nothing the store kept still opens.
- **Per-session records.** What the server keeps for a handshake-era session (its log level, its
  resource subscriptions), as data another worker takes the session up from.
- **Fleet calls.** ``calls`` asks another worker to do what only it can (``state/calls.py``): a URL
  flow lives in the worker that started it, and the others send it their part of the flow, its
  pages and stateless-era steps (``http_host/url_flows/fleet.py``).

With a state that spans no processes (the default) none of it runs: ``start`` does nothing.
"""

from __future__ import annotations

__all__ = ["KEYRING_TTL", "Sharing", "restore_session", "rotate_keyring", "session_snapshot"]

import asyncio
import base64
import contextlib
import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgspec

from ..state.shared import SharedState, StateUnavailable
from ..types.logging import LOG_LEVEL_RANK
from .connection_state import ConnectionState

if TYPE_CHECKING:
    from ..state.calls import Calls
    from .server import Server

logger = logging.getLogger("backchannel")

CHANGES = "changes"
KEYRING = "keyring"
#: How long the keyring lives untouched; every worker that starts renews it.
KEYRING_TTL = 90 * 24 * 3600.0
#: How many keys a rotation keeps: the new one, and the one before (states it sealed still open).
_KEYS_KEPT = 2
#: At most this many keys after workers whose keys Redis lost add theirs back.
_KEYS_MERGED = 4
#: How often a worker checks that the fleet's keyring still holds its key (Redis may lose it),
#: and reads the store's generation again.
KEYRING_CHECK = 5.0


def _key_text(key: bytes) -> str:
    return base64.urlsafe_b64encode(key).decode("ascii")


def _keys_of(value: Any) -> list[bytes]:
    texts = value.get("keys") if isinstance(value, dict) else None
    if not isinstance(texts, list):
        return []
    return [base64.urlsafe_b64decode(text) for text in texts if isinstance(text, str)]


async def rotate_keyring(state: SharedState) -> int:
    """Put a new sealing key in front of the fleet's keyring (keeping the previous one) and tell
    every worker; returns how many keys the ring holds now."""
    # os.urandom is what secrets.token_bytes reads (secrets would load hashlib's OpenSSL at start).
    keys = [os.urandom(32), *_keys_of(await state.get(KEYRING))][:_KEYS_KEPT]
    await state.put(KEYRING, {"keys": [_key_text(k) for k in keys]}, ttl=KEYRING_TTL)
    await state.publish(CHANGES, msgspec.json.encode({"k": "keyring"}))
    return len(keys)


class Sharing:
    """The server's part in a fleet (see the module)."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self._stop: Callable[[], None] | None = None
        self._pending: set[asyncio.Task[Any]] = set()
        self._started = False
        self._keeper: asyncio.Task[None] | None = None
        #: This worker's fleet calls, once ``start`` ran with a state that spans workers.
        self.calls: Calls | None = None

    @property
    def state(self) -> SharedState | None:
        state = self.server.state
        return state if isinstance(state, SharedState) and state.spans_workers else None

    async def start(self) -> None:
        """Listen for the other workers' announcements, take up the fleet's keyring, and answer
        the other workers' calls. Each part is done once; after a failure (the state unreachable)
        the next call does what is left."""
        state = self.state
        if state is None or self._started:
            return
        if self._stop is None:
            self._stop = state.listen(CHANGES, self._on_change)
        await state.listening(CHANGES)
        self.server.state_sealer.generation.on_new = self._tell_generation
        await self.check_generation()  # before anything is sealed: the states begin in this generation
        if self.server.options.state.key is None:  # a key given outright is the operator's keyring
            await self.check_keyring()
        if self._keeper is None:
            self._keeper = asyncio.get_running_loop().create_task(self._keep_keyring())
        await self._start_calls(state)
        self._started = True

    async def _start_calls(self, state: SharedState) -> None:
        # The URL flows' pages load with a fleet (every worker serves them), not with every server.
        from ..http_host.url_flows.fleet import PAGE, STEP
        from ..http_host.url_flows.pages import UrlElicitations
        from ..state.calls import Calls
        from .url_elicitation.rounds import flow_step

        if self.calls is None:
            calls = Calls(state)
            calls.handle(PAGE, lambda request: UrlElicitations.of(self.server).serve_forwarded(request))
            calls.handle(STEP, lambda step: flow_step(UrlElicitations.of(self.server), step))
            self.calls = calls
        await self.calls.start()
        UrlElicitations.of(self.server).join_fleet(self.calls)

    def stop(self) -> None:
        if self._stop is not None:
            self._stop()
            self._stop = None
        if self.calls is not None:
            self.calls.stop()
        if self._keeper is not None:
            self._keeper.cancel()
            self._keeper = None
        self._started = False

    async def check_keyring(self) -> None:
        """Agree with the fleet's keyring: the first worker's key makes it; a worker seals with
        its first key and opens with any of them. A ring Redis lost (a restart without
        persistence) is made again, and a worker whose sealing key is not in the ring (another
        worker made a new one meanwhile) adds it, so the states it sealed still open everywhere."""
        state = self.state
        if state is None:
            return
        sealer = self.server.state_sealer
        mine = sealer.key
        ring = _keys_of(await state.get(KEYRING))
        if not ring:
            if await state.add(KEYRING, {"keys": [_key_text(k) for k in sealer.keys]}, ttl=KEYRING_TTL) == "added":
                return  # this worker's keys are the fleet's
            ring = _keys_of(await state.get(KEYRING))
        if ring and mine not in ring:
            ring = [*ring, mine][-_KEYS_MERGED:]
            await state.put(KEYRING, {"keys": [_key_text(k) for k in ring]}, ttl=KEYRING_TTL)
            await state.publish(CHANGES, msgspec.json.encode({"k": "keyring"}))
        if ring and sealer.keys != ring:
            sealer.use_keys(ring)

    async def check_generation(self) -> None:
        """Read the shared store's generation (making one when it has none: a store new, or
        emptied), so the states sealed from now on name it."""
        state = self.state
        if state is not None:
            await self.server.state_sealer.generation.read(state)

    async def _tell_generation(self) -> None:
        state = self.state
        if state is not None:
            with contextlib.suppress(StateUnavailable):  # (each worker reads it again within seconds)
                await state.publish(CHANGES, msgspec.json.encode({"k": "keyring"}))

    async def _keep_keyring(self) -> None:
        while True:
            await asyncio.sleep(KEYRING_CHECK)
            try:
                await self.check_generation()
                if self.server.options.state.key is None:
                    await self.check_keyring()
            except StateUnavailable:
                continue  # Redis is away: the keys in memory serve until it is back

    def announce(self, kind: str, value: str) -> None:
        """Tell the other workers (``kind`` "list" with the notification's method, or
        "resource" with its URI); they tell their own clients."""
        state = self.state
        if state is None:
            return
        data = msgspec.json.encode({"k": kind, "v": value, "o": state.worker_id})
        task = asyncio.get_running_loop().create_task(self._publish(state, data))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _publish(self, state: SharedState, data: bytes) -> None:
        try:
            await state.publish(CHANGES, data)
        except StateUnavailable as exc:
            logger.warning("the other workers were not told of a change: %s", exc.message)

    def _on_change(self, data: bytes) -> None:
        state = self.state
        message = msgspec.json.decode(data)
        if state is None or not isinstance(message, dict) or message.get("o") == state.worker_id:
            return
        kind, value = message.get("k"), message.get("v")
        if kind == "list" and isinstance(value, str):
            self.server.list_changed_here(value)
        elif kind == "resource" and isinstance(value, str):
            self.server.resource_updated_here(value)
        elif kind == "keyring":
            task = asyncio.get_running_loop().create_task(self._reload_keyring(state))
            self._pending.add(task)
            task.add_done_callback(self._pending.discard)

    async def _reload_keyring(self, state: SharedState) -> None:
        try:
            await self.check_generation()
            if self.server.options.state.key is None:
                await self.check_keyring()
        except StateUnavailable as exc:
            logger.warning("the fleet's keyring could not be read: %s", exc.message)


def session_snapshot(state: ConnectionState | None) -> dict[str, Any]:
    if state is None:
        return {}
    return {"logLevel": state.log_level, "subscriptions": sorted(state.subscriptions), "roots": state.roots.kept()}


def restore_session(state: ConnectionState | None, kept: dict[str, Any]) -> None:
    if state is None:
        return
    level = kept.get("logLevel")
    if level is None or level in LOG_LEVEL_RANK:
        state.log_level = level
    subscriptions = kept.get("subscriptions")
    if isinstance(subscriptions, list):
        state.subscriptions = frozenset(uri for uri in subscriptions if isinstance(uri, str))
    if "roots" in kept:
        state.roots.take_up(kept["roots"])
