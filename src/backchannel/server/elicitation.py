"""``ctx.elicit``: ask the person a question with a form, in either era.

The answer is typed: ``accept`` with the content converted to the caller's type,
``decline`` or ``cancel``. Content that does not fit the form never reaches the
handler: the person is asked once more with the problem stated, and a second
misfit counts as ``cancel``. A form a person declined is not shown again by the
same tool (the same request target, the same schema, whatever the message says):
for the handshake-era session, and in the stateless era for the stdio connection
or the authenticated HTTP principal, up to the server's ``decline_ttl``. The
memory lives in the server's ``StateStore``. A result that a remembered decline
answered says so in ``_meta["dev.backchannel/rememberedDecline"]`` (the forms'
messages), so the client can tell the person; ``ctx.forget_decline()``, or a request
carrying ``_meta["dev.backchannel/forgetDeclines"]: true``, asks those forms again.
"""

from __future__ import annotations

__all__ = ["Declines", "Elicited", "elicit", "forget_decline"]

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

import msgspec

from ..forms.errors import FormContentError
from ..forms.specs import form_spec
from ..protocol.capabilities import has
from ..state.store import MemoryStore, slot_of
from ..telemetry import metrics
from ..types.errors import InvalidParams, MissingCapability, RequestTimeout
from ..types.meta import FORGET_DECLINES, REMEMBERED_DECLINE

if TYPE_CHECKING:
    from .context import Context

T = TypeVar("T")
Action = Literal["accept", "decline", "cancel"]


@dataclass(frozen=True, slots=True)
class Elicited(Generic[T]):
    """What the person did: ``data`` is set only when ``action == "accept"``."""

    action: Action
    data: T | None = None

    @property
    def accepted(self) -> bool:
        """Whether the person accepted: only then is ``data`` set."""
        return self.action == "accept"


_DECLINES_KEPT = 1_000  # declined forms remembered per scope; past that a decline is not remembered
_DECLINE_KEYS_KEPT = 256
_decline_keys: dict[tuple[str, str, str, str | None, int], tuple[dict[str, Any], tuple[str, str]]] = {}


def _decline_memory(ctx: Context, schema: dict[str, Any], decline_key: str | None) -> tuple[str, str] | None:
    """Where a decline of this form is remembered: (key, bucket), or None when there is no
    one to remember it for (an anonymous stateless-era HTTP caller is nobody in particular:
    one caller's decline must not silence the form for another)."""
    handshake = ctx.era == "handshake"
    scope = ctx.server.connection_scope(ctx.connection) if handshake else ctx.caller_scope(anonymous=None)
    if scope is None:
        return None
    params = ctx.request.params
    target = params.get("name", params.get("uri"))
    method = ctx.request.method
    target = target if isinstance(target, str) else ""
    # The same tool asks the same form of the same caller again and again: its two hashes are
    # kept, by the schema's identity (the schema is held, so that identity is not reused).
    known = (scope, method, target, decline_key, id(schema))
    kept = _decline_keys.get(known)
    if kept is not None and kept[0] is schema:
        return kept[1]
    import hashlib  # (OpenSSL's 0.6 MiB: loaded by a first form, not at start)

    form = [method, target, schema, decline_key]
    digest = hashlib.sha256(msgspec.json.encode(form, order="sorted")).hexdigest()
    slot = slot_of(scope)  # the caller's keys and their bucket on one Redis Cluster node
    memory = f"decline:{slot}:{digest}", f"decline:{slot}"
    if len(_decline_keys) >= _DECLINE_KEYS_KEPT:
        _decline_keys.clear()
    _decline_keys[known] = (schema, memory)
    return memory


# Whether this process ever wrote a decline: until then an in-process store holds none, and
# an ask need not look (8,000 of its 300,000 instructions). Another store may hold the
# declines of other processes (Redis), so it is always asked.
_declined_here = False


def _may_recall(ctx: Context) -> bool:
    return _declined_here or type(ctx.server.state) is not MemoryStore


@dataclass(slots=True)
class Declines:
    """A request's dealings with the decline memory (``Context.declines``, None until it has any)."""

    #: Ask every form again, forgetting its remembered decline (``ctx.forget_decline()``).
    forget: bool = False
    #: The messages of the forms a remembered decline answered, in the order asked.
    recalled: list[str] = field(default_factory=list)

    def marked(self, result: dict[str, Any]) -> dict[str, Any]:
        """``result`` with ``_meta["dev.backchannel/rememberedDecline"]`` when a remembered decline
        answered a form of this request (the input is not modified)."""
        if not self.recalled:
            return result
        meta = result.get("_meta")
        return {**result, "_meta": {**(meta if isinstance(meta, dict) else {}), REMEMBERED_DECLINE: self.recalled}}


def forget_decline(ctx: Context) -> None:
    """Show again the forms this request asks from now on, even one the person declined before,
    and forget those declines (a new decline is remembered again). ``ctx.elicit`` remembers a
    decline for the server's ``decline_ttl``; a client asks for the same by sending
    ``_meta["dev.backchannel/forgetDeclines"]: true`` with its request (the terminal's ``forget``)."""
    if ctx.declines is None:
        ctx.declines = Declines()
    ctx.declines.forget = True


def _forgetting(ctx: Context) -> bool:
    if ctx.declines is not None and ctx.declines.forget:
        return True
    meta = ctx.request.params.get("_meta")
    return isinstance(meta, dict) and meta.get(FORGET_DECLINES) is True


def _recalled(ctx: Context, message: str) -> None:
    if ctx.declines is None:
        ctx.declines = Declines()
    ctx.declines.recalled.append(message)


async def _remember_decline(ctx: Context, memory: tuple[str, str]) -> None:
    global _declined_here
    _declined_here = True
    key, bucket = memory
    # "full" only means this decline is not remembered: the person may be asked again.
    await ctx.server.state.add(key, {"declined": True}, ttl=ctx.server.decline_ttl, bucket=bucket, limit=_DECLINES_KEPT)


async def elicit(
    ctx: Context,
    message: str,
    schema: Any,
    *,
    timeout: float | None = None,
    fallback: Callable[[], Awaitable[Elicited[Any]] | Elicited[Any]] | None = None,
    remember_decline: bool = True,
    key: str | None = None,
    decline_key: str | None = None,
) -> Elicited[Any]:
    """Ask the person to fill in a form described by ``schema`` (a dataclass,
    TypedDict, pydantic model or a flat JSON-Schema dict).

    Returns ``Elicited(action, data)``: ``data`` is an instance of ``schema``
    when accepted. Raises ``MissingCapability`` when the client cannot show
    forms, unless ``fallback`` is given, which then runs instead. ``timeout``
    (default: the server's ``elicitation_timeout``, 10 minutes) cancels the
    question on the wire and reads as ``cancel``. ``key`` names the question in a
    stateless-era ``inputRequests`` (default: numbered in the order asked).

    After a decline, the same form is not shown again: this tool (or prompt, or
    resource) asking with this schema reads as ``decline`` without asking, whatever
    the message says, for the server's ``decline_ttl`` (1 hour by default), and the
    result carries ``_meta["dev.backchannel/rememberedDecline"]`` so the client can
    say why. The memory is kept per handshake-era session; in the stateless era per
    stdio connection and per authenticated HTTP principal (an anonymous HTTP caller
    is always asked). ``decline_key`` makes it finer (declines are remembered per
    distinct value); ``remember_decline=False`` neither reads nor writes it;
    ``ctx.forget_decline()`` (or the client's ``_meta["dev.backchannel/forgetDeclines"]``)
    asks again and forgets the decline.
    """
    spec = form_spec(schema)
    requested = spec.requested_schema
    if not has(ctx.client_capabilities, "elicitation.form"):
        if fallback is None:
            raise MissingCapability("elicitation.form", "the client cannot show forms (no elicitation capability)")
        outcome = fallback()
        return await outcome if not isinstance(outcome, Elicited) else outcome
    memory = _decline_memory(ctx, requested, decline_key) if remember_decline and _may_recall(ctx) else None
    if memory is not None:
        if _forgetting(ctx):
            await ctx.server.state.delete(memory[0])
        elif await ctx.server.state.get(memory[0]) is not None:
            if ctx.round is not None:
                ctx.round.next_key("elicitation/create", key)  # later questions keep the keys of their first run
            _recalled(ctx, message)  # the result says so (``Declines.marked``)
            return Elicited("decline")
    wait = timeout if timeout is not None else ctx.server.elicitation_timeout
    text = message
    for attempt in (1, 2):
        params = {"mode": "form", "message": text, "requestedSchema": requested}
        asked = _asked_now(ctx)
        try:
            question = key if key is None or attempt == 1 else f"{key}#{attempt}"
            answer = await ctx.request_input(
                "elicitation/create", params, "elicitation.form", timeout=wait, key=question
            )
        except RequestTimeout:
            _answered(asked, "cancel")
            return Elicited("cancel")  # the outstanding question was cancelled on the wire
        action = answer.get("action")
        _answered(asked, action)
        if action == "decline":
            if memory is None and remember_decline:
                memory = _decline_memory(ctx, requested, decline_key)
            if memory is not None:
                await _remember_decline(ctx, memory)
            return Elicited("decline")
        if action == "cancel":
            return Elicited("cancel")
        if action != "accept":
            raise InvalidParams(f"elicitation answer has an unknown action {action!r}")
        try:
            return Elicited("accept", spec.parse(answer.get("content") or {}))
        except FormContentError as exc:
            if attempt == 2:
                return Elicited("cancel")
            text = f"{message}\n\nPlease correct: {'; '.join(exc.problems)}"
    raise AssertionError("unreachable")  # pragma: no cover


def _asked_now(ctx: Context) -> float | None:
    """When a question put to the person now is sent, if metrics are on and it is a live one
    (handshake era, or through a task). A stateless-era round's question is timed by the
    rounds themselves (``Round.input_required`` and ``Round.answer``): the answer arrives in
    a later request."""
    if metrics.instruments() is None:
        return None
    if ctx.round is not None and (ctx.task is None or not ctx.task.begun):
        return None
    return time.monotonic()


def _answered(asked: float | None, action: Any) -> None:
    if asked is not None:
        metrics.elicitation_answered("form", action, time.monotonic() - asked)
