"""``PrefixIndex``: a static list of strings indexed once, answering prefix lookups in list order.

The completer behind ``Complete(["python", "go"])`` and ``complete_from(values)``: a lookup costs
a binary search, not a scan, however long the list (see the class docstring for how).
"""

from __future__ import annotations

__all__ = ["MAX_VALUES", "Matches", "PrefixIndex", "complete_from"]

from array import array
from bisect import bisect_left
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from heapq import heappush, heapreplace
from itertools import pairwise

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
        self._keys: list[str] = keys
        self._order: array[int] | None = None
        # A list in order already (the common case) is its own index: no sort, no sorted copy, and
        # none of the int objects of a list of positions (0.4 MiB at the peak for 10,000 values).
        if not all(before <= after for before, after in pairwise(keys)):
            order = sorted(range(len(keys)), key=keys.__getitem__)  # stable: ties keep list order
            self._keys = [keys[i] for i in order]
            # Machine integers: a quarter of the memory of a list of ints for big lists.
            self._order = array("q", order)
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
