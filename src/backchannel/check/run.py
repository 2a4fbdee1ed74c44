"""One run of the checks, and what every group of checks takes from it.

``Run`` holds the target, the options, what the survey found in each era (``EraInfo``) and the
outcomes so far; each check opens its own connections through ``Run.session`` and records what it
found with ``Run.add``. ``checks`` marks a check function with its id, ``result_of`` and ``said``
read an answer. The groups (``eras.py``, ``asking.py``, ...) import this module; ``runner.py``
imports the groups and runs them.
"""

from __future__ import annotations

__all__ = [
    "CheckFunction",
    "CheckOptions",
    "EraInfo",
    "NoSession",
    "Run",
    "bounded",
    "checks",
    "result_of",
    "said",
]

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..types.versions import Era
from .outcome import Line, Outcome, Verdict
from .plan import Plan, PlanConfig
from .raw_http import RawAnswer, post
from .shapes import obj
from .spec import CHECKS, GROUPS
from .target import Target
from .wire import Wire, error_code

CheckFunction = Callable[["Run"], Awaitable[None]]


@dataclass
class CheckOptions:
    """How far the checks go. ``budget``: fuzzed frames; ``timeout``: seconds any one answer
    may take; ``eras``/``groups``: which to run; ``load``: run the load checks (slow bodies,
    many sessions) on a server that is not on this machine (None: only on loopback);
    ``sessions``: how many sessions the session check opens."""

    budget: int = 300
    timeout: float = 10.0
    eras: tuple[Era, ...] = ("handshake", "stateless")
    groups: tuple[str, ...] = tuple(GROUPS)
    config: PlanConfig = field(default_factory=PlanConfig)
    load: bool | None = None
    sessions: int = 64
    #: The fleet group's concurrent sessions (0: the group does not run).
    fleet: int = 0
    #: The auth group's tokens the person supplies: one the authorization server issued for
    #: another resource, and one for this server without the scopes it needs.
    foreign_token: str | None = None
    weak_token: str | None = None
    seed: int = 20260728
    #: Run the official conformance harness's server scenarios too (HTTP; nothing installed).
    with_conformance: bool = False
    #: Only these harness scenarios (empty: its whole server suite).
    conformance_scenarios: tuple[str, ...] = ()
    say: Callable[[str], None] | None = None


@dataclass
class EraInfo:
    """What the server said of itself in one era, and the plan of that era's checks."""

    era: Era
    version: str
    capabilities: dict[str, Any]
    server_info: dict[str, Any]
    tools: list[dict[str, Any]]
    prompts: list[dict[str, Any]]
    templates: list[dict[str, Any]]
    plan: Plan


class NoSession(Exception):
    """A check could not open its connection (the server did not answer ``initialize``)."""

    def __init__(self, wire: Wire, why: str) -> None:
        super().__init__(why)
        self.wire = wire
        self.why = why


class Run:
    """One run of the checks on ``target``: what the survey found, and the outcomes so far."""

    def __init__(self, target: Target, options: CheckOptions) -> None:
        self.target = target
        self.options = options
        self.outcomes: list[Outcome] = []
        self.eras: dict[Era, EraInfo] = {}
        #: The survey's connections, kept for the eras group's evidence.
        self.probes: dict[Era, Wire] = {}
        #: Every ``notifications/message`` any connection saw: (era, params, the wire).
        self.logs: list[tuple[Era, dict[str, Any], Wire]] = []
        #: Every line of the server's stdout that was not a message, with its connection.
        self.undecodable: list[tuple[str, Wire]] = []
        self.notes: list[str] = []

    # ------------------------------------------------------------------ connections

    def wire(
        self,
        era: Era,
        *,
        capabilities: dict[str, Any] | None = None,
        log_level: str | None = None,
        timeout: float | None = None,
        fresh_connections: bool = False,
    ) -> Wire:
        return Wire(
            self.target.transport(fresh_connections=fresh_connections),
            era,
            capabilities=capabilities,
            log_level=log_level,
            timeout=self.options.timeout if timeout is None else timeout,
            on_message=self._saw,
        )

    def _saw(self, wire: Wire, message: dict[str, Any]) -> None:
        if message.get("method") == "notifications/message" and "id" not in message:
            params = message.get("params")
            self.logs.append((wire.era, params if isinstance(params, dict) else {}, wire))

    @contextlib.asynccontextmanager
    async def session(
        self,
        era: Era,
        *,
        capabilities: dict[str, Any] | None = None,
        log_level: str | None = None,
        timeout: float | None = None,
        initialize: bool = True,
        fresh_connections: bool = False,
    ) -> AsyncIterator[Wire]:
        """A fresh connection in ``era``, introduced (``initialize`` in the handshake era);
        ``NoSession`` when the server would not have it. ``fresh_connections``: every request
        on a TCP connection of its own."""
        wire = self.wire(
            era, capabilities=capabilities, log_level=log_level, timeout=timeout, fresh_connections=fresh_connections
        )
        try:
            try:
                await wire.start()
            except OSError as exc:
                raise NoSession(wire, f"could not start the server: {exc}") from None
            if era == "handshake" and initialize:
                answer = await wire.initialize()
                if answer is None or not isinstance(answer.get("result"), dict):
                    why = "no answer to initialize" if answer is None else "initialize was refused"
                    raise NoSession(wire, why)
            yield wire
        finally:
            await wire.close()
            self.undecodable.extend((line, wire) for line in wire.undecodable)

    async def posted(
        self,
        wire: Wire,
        body: bytes | dict[str, Any],
        headers: dict[str, str],
        *,
        timeout: float | None = None,
        how: str = "",
    ) -> RawAnswer:
        """POST ``body`` to the target by plain HTTP, on a client of its own, recorded on ``wire``
        (``how``: what the note says it was sent with, before the answer)."""
        assert self.target.url is not None
        async with self.target.raw_http() as http:
            answer = await post(
                http, self.target.url, body, headers, self.options.timeout if timeout is None else timeout
            )
        wire.sent_elsewhere(body, "plain HTTP")
        wire.note(f"{how}; answered: {answer.said()}" if how else f"answered: {answer.said()}")
        return answer

    # ------------------------------------------------------------------ outcomes

    def add(
        self,
        check_id: str,
        verdict: Verdict,
        summary: str,
        *,
        era: Era | None = None,
        wire: Wire | None = None,
        exchange: Sequence[Line] | None = None,
        revision: str | None = None,
    ) -> None:
        """Record an outcome; a failure keeps ``wire``'s exchange (or ``exchange``) as its evidence."""
        assert check_id in CHECKS, check_id
        if revision is None and era is not None:
            info = self.eras.get(era)
            revision = info.version if info is not None else None
        lines = list(exchange) if exchange is not None else []
        if verdict == "fail" and not lines and wire is not None:
            lines = wire.exchange()
            tail = wire.stderr_tail()
            if tail:
                lines.append(Line("note", wire.now(), "the server's last stderr lines: " + " | ".join(tail[-8:])))
        self.outcomes.append(Outcome(check_id, verdict, summary, revision, lines))
        say = self.options.say
        if say is not None:
            say(f"{verdict:>4}  {self.outcomes[-1].key}: {summary}")

    def not_applicable(self, check_id: str, summary: str, *, era: Era | None = None) -> None:
        self.add(check_id, "n/a", summary, era=era)

    def eras_spoken(self) -> list[Era]:
        return [era for era in ("handshake", "stateless") if era in self.eras and era in self.options.eras]

    @property
    def loads_allowed(self) -> bool:
        return self.options.load if self.options.load is not None else self.target.loopback

    # ------------------------------------------------------------------ survey

    async def sign_in(self) -> None:
        """Over HTTP with a login (``Target.auth``): one request before any check, with no clock
        on its answer, so that a 401 is met by the person's login (a browser page) and not by a
        check's timeout. Whatever it gets back is the survey's to read, not this step's."""
        import httpx2

        if self.target.url is None or self.target.auth is None:
            return
        wire = self.wire("stateless")
        message = wire.request("server/discover")
        await wire.close()
        headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": wire.version,
            "mcp-method": "server/discover",
        }
        timeout = httpx2.Timeout(30, read=None)
        async with httpx2.AsyncClient(
            timeout=timeout, headers=dict(self.target.headers), auth=self.target.auth
        ) as http:
            try:
                await http.post(self.target.url, json=message, headers=headers)
            except httpx2.HTTPError as exc:
                self.notes.append(f"the first request, before the checks, failed: {type(exc).__name__}: {exc}")

    async def survey(self) -> None:
        """Find out which eras the server speaks and what it offers in each."""
        for era in ("stateless", "handshake"):
            if era not in self.options.eras:
                continue
            wire = self.wire(era, timeout=min(self.options.timeout, 8.0))
            self.probes[era] = wire
            try:
                await wire.start()
                info = await (self._probe_stateless(wire) if era == "stateless" else self._probe_handshake(wire))
            except OSError as exc:
                wire.note(f"could not start the server: {exc}")
                info = None
            finally:
                await wire.close()
                self.undecodable.extend((line, wire) for line in wire.undecodable)
            if info is not None:
                self.eras[era] = info

    async def _probe_stateless(self, wire: Wire) -> EraInfo | None:
        answer = await wire.ask("server/discover")
        result = answer.get("result") if answer is not None else None
        if not isinstance(result, dict) or not isinstance(result.get("capabilities"), dict):
            return None
        meta = obj(result.get("_meta"))
        server_info = meta.get("io.modelcontextprotocol/serverInfo") or result.get("serverInfo") or {}
        return await self._offer(wire, "stateless", wire.version, result["capabilities"], server_info)

    async def _probe_handshake(self, wire: Wire) -> EraInfo | None:
        answer = await wire.initialize()
        result = answer.get("result") if answer is not None else None
        if not isinstance(result, dict):
            return None
        capabilities = obj(result.get("capabilities"))
        server_info = obj(result.get("serverInfo"))
        return await self._offer(wire, "handshake", wire.version, capabilities, server_info)

    async def _offer(
        self, wire: Wire, era: Era, version: str, capabilities: dict[str, Any], server_info: dict[str, Any]
    ) -> EraInfo:
        tools = await self._every_page(wire, "tools/list", "tools") if "tools" in capabilities else []
        prompts = await self._every_page(wire, "prompts/list", "prompts") if "prompts" in capabilities else []
        templates = (
            await self._every_page(wire, "resources/templates/list", "resourceTemplates")
            if "resources" in capabilities
            else []
        )
        plan = Plan.of(tools, self.options.config)
        return EraInfo(era, version, capabilities, server_info, tools, prompts, templates, plan)

    async def _every_page(self, wire: Wire, method: str, key: str, pages: int = 20) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(pages):
            answer = await wire.ask(method, {"cursor": cursor} if cursor else None)
            result = answer.get("result") if answer is not None else None
            if not isinstance(result, dict):
                break
            items.extend(item for item in result.get(key) or [] if isinstance(item, dict))
            cursor = result.get("nextCursor") if isinstance(result.get("nextCursor"), str) else None
            if not cursor:
                break
        return items


def checks(check_id: str) -> Callable[[CheckFunction], CheckFunction]:
    """Mark a check function with the id its failures to connect are recorded under."""

    def mark(function: CheckFunction) -> CheckFunction:
        function.check_id = check_id  # type: ignore[attr-defined]
        return function

    return mark


def result_of(answer: dict[str, Any] | None) -> dict[str, Any] | None:
    """An answer's result, when it is one."""
    if answer is None:
        return None
    result = answer.get("result")
    return result if isinstance(result, dict) else None


def said(answer: dict[str, Any] | None) -> str:
    """An answer in a few words: ``a result``, ``error -32602 "..."``, ``no answer``."""
    if answer is None:
        return "no answer"
    if isinstance(answer.get("error"), dict):
        error = answer["error"]
        code = error_code(answer)
        if code is None and isinstance(error.get("data"), dict):
            return f"no answer from the server ({error.get('message')})"
        return f"error {error.get('code')} {str(error.get('message'))[:120]!r}"
    return "a result"


async def bounded(awaitable: Awaitable[Any], seconds: float) -> Any:
    """``awaitable``'s value, or None after ``seconds``."""
    try:
        return await asyncio.wait_for(awaitable, seconds)
    except TimeoutError:
        return None
