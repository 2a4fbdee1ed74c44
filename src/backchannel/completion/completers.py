"""Argument completion (``completion/complete``) for prompts and resource templates.

Attach a completer to an argument in one of two ways::

    @server.prompt()
    def code_review(
        language: Annotated[str, Complete(["python", "go", "rust"])],
        framework: Annotated[str, Complete(frameworks_for)],
    ) -> str: ...

    server.add_prompt(code_review, completers={"framework": frameworks_for})

(a completer passed at registration wins over the annotation). A completer is

* a static list of strings: it is indexed once (:class:`PrefixIndex`) and answered
  with the first ≤100 values *in list order* that start with what the user typed,
  plus the exact ``total``; or
* a callable ``(value, arguments) -> values`` (or just ``(value) -> values``), sync
  or async, where ``value`` is the text typed so far and ``arguments`` the values
  already chosen for the other arguments (``context.arguments``, ``{}`` when the
  client sent none). The callable filters and ranks; it may return a list (or any
  sized iterable), a generator or an async iterable, a :class:`PrefixIndex` result,
  or a ``Completion`` when it wants to set ``total``/``hasMore`` itself.
  ``Context.current()`` gives it the request's context.

Whatever a completer returns, the runtime sends at most 100 values and sets
``hasMore`` truthfully. ``total`` is sent when it is known: the ``len`` of a sized
result, or the count of a generator that ran out within 101 items. A generator is
advanced at most 101 times (one past the cap, to learn whether there is more) and
then closed, so an endless one is fine; ``hasMore`` is then true and ``total`` absent.
"""

from __future__ import annotations

__all__ = [
    "MAX_VALUES",
    "ArgumentCompleter",
    "Complete",
    "Completer",
    "CompleterLike",
    "Matches",
    "PrefixIndex",
    "Unfinished",
    "complete_from",
    "completers_for",
]

import inspect
from collections.abc import AsyncIterable, Awaitable, Callable, Iterable, Mapping, Sequence, Sized
from dataclasses import dataclass
from itertools import islice
from typing import Annotated, Any, Protocol, TypeAlias, get_args, get_origin

from ..signatures.signature import type_hints
from ..types.completion import Completion
from .prefix_index import MAX_VALUES, Matches, PrefixIndex, complete_from

#: What a completer may return (or an awaitable of it).
CompleterResult: TypeAlias = Iterable[str] | AsyncIterable[str] | Matches | Completion


class Completer(Protocol):
    """A callable completer: the text typed so far and the other arguments' chosen values."""

    def __call__(
        self, value: str, arguments: dict[str, str], /
    ) -> CompleterResult | Awaitable[CompleterResult]: ...  # pragma: no cover


#: Anything accepted where a completer is expected: a ``Completer``, a one-argument
#: callable ``(value) -> ...``, a static sequence of strings, or a ``PrefixIndex``.
CompleterLike: TypeAlias = Completer | Callable[[str], Any] | Sequence[str] | PrefixIndex


@dataclass(frozen=True, slots=True)
class Complete:
    """Annotation marker: ``Annotated[str, Complete(["python", "go"])]`` or ``Complete(fn)``.

    Put it on a prompt parameter or a resource template variable. ``case_sensitive``
    applies to a static list only.
    """

    completer: CompleterLike
    case_sensitive: bool = True

    def bind(self) -> ArgumentCompleter:
        """The ``ArgumentCompleter`` this marker stands for; the server calls this once, when it registers the
        prompt or template."""
        return ArgumentCompleter.of(self.completer, case_sensitive=self.case_sensitive)


class ArgumentCompleter:
    """One argument's completer, prepared at registration; ``await complete(...)`` gives the wire dict.

    A ``synchronous`` one (a static list, or a callable that is not ``async``) can also answer
    with ``complete_now``, in the read loop's turn (``Server.answer_now``)."""

    __slots__ = ("_fn", "_index", "_pass_arguments", "synchronous")

    def __init__(
        self, *, index: PrefixIndex | None = None, fn: Callable[..., Any] | None = None, pass_arguments: bool = True
    ) -> None:
        self._index = index
        self._fn = fn
        self._pass_arguments = pass_arguments
        #: True when ``complete_now`` can answer without awaiting; a callable that turns out
        #: to return something to await (registration could not tell) sets it False.
        self.synchronous = fn is None or not _is_async(fn)

    @classmethod
    def of(cls, completer: CompleterLike | ArgumentCompleter, *, case_sensitive: bool = True) -> ArgumentCompleter:
        if isinstance(completer, ArgumentCompleter):
            return completer
        if isinstance(completer, Complete):
            return completer.bind()
        if isinstance(completer, PrefixIndex):
            return cls(index=completer)
        if isinstance(completer, str):
            raise TypeError(f"a completer cannot be one string ({completer!r}); use a list of strings")
        if callable(completer):
            return cls(fn=completer, pass_arguments=_takes_arguments(completer))
        if isinstance(completer, Iterable):
            return cls(index=PrefixIndex(completer, case_sensitive=case_sensitive))
        raise TypeError(f"not a completer: {completer!r} (want a list of strings or a callable)")

    async def complete(self, value: str, arguments: dict[str, str]) -> dict[str, Any]:
        """The ``completion`` object of a ``CompleteResult``: ≤100 values, ``total``?, ``hasMore``."""
        if self._index is not None:
            return _matches(self._index.lookup(value))
        result = self._call(value, arguments)
        if inspect.isawaitable(result):
            result = await result
        return await _capped(result)

    def complete_now(self, value: str, arguments: dict[str, str]) -> dict[str, Any] | Unfinished:
        """``complete`` without awaiting, for a ``synchronous`` completer. When the callable
        returns something to await after all, that is ``Unfinished``: ``await finish()`` it
        (the completer is not called again), and from now on it is not ``synchronous``."""
        if self._index is not None:
            return _matches(self._index.lookup(value))
        result = self._call(value, arguments)
        if not inspect.isawaitable(result):
            answer = _capped_now(result)
            if answer is not None:
                return answer
        self.synchronous = False
        return Unfinished(result)

    def _call(self, value: str, arguments: dict[str, str]) -> Any:
        assert self._fn is not None
        return self._fn(value, arguments) if self._pass_arguments else self._fn(value)


class Unfinished:
    """What a completer taken for synchronous returned that must be awaited (a coroutine, an
    async iterable); ``await finish()`` gives the ``completion`` object ``complete`` would have."""

    __slots__ = ("result",)

    def __init__(self, result: Any) -> None:
        self.result = result

    async def finish(self) -> dict[str, Any]:
        result = self.result
        if inspect.isawaitable(result):
            result = await result
        return await _capped(result)


def _is_async(fn: Callable[..., Any]) -> bool:
    """Whether calling ``fn`` gives something to await: an ``async def`` or async generator
    function, also as a bound method, a ``functools.partial`` or an object's ``__call__``."""
    for candidate in (fn, getattr(fn, "__call__", None)):  # noqa: B004 - the method itself is inspected
        if inspect.iscoroutinefunction(candidate) or inspect.isasyncgenfunction(candidate):
            return True
    return False


def _takes_arguments(fn: Callable[..., Any]) -> bool:
    """True for ``(value, arguments)``, False for ``(value)``; raises for neither."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return True
    positional = 0
    for parameter in signature.parameters.values():
        if parameter.kind is parameter.VAR_POSITIONAL:
            return True
        if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            positional += 1
    if positional == 0:
        raise TypeError(f"completer {fn!r} must take the typed value: (value) or (value, arguments)")
    return positional >= 2


def _matches(found: Matches) -> dict[str, Any]:
    return {"values": found.values, "total": found.total, "hasMore": found.has_more}


async def _capped(result: Any) -> dict[str, Any]:
    """Any completer result as a wire ``completion``, building no more than 101 values."""
    answer = _capped_now(result)
    if answer is not None:
        return answer
    iterator = aiter(result)
    items: list[Any] = []
    try:
        async for item in iterator:
            items.append(item)
            if len(items) > MAX_VALUES:
                break
    finally:
        closing = getattr(iterator, "aclose", None)
        if closing is not None:
            await closing()
    return _checked(_from_items(items))


def _capped_now(result: Any) -> dict[str, Any] | None:
    """``_capped`` for every result but an async iterable (None: iterate it with ``_capped``)."""
    if isinstance(result, Matches):
        if len(result.values) > MAX_VALUES:
            result = Matches(result.values[:MAX_VALUES], max(result.total, len(result.values)))
        return _checked(_matches(result))
    if isinstance(result, Completion):
        values = result.values[:MAX_VALUES]
        answer: dict[str, Any] = {"values": values}
        total = result.total
        if total is not None:
            total = max(total, len(result.values))
            answer["total"] = total
        more = bool(result.has_more) or len(result.values) > MAX_VALUES or (total is not None and total > len(values))
        answer["hasMore"] = more
        return _checked(answer)
    if isinstance(result, str | bytes) or result is None:
        raise TypeError(f"a completer must return an iterable of strings, not {type(result).__name__}")
    if isinstance(result, AsyncIterable):
        return None
    if isinstance(result, Sized) and isinstance(result, Iterable):
        total = len(result)
        values = result[:MAX_VALUES] if isinstance(result, list | tuple) else list(islice(result, MAX_VALUES))
        return _checked({"values": list(values), "total": total, "hasMore": total > len(values)})
    if isinstance(result, Iterable):
        iterator = iter(result)
        try:
            items = list(islice(iterator, MAX_VALUES + 1))
        finally:
            closing = getattr(iterator, "close", None)
            if closing is not None:
                closing()
        return _checked(_from_items(items))
    raise TypeError(f"a completer must return an iterable of strings, not {type(result).__name__}")


def _from_items(items: list[Any]) -> dict[str, Any]:
    if len(items) > MAX_VALUES:
        return {"values": items[:MAX_VALUES], "hasMore": True}
    return {"values": items, "total": len(items), "hasMore": False}


def _checked(answer: dict[str, Any]) -> dict[str, Any]:
    for value in answer["values"]:
        if not isinstance(value, str):
            raise TypeError(f"a completer returned a non-string value {value!r}")
    return answer


# -- registration -------------------------------------------------------------------------------


def completers_for(
    fn: Callable[..., Any],
    given: Mapping[str, CompleterLike] | None,
    arguments: Iterable[str],
    *,
    label: str,
) -> dict[str, ArgumentCompleter]:
    """The completers of ``fn``'s arguments: ``Complete`` annotations, then ``given`` on top.

    Raises ``ValueError`` when ``given`` names something that is not an argument, and
    ``TypeError`` for something that is not a completer."""
    names = set(arguments)
    found: dict[str, ArgumentCompleter] = {}
    for name, hint in type_hints(fn, label).items():
        markers = [item for item in _metadata(hint) if isinstance(item, Complete)]
        if len(markers) > 1:
            raise TypeError(f"{label}: argument {name!r} has more than one Complete(...) annotation")
        if markers and name in names:
            found[name] = markers[0].bind()
    for name, completer in (given or {}).items():
        if name not in names:
            known = ", ".join(sorted(names)) or "none"
            raise ValueError(f"{label}: completers names {name!r}, which is not one of its arguments ({known})")
        found[name] = ArgumentCompleter.of(completer)
    return found


def _metadata(hint: Any) -> tuple[Any, ...]:
    collected: tuple[Any, ...] = ()
    while get_origin(hint) is Annotated:
        base, *metadata = get_args(hint)
        collected += tuple(metadata)
        hint = base
    return collected
