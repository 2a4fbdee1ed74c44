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
    "complete_from",
    "completers_for",
    "handle_complete",
]

import inspect
from array import array
from bisect import bisect_left
from collections.abc import (
    AsyncIterable,
    Awaitable,
    Callable,
    Iterable,
    Mapping,
    Sequence,
    Sized,
)
from dataclasses import dataclass
from heapq import heappush, heapreplace
from itertools import islice
from typing import TYPE_CHECKING, Annotated, Any, Protocol, TypeAlias, get_args, get_origin

from ..types.completion import Completion
from ..types.errors import InvalidParams
from .signature import _type_hints

if TYPE_CHECKING:
    from .prompts import RegisteredPrompt
    from .resources import RegisteredResource, RegisteredTemplate

#: The most values one ``completion/complete`` answer may carry (schema: ``values`` ≤ 100).
MAX_VALUES = 100


@dataclass(frozen=True, slots=True)
class Matches:
    """A prefix lookup's answer: the first values in list order and how many matched."""

    values: list[str]
    total: int

    @property
    def has_more(self) -> bool:
        return self.total > len(self.values)


#: What a completer may return (or an awaitable of it).
CompleterResult: TypeAlias = Iterable[str] | AsyncIterable[str] | Matches | Completion


class Completer(Protocol):
    """A callable completer: the text typed so far and the other arguments' chosen values."""

    def __call__(
        self, value: str, arguments: dict[str, str], /
    ) -> CompleterResult | Awaitable[CompleterResult]: ...  # pragma: no cover


#: Anything accepted where a completer is expected: a ``Completer``, a one-argument
#: callable ``(value) -> ...``, a static sequence of strings, or a ``PrefixIndex``.
CompleterLike: TypeAlias = "Completer | Callable[[str], Any] | Sequence[str] | PrefixIndex"


class PrefixIndex:
    """A static list of strings indexed once for prefix lookups.

    ``lookup(prefix)`` answers with the first ``limit`` (≤100) values *in list order*
    that start with ``prefix`` and the number of all matches, without touching the
    other matches. The values are sorted once (stably, so duplicates keep list
    order); two binary searches give the range of sorted positions holding the
    matches, and its length is ``total``.

    * A list that is already sorted needs nothing more: the range *is* the answer (a slice).
    * Otherwise the answer is the ``limit`` smallest original positions in the range.
      A range of at most ``SORT_BELOW`` positions is sorted outright. Every larger
      range is a node of the compressed trie of the values (a prefix lands on a node
      or on the edge above it, which has the same range); those nodes are found when
      the index is built and their first 100 values stored, merged bottom-up from
      their children, so a short prefix over a big list is a dictionary lookup. At
      most ``MAX_STORED`` nodes are stored (a bound on memory for pathological lists
      such as ``a, aa, aaa, ...``); a range past it is sorted at lookup time.

    ``case_sensitive=False`` compares ``str.casefold()`` forms; the original values
    are returned.
    """

    __slots__ = ("_case_sensitive", "_keys", "_order", "_stored", "_values")

    SORT_BELOW = 256
    MAX_STORED = 4096

    def __init__(self, values: Iterable[str], *, case_sensitive: bool = True) -> None:
        if isinstance(values, str):
            raise TypeError("a completion list must be a sequence of strings, not one string")
        self._values: list[str] = list(values)
        for value in self._values:
            if not isinstance(value, str):
                raise TypeError(f"completion values must be strings; got {value!r}")
        self._case_sensitive = case_sensitive
        keys = self._values if case_sensitive else [value.casefold() for value in self._values]
        order = sorted(range(len(keys)), key=keys.__getitem__)  # stable: ties keep list order
        self._keys: list[str] = [keys[i] for i in order]
        identity = all(i == position for position, i in enumerate(order))
        # Machine integers: a quarter of the memory of a list of ints for big lists.
        self._order: array[int] | None = None if identity else array("q", order)
        del order
        self._stored: dict[tuple[int, int], list[str]] = {}
        if self._order is not None and len(self._order) > self.SORT_BELOW:
            self._store_large_ranges()

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"PrefixIndex({len(self._values)} values, case_sensitive={self._case_sensitive})"

    def __call__(self, value: str, arguments: Mapping[str, str] | None = None) -> Matches:
        """A ``PrefixIndex`` is itself a completer (the context is not needed)."""
        return self.lookup(value)

    def lookup(self, prefix: str, limit: int = MAX_VALUES) -> Matches:
        """The first ``limit`` values in list order that start with ``prefix``, and the match count."""
        if not self._case_sensitive:
            prefix = prefix.casefold()
        keys = self._keys
        lo, hi = _prefix_range(keys, prefix, 0, len(keys))
        total = hi - lo
        values = self._values
        order = self._order
        if order is None:
            return Matches(values[lo : min(hi, lo + limit)], total)
        if total > self.SORT_BELOW and limit <= MAX_VALUES:
            stored = self._stored.get((lo, hi))
            if stored is not None:
                return Matches(stored[:limit], total)
        return Matches([values[i] for i in sorted(order[lo:hi])[:limit]], total)

    def _store_large_ranges(self) -> None:
        """Store the first 100 values of every trie node larger than ``SORT_BELOW`` (post-order)."""
        keys, order, values = self._keys, self._order, self._values
        assert order is not None
        firsts: dict[tuple[int, int], list[int]] = {}
        # (lo, hi, depth known shared, children done?): an explicit stack, since tries can be deep.
        stack: list[tuple[int, int, int, bool]] = [(0, len(keys), 0, False)]
        children_of: dict[tuple[int, int], list[tuple[int, int]]] = {}
        kept: list[tuple[int, int, int, list[int]]] = []
        while stack:
            lo, hi, depth, expanded = stack.pop()
            if expanded:
                parts: list[int] = []
                for child in children_of.pop((lo, hi)):
                    if child in firsts:
                        parts.extend(firsts.pop(child))
                    else:
                        parts.extend(sorted(order[child[0] : child[1]])[:MAX_VALUES])
                parts.sort()
                top = parts[:MAX_VALUES]
                firsts[(lo, hi)] = top
                # Keep the MAX_STORED largest ranges: those are the costly ones to sort.
                if len(kept) < self.MAX_STORED:
                    heappush(kept, (hi - lo, lo, hi, top))
                elif hi - lo > kept[0][0]:
                    heapreplace(kept, (hi - lo, lo, hi, top))
                continue
            depth = _shared_length(keys[lo], keys[hi - 1], depth)
            # Keys equal to the shared prefix come first (they are sorted with the merge, never
            # a node of their own); then one child node per next character.
            start = lo
            while start < hi and len(keys[start]) == depth:
                start += 1
            children: list[tuple[int, int]] = [(lo, start)] if start > lo else []
            stack.append((lo, hi, depth, True))
            while start < hi:
                successor = _successor(keys[start][: depth + 1])
                stop = hi if successor is None else bisect_left(keys, successor, start, hi)
                children.append((start, stop))
                if stop - start > self.SORT_BELOW:
                    stack.append((start, stop, depth + 1, False))
                start = stop
            children_of[(lo, hi)] = children
        self._stored = {(lo, hi): [values[i] for i in top] for _, lo, hi, top in kept}


def _prefix_range(keys: list[str], prefix: str, lo: int, hi: int) -> tuple[int, int]:
    """The positions of the sorted ``keys[lo:hi]`` that start with ``prefix``."""
    if not prefix:
        return lo, hi
    lo = bisect_left(keys, prefix, lo, hi)
    successor = _successor(prefix)
    return lo, (hi if successor is None else bisect_left(keys, successor, lo, hi))


def _shared_length(first: str, last: str, start: int) -> int:
    """The length of the common prefix of ``first`` and ``last``, known to be at least ``start``."""
    end = min(len(first), len(last))
    while start < end and first[start] == last[start]:
        start += 1
    return start


def _successor(prefix: str) -> str | None:
    """The least string above every string that starts with ``prefix`` (None: no bound)."""
    while prefix:
        last = ord(prefix[-1])
        if last < 0x10FFFF:
            return prefix[:-1] + chr(last + 1)
        prefix = prefix[:-1]
    return None


def complete_from(values: Iterable[str], *, case_sensitive: bool = True) -> PrefixIndex:
    """A completer over a static list: ``PrefixIndex(values)`` (built once, here)."""
    return PrefixIndex(values, case_sensitive=case_sensitive)


@dataclass(frozen=True, slots=True)
class Complete:
    """Annotation marker: ``Annotated[str, Complete(["python", "go"])]`` or ``Complete(fn)``.

    Put it on a prompt parameter or a resource template variable. ``case_sensitive``
    applies to a static list only.
    """

    completer: CompleterLike
    case_sensitive: bool = True

    def bind(self) -> ArgumentCompleter:
        return ArgumentCompleter.of(self.completer, case_sensitive=self.case_sensitive)


class ArgumentCompleter:
    """One argument's completer, prepared at registration; ``await complete(...)`` gives the wire dict."""

    __slots__ = ("_fn", "_index", "_pass_arguments")

    def __init__(
        self, *, index: PrefixIndex | None = None, fn: Callable[..., Any] | None = None, pass_arguments: bool = True
    ) -> None:
        self._index = index
        self._fn = fn
        self._pass_arguments = pass_arguments

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
        assert self._fn is not None
        result = self._fn(value, arguments) if self._pass_arguments else self._fn(value)
        if inspect.isawaitable(result):
            result = await result
        return await _capped(result)


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
    if isinstance(result, Sized) and isinstance(result, Iterable):
        total = len(result)
        values = result[:MAX_VALUES] if isinstance(result, list | tuple) else list(islice(result, MAX_VALUES))
        return _checked({"values": list(values), "total": total, "hasMore": total > len(values)})
    if isinstance(result, Iterable):
        iterator_ = iter(result)
        try:
            items = list(islice(iterator_, MAX_VALUES + 1))
        finally:
            closing_ = getattr(iterator_, "close", None)
            if closing_ is not None:
                closing_()
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
    for name, hint in _type_hints(fn, label).items():
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


# -- the request --------------------------------------------------------------------------------


async def handle_complete(
    params: dict[str, Any],
    prompts: Mapping[str, RegisteredPrompt],
    templates: Sequence[RegisteredTemplate],
    resources: Mapping[str, RegisteredResource],
) -> dict[str, Any]:
    """Validate a ``completion/complete`` request and run the argument's completer.

    Unknown prompt, template or argument: ``InvalidParams`` naming it. A known
    argument with no completer gets an empty answer."""
    ref, name, value, arguments = _validated(params)
    completers: dict[str, ArgumentCompleter]
    if ref["type"] == "ref/prompt":
        prompt_name = ref["name"]
        prompt = prompts.get(prompt_name)
        if prompt is None:
            raise InvalidParams(f"completion/complete: unknown prompt {prompt_name!r}", data={"name": prompt_name})
        completers, known, what = prompt.completers, prompt.parameters.input_schema["properties"], "prompt"
        label = f"prompt {prompt_name!r}"
    else:
        uri = ref["uri"]
        template = next((t for t in templates if str(t.template) == uri), None)
        if template is not None:
            completers, known, label = template.completers, template.template.variables, f"resource template {uri!r}"
        elif uri in resources:
            completers, known, label = {}, (), f"resource {uri!r}"
        else:
            raise InvalidParams(f"completion/complete: unknown resource template {uri!r}", data={"uri": uri})
        what = "template"
    completer = completers.get(name)
    if completer is None:
        if name not in known:
            raise InvalidParams(
                f"completion/complete: {label} has no argument {name!r}", data={what: ref, "argument": name}
            )
        return {"completion": {"values": [], "total": 0, "hasMore": False}}
    return {"completion": await completer.complete(value, arguments)}


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
