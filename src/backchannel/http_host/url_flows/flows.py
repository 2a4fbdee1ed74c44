"""The URL flows of one server: their one-time links, codes, lifetimes and outcomes.

``FlowRegistry`` is the bookkeeping half of ``UrlElicitations`` (the pages are the
other half, in ``pages.py``): it makes flows, hands out and retires their links,
settles them, and tells whoever waits on a flow when it is over or when its link
was used up and a fresh one may be issued (``reissue``).
"""

from __future__ import annotations

__all__ = ["Action", "FlowRegistry", "FlowStatus", "UrlFlow", "UrlFlowHandler"]

import asyncio
import contextlib
import logging
import time
import uuid
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ...telemetry import metrics
from ...types.errors import ConnectionClosed, LocalProtocolError

if TYPE_CHECKING:
    from ...protocol.events import RequestId
    from ...runtime.connection import Connection

logger = logging.getLogger("backchannel.url_elicitation")

Action = Literal["accept", "decline", "cancel"]
FlowStatus = Literal["pending", "claimed", "complete", "failed"]

_COMPLETE = "notifications/elicitation/complete"


class UrlFlowHandler(Protocol):
    """What a flow does once the browser is confirmed, e.g. an OAuth authorization-code flow.

    ``begin`` returns the URL to send the browser to (put ``flow.state`` in it as the
    OAuth ``state`` and ``manager.callback_url`` as the redirect URI); keep secrets such
    as the PKCE verifier in ``flow.data``. ``finish`` gets the query of the return to
    ``callback_url`` (already checked to come from the same browser) and stores what
    it obtains, bound to ``flow.owner``; raising fails the flow.
    """

    async def begin(self, flow: UrlFlow) -> str:
        """The URL to send the confirmed browser to, with ``flow.state`` as its OAuth ``state``; keep secrets in
        ``flow.data``."""

    async def finish(self, flow: UrlFlow, params: Mapping[str, str]) -> None:
        """Take the query of the return to ``callback_url`` and store what it brings, bound to ``flow.owner``; raise
        to fail the flow."""


def digest(secret: str) -> bytes:
    """What is kept of a token or a cookie secret: its hash, never the secret itself."""
    import hashlib  # (with secrets: OpenSSL's 0.6 MiB, loaded by a first URL flow, not at start)

    return hashlib.sha256(secret.encode()).digest()


def _new_code() -> str:
    import secrets

    digits = f"{secrets.randbelow(10**8):08d}"
    return f"{digits[:4]}-{digits[4:]}"


@dataclass(eq=False)
class UrlFlow:
    """One out-of-band interaction. ``id`` is the ``elicitationId``; ``data`` is the
    handler's private scratch space (never sent anywhere). ``links`` counts the links
    issued for it (the first and each ``reissue``); ``spent`` says the current one was
    used up by wrong codes and the person needs a fresh one to go on."""

    id: str
    message: str
    owner: str | None
    expires: float
    handler: UrlFlowHandler | None = None
    external_url: str | None = None
    code: str | None = None
    status: FlowStatus = "pending"
    outcome: Action | None = None
    state: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    url: str = ""
    links: int = 0
    spent: bool = False
    _token_hash: bytes | None = None
    _retired: list[bytes] = field(default_factory=list)
    _browser_hash: bytes | None = None
    _attempts: int = 0
    _changed: asyncio.Event = field(default_factory=asyncio.Event)
    _notify: tuple[weakref.ref[Connection], RequestId | None] | None = None

    @property
    def done(self) -> bool:
        """Whether the flow has ended, complete or failed; the waiting tool then goes on."""
        return self.status in ("complete", "failed")

    @property
    def prompt(self) -> str:
        """The message the client shows: the server's text plus the confirmation code."""
        if self.code is None:
            return self.message
        fresh = " This is a fresh link: the one sent before no longer works." if self.links > 1 else ""
        return (
            f"{self.message}\n\nConfirmation code: {self.code}. The page will ask for it; "
            f"never type a code that someone else gave you.{fresh}"
        )

    def elicitation(self, *, with_id: bool, note: str | None = None) -> dict[str, Any]:
        """The ``elicitation/create`` params (``elicitationId`` only in the handshake era);
        ``note`` goes before the message (what the server has to say about the flow)."""
        message = self.prompt if note is None else f"{note}\n\n{self.prompt}"
        params: dict[str, Any] = {"mode": "url", "message": message, "url": self.url}
        if with_id:
            params["elicitationId"] = self.id
        return params

    def _signal(self) -> None:
        # Waiters hold the event of the moment and re-check the flow when it fires;
        # a new event is ready for the next change.
        self._changed.set()
        self._changed = asyncio.Event()


class FlowRegistry:
    """The flows themselves: ``start``, ``get``, ``complete``, ``fail``, ``wait`` and ``reissue``.

    ``ttl`` bounds each flow, ``poll_wait`` how long a stateless-era retry waits for a
    flow before answering "not yet", ``code_attempts`` the wrong confirmation codes one
    link tolerates (then that link is used up, not the flow), ``fresh_links`` how many
    times a flow's link may be replaced by ``reissue``, ``max_flows`` the flows kept at
    once (the oldest unfinished one is cancelled beyond it).
    """

    def __init__(
        self,
        base_url: str | None = None,
        *,
        prefix: str = "/elicit",
        ttl: float = 600.0,
        poll_wait: float = 20.0,
        code_attempts: int = 5,
        fresh_links: int = 3,
        max_flows: int = 1000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if code_attempts < 1 or fresh_links < 0:
            raise ValueError("code_attempts must be at least 1 and fresh_links at least 0")
        self.base_url = base_url.rstrip("/") if base_url else None
        self.prefix = "/" + prefix.strip("/")
        self.ttl = ttl
        self.poll_wait = poll_wait
        self.code_attempts = code_attempts
        self.fresh_links = fresh_links
        self.max_flows = max_flows
        self._clock = clock
        self._flows: dict[str, UrlFlow] = {}
        self._by_token: dict[bytes, str] = {}
        self._by_state: dict[str, str] = {}
        #: This worker's id in a fleet (set when it joins one, ``fleet.py``): it leads each link's
        #: token and each OAuth ``state``, so whichever worker a browser reaches knows the owner.
        self.worker: str | None = None

    @property
    def callback_url(self) -> str:
        """Where a ``UrlFlowHandler`` sends the browser back (its OAuth redirect URI)."""
        return f"{self._base()}{self.prefix}/callback"

    def _base(self) -> str:
        if not self.base_url:
            raise RuntimeError(
                "URL elicitation pages need a public address: give UrlElicitations(base_url=...), "
                "or await serve_pages() first (ctx.elicit_url does) to serve them on loopback"
            )
        return self.base_url

    def start(
        self,
        message: str,
        *,
        owner: str | None = None,
        handler: UrlFlowHandler | None = None,
        url: str | None = None,
        connection: Connection | None = None,
        related: RequestId | None = None,
    ) -> UrlFlow:
        """A new flow. With ``url``, the person goes straight there and the app calls
        ``complete(flow.id)`` itself (``{elicitation_id}`` in ``url`` is filled in);
        otherwise they go to this app's page, which checks the confirmation code and
        then runs ``handler`` (or, with none, completes at once).
        ``connection`` is the handshake-era connection to notify on completion."""
        self._prune()
        flow = UrlFlow(str(uuid.uuid4()), message, owner, self._clock() + self.ttl, handler)
        if url is not None:
            flow.external_url = url.replace("{elicitation_id}", flow.id)
            flow.url = flow.external_url
        else:
            self._new_link(flow)
        if connection is not None:
            flow._notify = (weakref.ref(connection), related)
        self._flows[flow.id] = flow
        return flow

    def get(self, flow_id: str) -> UrlFlow | None:
        """The flow, finished or not, until it expires."""
        self._prune()
        return self._flows.get(flow_id)

    def complete(self, flow: UrlFlow | str) -> bool:
        """Mark the flow done (the out-of-band step succeeded); False if it was over already."""
        found = self._resolve(flow)
        if found is None or found.done:
            return False
        found.status, found.outcome = "complete", "accept"
        self._settle(found)
        self._send_complete(found)
        return True

    def fail(self, flow: UrlFlow | str, action: Action = "cancel") -> bool:
        """End the flow unsuccessfully (``decline`` or ``cancel``); False if it was over already."""
        found = self._resolve(flow)
        if found is None or found.done:
            return False
        found.status, found.outcome = "failed", "decline" if action == "decline" else "cancel"
        self._settle(found)
        return True

    def reissue(self, flow: UrlFlow | str) -> bool:
        """Give the flow a fresh link: a new one-time token and a new confirmation code.

        The new ``flow.url`` and ``flow.prompt`` go to the flow's owner only, over the
        MCP channel: ``ctx.elicit_url`` sends them in the same call, whether it asked for
        the fresh link itself (its link was used up) or someone else did. The old
        link is dead from now on, whoever holds it, and a browser that had claimed it
        must start again with the new one; the flow keeps its id, owner and expiry.
        False, and nothing changes, when the flow is over, sends the person to a page of
        the app's own (``url=``), or has had ``fresh_links`` fresh links already."""
        found = self._resolve(flow)
        if found is None or not self.can_reissue(found):
            return False
        if found.state is not None:  # an authorization begun from the old link cannot come back
            self._by_state.pop(found.state, None)
            found.state = None
        found.status = "pending"
        found._browser_hash = None
        self._new_link(found)
        logger.info("URL flow %s: fresh link %d of at most %d", found.id, found.links - 1, self.fresh_links)
        found._signal()
        return True

    def can_reissue(self, flow: UrlFlow) -> bool:
        """Whether ``reissue`` would give the flow a fresh link now."""
        return not flow.done and flow.code is not None and flow.links <= self.fresh_links

    async def wait(self, flow: UrlFlow, timeout: float | None = None, *, link: int | None = None) -> bool:
        """Wait until the flow is over, at most ``timeout`` seconds and never past its
        expiry (which cancels it); True when it is over. With ``link`` (the ``flow.links``
        of the link the person was sent), also return as soon as that link is used up
        (``flow.spent``: time for ``reissue``) or was replaced by a fresh one: either
        way the person needs the flow's current link."""
        limit = max(0.0, flow.expires - self._clock())
        if timeout is not None:
            limit = min(limit, timeout)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(limit):
                while not flow.done and (link is None or (flow.links == link and not flow.spent)):
                    await flow._changed.wait()
        if not flow.done and flow.expires <= self._clock():
            self.fail(flow, "cancel")
        return flow.done

    def named(self, secret: str) -> str:
        """A token or an OAuth ``state``: ``<worker>.<secret>`` in a fleet (worker ids hold no
        ``.``), the secret alone otherwise."""
        return secret if self.worker is None else f"{self.worker}.{secret}"

    def _new_link(self, flow: UrlFlow) -> None:
        self._retire_link(flow)
        import secrets

        token = self.named(secrets.token_urlsafe(32))
        flow._token_hash = digest(token)
        flow._attempts = 0
        flow.code = _new_code()
        flow.url = f"{self._base()}{self.prefix}/{token}"
        flow.links += 1
        flow.spent = False
        self._by_token[flow._token_hash] = flow.id

    def _retire_link(self, flow: UrlFlow) -> None:
        # A retired token still names its flow, so its page can say the link no longer
        # works; it is forgotten with the flow (``_settle``).
        if flow._token_hash is not None:
            flow._retired.append(flow._token_hash)
            flow._token_hash = None

    def _spend(self, flow: UrlFlow) -> None:
        """The current link had its ``code_attempts`` wrong codes: it is used up, the flow is not."""
        self._retire_link(flow)
        flow.spent = True
        logger.info("URL flow %s: link used up by wrong codes; the flow stays pending", flow.id)
        flow._signal()

    def _link_of(self, token: str) -> tuple[UrlFlow | None, bool]:
        """The flow a token names, and whether the token is its current link."""
        hashed = digest(token)
        flow_id = self._by_token.get(hashed)
        flow = self._flows.get(flow_id) if flow_id is not None else None
        return flow, flow is not None and flow._token_hash == hashed

    def _resolve(self, flow: UrlFlow | str) -> UrlFlow | None:
        return self._flows.get(flow) if isinstance(flow, str) else flow

    def _settle(self, flow: UrlFlow) -> None:
        # The flow's outcome is the elicitation's: accept once the browser step completed,
        # decline or cancel otherwise (the person said so, or it was cancelled or expired).
        # Its time runs from its start (``expires`` is the start plus ``ttl``).
        metrics.elicitation_answered("url", flow.outcome, self._clock() - (flow.expires - self.ttl))
        self._retire_link(flow)
        for hashed in flow._retired:
            self._by_token.pop(hashed, None)
        flow._retired.clear()
        if flow.state is not None:
            self._by_state.pop(flow.state, None)
        flow._signal()

    def _send_complete(self, flow: UrlFlow) -> None:
        # EL-20/21: only to the client that started it, carrying its elicitationId.
        if flow._notify is None:
            return
        ref, related = flow._notify
        connection = ref()
        if connection is None or connection.closed.is_set():
            return
        try:
            connection.notify(_COMPLETE, {"elicitationId": flow.id}, related=related)
        except (LocalProtocolError, ConnectionClosed) as exc:
            logger.debug("could not send %s for %s: %s", _COMPLETE, flow.id, exc)

    def _prune(self) -> None:
        now = self._clock()
        for flow in [f for f in self._flows.values() if f.expires <= now]:
            self.fail(flow, "cancel")
            self._flows.pop(flow.id, None)
        for flow in list(self._flows.values()):  # oldest first: dicts keep insertion order
            if len(self._flows) < self.max_flows:
                break
            self.fail(flow, "cancel")
            self._flows.pop(flow.id, None)
