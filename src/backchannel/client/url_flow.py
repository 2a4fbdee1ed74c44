"""URL-mode elicitation on the client: ask the person, then follow the flow to its end.

The ``url_elicitation`` handler given to ``Client`` gets a ``UrlElicitation``: the
full URL, the host to highlight, warnings about suspicious URLs, the message and the
name of the server asking. It must show all of that, ask for consent, and open the
URL only if the person agrees, in a browser the client and the model cannot look
into (EL-50..57). It answers ``"accept"``, ``"decline"`` or ``"cancel"`` (or
``UrlConsent``). The client never fetches the URL itself.

So that the person is never stranded when the browser step never completes, a handler
may also return ``UrlConsent("accept", controls=UrlFlowControls())`` and later call
``done()``, ``cancel()`` or ``fresh_link()`` on it (the words ``request.offers`` lists;
``client/url_controls.py`` says how each travels)::

    async def on_url(request: UrlElicitation) -> UrlConsent | str:
        if not await ui.confirm(request):          # server, message, full URL, host, warnings
            return "decline"
        webbrowser.open(request.url)
        controls = UrlFlowControls()
        ui.offer_buttons(request.offers, controls)  # a button calls controls.fresh_link(), ...
        return UrlConsent("accept", controls=controls)

- Handshake era, ``elicitation/create``: the answer goes back at once (accept is
  consent, not completion); a later ``notifications/elicitation/complete`` for that id
  is recorded and ids the client does not know are ignored (EL-22).
- Handshake era, ``-32042`` from a call: each listed flow goes through the handler;
  then the client waits, at most ``url_wait`` seconds, until every accepted flow is
  reported complete (or the handler's ``UrlConsent.ready`` resolves: the person says
  "done", the manual control EL-24 asks for), and retries the call, at most
  ``url_retries`` times. A decline or cancel ends it with ``UrlFlowIncomplete``.
- Stateless era: the same handler answers the URL requests of the MRTR loop; the
  client learns the outcome by retrying, as that era does.
"""

from __future__ import annotations

__all__ = [
    "UrlConsent",
    "UrlElicitation",
    "UrlElicitationHandler",
    "UrlFlowControls",
    "UrlFlowIncomplete",
    "UrlFlowTracker",
    "UrlParty",
    "answer",
    "ask",
    "retry_after_url_flows",
]

import asyncio
import inspect
import ipaddress
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias
from urllib.parse import urlsplit

from ..types.elicitation import URL_FLOW_WORDS, UrlFlowWord, url_flow_offers, url_flow_said
from ..types.errors import URL_ELICITATION_REQUIRED, InvalidParams, RequestError
from ..types.wording import counted
from .url_controls import ControlledAnswer, UrlFlowControls, hold

Action = Literal["accept", "decline", "cancel"]
_KEPT_IDS = 256


@dataclass(frozen=True, slots=True)
class UrlElicitation:
    """A server's request to send the person to ``url``. Show ``url`` in full,
    ``host`` prominently, ``server_name`` and ``message``, and any ``warnings``,
    then ask before opening anything.

    ``offers`` are the words the person may say while the flow runs, through the
    ``UrlFlowControls`` returned with the consent (none: the link takes no words).

    It also reads like the raw ``elicitation/create`` params (``request.get("url")``,
    ``request["message"]``), for handlers written against those."""

    url: str
    message: str
    server_name: str
    elicitation_id: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    offers: tuple[UrlFlowWord, ...] = field(default=(), compare=False)

    def get(self, key: str, default: Any = None) -> Any:
        return self.params.get(key, default)

    def __getitem__(self, key: str) -> Any:
        return self.params[key]

    @property
    def host(self) -> str:
        """The host (and port) the URL leads to: what the person must check."""
        parts = urlsplit(self.url)
        return parts.hostname + (f":{parts.port}" if parts.port else "") if parts.hostname else ""

    @property
    def warnings(self) -> tuple[str, ...]:
        """Reasons to look twice (EL-56): punycode, user info, plain HTTP off loopback, raw IPs."""
        parts = urlsplit(self.url)
        host = parts.hostname or ""
        found: list[str] = []
        if any(label.startswith("xn--") for label in host.split(".")) or not host.isascii():
            found.append(f"the host {host!r} uses international characters (punycode): it may imitate another name")
        if "@" in parts.netloc:
            found.append("the URL carries a user name before the host, a common way to disguise where it leads")
        loopback = host in ("localhost",) or _is_loopback(host)
        if parts.scheme == "http" and not loopback:
            found.append("the URL is not encrypted (http, not https)")
        if not loopback and _is_ip(host):
            found.append("the URL names a raw IP address instead of a domain")
        return tuple(found)

    @classmethod
    def from_params(
        cls, params: Mapping[str, Any], server_name: str, offers: tuple[UrlFlowWord, ...] | None = None
    ) -> UrlElicitation:
        """Read ``elicitation/create`` params; ``InvalidParams`` unless the URL is a usable http(s) URL.
        ``offers`` default to the words the params' ``_meta`` offers."""
        url = params.get("url")
        message = params.get("message")
        if not isinstance(url, str) or not isinstance(message, str):
            raise InvalidParams("a URL elicitation needs a string url and message")
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 - raises ValueError for a port that is not a number in range
        except ValueError:
            raise InvalidParams(f"refusing to open {url!r}: it is not a valid URL") from None
        if parts.scheme not in ("https", "http") or not parts.hostname:
            raise InvalidParams(f"refusing to open {url!r}: only http(s) URLs with a host are shown")
        elicitation_id = params.get("elicitationId")
        known_id = elicitation_id if isinstance(elicitation_id, str) else None
        offered = url_flow_offers(params.get("_meta")) if offers is None else offers
        return cls(url, message, server_name, known_id, dict(params), offered)


@dataclass(frozen=True, slots=True)
class UrlConsent:
    """A handler's answer with manual controls: ``controls`` carries the person's words
    while the flow runs (see the module docstring); ``ready``, the older control, resolves
    when the person says they finished, which lets a ``-32042`` retry go ahead without
    waiting for the server's completion notification."""

    action: Action
    ready: Awaitable[Any] | None = None
    controls: UrlFlowControls | None = None


UrlAnswer: TypeAlias = Action | UrlConsent | Mapping[str, Any]
UrlElicitationHandler = Callable[[UrlElicitation], Awaitable[UrlAnswer] | UrlAnswer]


class UrlFlowIncomplete(RequestError):
    """A call needed URL flows (``-32042``) that the person declined or cancelled, or
    that were still not done after ``url_retries`` retries. ``action`` says which."""

    def __init__(self, message: str, action: Action, error: RequestError) -> None:
        super().__init__(message, code=error.code, data=error.data)
        self.action = action


async def ask(handler: UrlElicitationHandler, request: UrlElicitation) -> UrlConsent:
    """Run the handler and normalise its answer; ``InvalidParams`` for anything but the three actions."""
    answer = handler(request)
    if inspect.isawaitable(answer):
        answer = await answer
    if isinstance(answer, UrlConsent):
        consent = answer
    elif isinstance(answer, str):
        consent = UrlConsent(answer)
    elif isinstance(answer, Mapping):
        consent = UrlConsent(answer.get("action"))  # type: ignore[arg-type]
    else:
        raise InvalidParams(f"the URL elicitation handler answered {answer!r}")
    if consent.action not in ("accept", "decline", "cancel"):
        raise InvalidParams(f"the URL elicitation handler answered with action {consent.action!r}")
    return consent


async def answer(handler: UrlElicitationHandler, request: UrlElicitation, flows: UrlFlowTracker) -> dict[str, Any]:
    """The answer to an ``elicitation/create`` in URL mode. When the handler kept controls
    and the server offered words: in the handshake era, held until the person speaks or the
    server reports completion; in the stateless era, a ``ControlledAnswer`` for the retries
    to follow. Otherwise the handler's action, at once."""
    consent = await ask(handler, request)
    controls = consent.controls
    if controls is None or consent.action != "accept" or not request.offers:
        if controls is not None:
            controls.close()
        return {"action": consent.action}
    controls.follow(request.offers)
    if request.elicitation_id is None:
        return ControlledAnswer(controls)
    word = await hold(controls, flows.expect(request.elicitation_id))
    if word is None:
        return {"action": "accept"}
    return {"action": "cancel" if word == "cancel" else "accept", "_meta": url_flow_said(word)}


class UrlFlowTracker:
    """The handshake-era ``elicitationId`` s this client accepted, and which are complete.

    ``on_complete`` (optional) is called with each id the server reports complete, to
    update a UI. Unknown and already-completed ids are ignored (EL-22). Memory is
    bounded: only the latest ``_KEPT_IDS`` ids are remembered."""

    def __init__(self) -> None:
        self._ids: OrderedDict[str, asyncio.Event] = OrderedDict()
        self.on_complete: Callable[[str], None] | None = None

    def expect(self, elicitation_id: str) -> asyncio.Event:
        event = self._ids.get(elicitation_id)
        if event is None:
            event = self._ids[elicitation_id] = asyncio.Event()
            while len(self._ids) > _KEPT_IDS:
                self._ids.popitem(last=False)
        return event

    def is_complete(self, elicitation_id: str) -> bool:
        event = self._ids.get(elicitation_id)
        return event is not None and event.is_set()

    def notified(self, params: Mapping[str, Any]) -> bool:
        """Handle ``notifications/elicitation/complete``; True when it completed a known flow."""
        elicitation_id = params.get("elicitationId")
        event = self._ids.get(elicitation_id) if isinstance(elicitation_id, str) else None
        if event is None or event.is_set():
            return False
        event.set()
        if self.on_complete is not None:
            self.on_complete(elicitation_id)  # type: ignore[arg-type]
        return True


class UrlParty(Protocol):
    """What the ``-32042`` retry needs of the client's side: the handler that asks the person,
    the name of the server shown to them, and the flows already accepted (``InputHandlers``
    has the three)."""

    @property
    def url_elicitation(self) -> UrlElicitationHandler | None: ...

    @property
    def server_name(self) -> str: ...

    @property
    def url_flows(self) -> UrlFlowTracker: ...


async def retry_after_url_flows(
    call: Callable[[], Awaitable[dict[str, Any]]],
    inputs: UrlParty,
    *,
    wait: float,
    retries: int,
) -> dict[str, Any]:
    """``await call()``; on ``-32042`` run the listed flows, wait, and call again (bounded)."""
    attempt = 0
    while True:
        try:
            return await call()
        except RequestError as error:
            if error.code != URL_ELICITATION_REQUIRED or inputs.url_elicitation is None:
                raise
            if attempt >= retries:
                raise UrlFlowIncomplete(
                    f"{error.message} (still required after {counted(retries, 'retry', 'retries')})", "cancel", error
                ) from error
            attempt += 1
            await _run_flows(error, inputs, wait)


async def _run_flows(error: RequestError, inputs: UrlParty, wait: float) -> None:
    data = error.data if isinstance(error.data, Mapping) else {}
    listed = data.get("elicitations")
    if not isinstance(listed, list) or not listed:
        raise error
    requests: list[UrlElicitation] = []
    for params in listed:
        if not isinstance(params, Mapping) or params.get("mode") != "url" or not _is_id(params.get("elicitationId")):
            raise error  # -32042 may list only URL elicitations with ids (EL-28); we cannot act on this
        # The words are the client's own here: done and fresh-link retry now, cancel gives up.
        requests.append(UrlElicitation.from_params(params, inputs.server_name, URL_FLOW_WORDS))
    assert inputs.url_elicitation is not None
    pending: list[Awaitable[Any]] = []
    for request in requests:
        assert request.elicitation_id is not None
        done = inputs.url_flows.expect(request.elicitation_id)  # before asking: completion may come fast
        consent = await ask(inputs.url_elicitation, request)
        if consent.action != "accept":
            if consent.controls is not None:
                consent.controls.close()
            raise UrlFlowIncomplete(f"{error.message} (the person chose {consent.action})", consent.action, error)
        if consent.controls is not None:
            consent.controls.follow(request.offers)
            pending.append(hold(consent.controls, done))
        elif consent.ready is not None:
            pending.append(_either(done, consent.ready))
        else:
            pending.append(done.wait())
    if await _settled(pending, wait) == "cancel":
        raise UrlFlowIncomplete(f"{error.message} (the person chose cancel)", "cancel", error)


async def _settled(pending: list[Awaitable[Any]], wait: float) -> Any:
    """Wait for every flow (bounded: the notification is optional, EL-19, so retry anyway);
    ``"cancel"`` as soon as the person cancels one."""
    tasks = [asyncio.ensure_future(item) for item in pending]
    try:
        async with asyncio.timeout(wait):
            for finished in asyncio.as_completed(tasks):
                if await finished == "cancel":
                    return "cancel"
    except TimeoutError:
        pass
    finally:
        for task in tasks:
            task.cancel()
    return None


async def _either(done: asyncio.Event, ready: Awaitable[Any]) -> None:
    waiters = [asyncio.ensure_future(done.wait()), asyncio.ensure_future(ready)]
    try:
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            if waiter is not ready:  # a future the caller handed us stays theirs
                waiter.cancel()


def _is_id(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
