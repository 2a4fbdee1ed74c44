"""``completion/complete``: find the prompt or template argument asked about and run its completer,
for callers that keep within the rate limit.

The completers themselves are made at registration (``backchannel/completion/``); this is the request's side.
"""

from __future__ import annotations

__all__ = ["CompletionLimit", "complete_now", "handle_complete"]

import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..completion.completers import ArgumentCompleter, Unfinished
from ..runtime.ratelimit import KeyedBuckets
from ..types.errors import InvalidParams, RateLimited
from .options import CompletionOptions
from .prompts import RegisteredPrompt

if TYPE_CHECKING:
    from .context import Context
    from .resources import RegisteredResource, RegisteredTemplate


class CompletionLimit:
    """The rate limit on ``completion/complete`` (``Server(completion_rate=, completion_burst=)``):
    ``check(context)`` before serving one; it raises ``RateLimited`` for a caller over the limit.

    Who counts as one caller (the spec says to rate-limit completion, not by what):

    * handshake era: the connection, i.e. one stdio process or one HTTP session;
    * stateless era: the authenticated principal, since every HTTP request is a connection of its
      own (SEP-2567 points rate limits at the principal); over stdio and memory, which carry one
      client, the connection; HTTP callers without a principal share one bucket. Their address
      would tell them apart only until a proxy or a NAT stands in front, which is where stateless
      servers run: a server that wants fairness between people names them with an authenticator.

    Buckets live in this process: several workers each allow the rate.
    """

    def __init__(self, options: CompletionOptions, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.options = options
        self._buckets = None if options.rate is None else KeyedBuckets(options.rate, options.burst, clock=clock)

    def check(self, context: Context) -> None:
        """Count one request of the caller of ``context``; ``RateLimited`` (-31429) when over the limit."""
        buckets = self._buckets
        if buckets is None:
            return
        key, caller = _caller(context)
        bucket = buckets.bucket(key)
        if bucket.allow():
            return
        wait_ms = math.ceil(bucket.retry_after() * 1000)
        raise RateLimited(
            f"completion/complete is limited to {buckets.rate:g} requests a second (bursts of {buckets.burst:g}) "
            f"per {caller}; try again in {wait_ms} ms",
            data={"retryAfterMs": wait_ms, "rate": buckets.rate, "burst": buckets.burst, "per": caller},
        )


def _caller(context: Context) -> tuple[str, str]:
    """The bucket's key for ``context``'s caller, and what kind of caller that is (for the message)."""
    if context.era == "handshake":
        return context.server.connection_scope(context.connection) or "anonymous", "connection"
    scope = context.caller_scope(anonymous="anonymous") or "anonymous"
    if context.principal is not None:
        return scope, "principal"
    if scope == "anonymous":
        return scope, "anonymous HTTP caller (all of them together)"
    return scope, "connection"


async def handle_complete(
    params: dict[str, Any],
    prompts: Mapping[str, RegisteredPrompt],
    templates: Sequence[RegisteredTemplate],
    resources: Mapping[str, RegisteredResource],
    admit: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Validate a ``completion/complete`` request and run the argument's completer.

    Unknown prompt, template or argument: ``InvalidParams`` naming it. A known
    argument with no completer gets an empty answer. ``admit()`` is called once the request
    is known to be well formed, before any completer runs (the rate limit: a malformed
    request is answered for what it is, and only a real question counts against the caller)."""
    unfinished = _unfinished.pop(id(params), None)
    if unfinished is not None and unfinished[0] is params:  # ``complete_now`` admitted it and ran its completer
        return {"completion": await unfinished[1].finish()}
    completer, value, arguments = _completer_for(params, prompts, templates, resources)
    if admit is not None:
        admit()
    if completer is None:
        return {"completion": {"values": [], "total": 0, "hasMore": False}}
    return {"completion": await completer.complete(value, arguments)}


def complete_now(
    params: dict[str, Any],
    prompts: Mapping[str, RegisteredPrompt],
    templates: Sequence[RegisteredTemplate],
    resources: Mapping[str, RegisteredResource],
    admit: Callable[[], None] | None,
    completing: Callable[[], bool],
) -> dict[str, Any] | None:
    """``handle_complete`` without awaiting, when the argument's completer is synchronous (a
    static list, a plain function): the same answer, the same errors, ``admit`` called at the same
    point. None when it is not, or when nothing completes (``completing()`` False: the route
    answers -32601 for that): ``await handle_complete`` with the same ``params`` instead. (When a
    completer taken for synchronous returns something to await, ``handle_complete`` finishes that,
    without running the completer or counting the request again.)

    ``completing()`` is asked only when no completer was found: a completer found is one."""
    try:
        completer, value, arguments = _completer_for(params, prompts, templates, resources)
    except InvalidParams:
        if not completing():
            return None  # the route says -32601 first
        raise
    if completer is None:
        if not completing():
            return None
        if admit is not None:
            admit()
        return {"completion": {"values": [], "total": 0, "hasMore": False}}
    if not completer.synchronous:
        return None
    if admit is not None:
        admit()
    answer = completer.complete_now(value, arguments)
    if isinstance(answer, Unfinished):
        if len(_unfinished) >= _UNFINISHED_KEPT:  # requests cancelled before their task began
            _unfinished.clear()
        _unfinished[id(params)] = (params, answer)
        return None
    return {"completion": answer}


#: The results ``complete_now`` could not finish, by their request's ``params`` (held, so their id is
#: not reused), until that request's task picks them up. Each completer gets here once at most: after
#: that it is no longer taken for synchronous.
_unfinished: dict[int, tuple[dict[str, Any], Unfinished]] = {}
_UNFINISHED_KEPT = 256


def _completer_for(
    params: dict[str, Any],
    prompts: Mapping[str, RegisteredPrompt],
    templates: Sequence[RegisteredTemplate],
    resources: Mapping[str, RegisteredResource],
) -> tuple[ArgumentCompleter | None, str, dict[str, str]]:
    """The completer ``params`` asks for (None: a known argument without one), the value typed
    and the other arguments; ``InvalidParams`` for a malformed request or an unknown name."""
    ref, name, value, arguments = _validated(params)
    completers: dict[str, ArgumentCompleter]
    if ref["type"] == "ref/prompt":
        prompt_name = ref["name"]
        prompt = prompts.get(prompt_name)
        if prompt is None:
            raise InvalidParams(f"completion/complete: unknown prompt {prompt_name!r}", data={"name": prompt_name})
        completers, known, what = prompt.completers, prompt.parameters.input_schema["properties"], "prompt"
    else:
        uri = ref["uri"]
        template = next((t for t in templates if str(t.template) == uri), None)
        if template is not None:
            completers, known, what = template.completers, template.template.variables, "resource template"
        elif uri in resources:
            completers, known, what = {}, (), "resource"
        else:
            raise InvalidParams(f"completion/complete: unknown resource template {uri!r}", data={"uri": uri})
    completer = completers.get(name)
    if completer is None and name not in known:
        prompt_ref = what == "prompt"
        label = f"{what} {ref['name'] if prompt_ref else ref['uri']!r}"  # (built only for the error)
        raise InvalidParams(
            f"completion/complete: {label} has no argument {name!r}",
            data={"prompt" if prompt_ref else "template": ref, "argument": name},
        )
    return completer, value, arguments


def _validated(params: dict[str, Any]) -> tuple[dict[str, Any], str, str, dict[str, str]]:
    ref = params.get("ref")
    if not isinstance(ref, dict):
        raise InvalidParams("completion/complete: params.ref must be an object")
    kind = ref.get("type")
    if kind == "ref/prompt":
        if not isinstance(ref.get("name"), str):
            raise InvalidParams("completion/complete: a ref/prompt needs a string name")
    elif kind == "ref/resource":
        if not isinstance(ref.get("uri"), str):
            raise InvalidParams("completion/complete: a ref/resource needs a string uri")
    else:
        raise InvalidParams(f"completion/complete: ref.type must be 'ref/prompt' or 'ref/resource', not {kind!r}")
    argument = params.get("argument")
    if not isinstance(argument, dict) or not isinstance(argument.get("name"), str):
        raise InvalidParams("completion/complete: params.argument must be an object with a string name")
    value = argument.get("value")
    if not isinstance(value, str):
        raise InvalidParams("completion/complete: params.argument.value must be a string")
    context = params.get("context")
    arguments: Any = {}
    if context is not None:
        if not isinstance(context, dict):
            raise InvalidParams("completion/complete: params.context must be an object")
        arguments = context.get("arguments")
        if arguments is None:
            arguments = {}
        elif not isinstance(arguments, dict) or not all(isinstance(v, str) for v in arguments.values()):
            raise InvalidParams("completion/complete: params.context.arguments must map names to strings")
    return ref, argument["name"], value, dict(arguments)
