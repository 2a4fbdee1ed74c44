"""Progress for sub-tasks that run at once, folded into one stream that only goes up.

One ``progressToken`` carries one line of progress (chapter 18.9 Q4), and its values MUST
increase. A tool that runs its sub-tasks concurrently hands each a ``ProgressPart``; the
parts report on their own scale, in any order, and the client sees one stream:

    async with ctx.progress_parts(total=100) as parts:
        download = parts.add("download", weight=3)     # three quarters of the bar
        index = parts.add("index")                     # one quarter
        parts.all_added()                              # from here on the client sees total=100
        async with asyncio.TaskGroup() as group:
            group.create_task(fetch(download))         # await download.advance(4096, of=size)
            group.create_task(build(index))            # await index.update(7, of=10)
    # leaving the block finishes every part: the last value sent is exactly 100

What the client sees, and why it can be trusted:

- **Only increases.** A value that would not increase is not sent (its message with it).
  When the estimate falls (a part joins, a part learns it is bigger than it looked), the
  stream holds where it is and maps the work left onto the room left, so it never goes back.
- **Ends at the total.** Leaving the ``async with`` block normally (or ``await
  parts.finish()``) finishes every part and sends ``total``, unless it was sent already.
  Leaving it with an exception sends nothing more.
- **A total that is unknown at first.** Parts may be added while others run. Until
  ``all_added()`` (or a list of parts given up front: ``ctx.progress_parts({"download": 3,
  "index": 1})``), the notifications carry no ``total``, and the unknown rest of the work
  keeps the value short of the end.
- **A part whose own size is unknown.** ``advance``/``update`` without ``of`` move the part a
  tenth of the way towards half done each time; when ``of`` arrives, the real fraction
  takes over.
- **Messages say which part moved:** ``"download 4096/10000"``, ``"index: parsing"`` (a
  message of yours), ``"download done (1 of 2 parts)"``.

Use one progress reporter per request (not this and ``ctx.report_progress`` together), from
the event loop's tasks (not from threads).
"""

from __future__ import annotations

__all__ = ["ProgressPart", "ProgressParts"]

import asyncio
import math
from collections.abc import Iterator, Mapping, Sequence
from types import TracebackType
from typing import Protocol

# A part of unknown size moves this share of the way towards _GUESS with each update.
_STEP = 0.1
_GUESS = 0.5


class _Reporter(Protocol):
    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None: ...


class ProgressPart:
    """One sub-task's progress, on its own scale: ``done`` out of ``of`` (None: not known yet).

    Made by ``ProgressParts.add``; hand it to the sub-task, which awaits its methods.
    """

    __slots__ = ("_owner", "_updates", "done", "finished", "name", "of", "weight")

    def __init__(self, owner: ProgressParts, name: str, weight: float, of: float | None) -> None:
        self._owner = owner
        self.name = name
        self.weight = weight
        self.done = 0.0
        self.of = of
        self.finished = False
        self._updates = 0

    def __repr__(self) -> str:
        return f"ProgressPart({self.name!r}, done={self.done:g}, of={self.of!r}, finished={self.finished})"

    @property
    def fraction(self) -> float:
        """How much of this part is done, 0 to 1 (an estimate while ``of`` is unknown)."""
        if self.finished:
            return 1.0
        if self.of is not None:
            return min(self.done / self.of, 1.0)
        return _GUESS * (1.0 - (1.0 - _STEP) ** self._updates)

    async def advance(self, by: float = 1.0, *, of: float | None = None, message: str | None = None) -> None:
        """``by`` more units are done (``of``: the part's size, when it becomes known or changes)."""
        await self.update(self.done + _amount(by, "by"), of=of, message=message)

    async def update(self, done: float, *, of: float | None = None, message: str | None = None) -> None:
        """``done`` units are done so far (of ``of``, when given). Reaching ``of`` finishes the
        part. A lower ``done`` than before is allowed (a retried download starts again): the
        stream holds until the part passes where it was. Raises ``ValueError`` on a finished part."""
        self._owner.check_open(self)
        done = _amount(done, "done")
        if of is not None:
            self.of = _size(of)
        self._updates += 1
        self.done = done
        if self.of is not None and done >= self.of:
            self.finished = True
        await self._owner.moved(self, message)

    async def finish(self, message: str | None = None) -> None:
        """This part is done (again: nothing happens)."""
        if self.finished:
            return
        self._owner.check_open(self)
        self.finished = True
        if self.of is not None:
            self.done = max(self.done, self.of)
        await self._owner.moved(self, message)

    def label(self, message: str | None) -> str:
        if message:
            return f"{self.name}: {message}"
        if self.finished:
            return f"{self.name} done ({self._owner.count_done()})"
        if self.of is not None:
            return f"{self.name} {_number(self.done)}/{_number(self.of)}"
        return f"{self.name} {_number(self.done)}"


class ProgressParts:
    """Concurrent sub-tasks' progress as one increasing stream on ``0..total`` (module docstring).

    Get one from ``ctx.progress_parts(...)`` and use it as ``async with``; ``value`` is the
    last progress sent (None before the first).
    """

    def __init__(
        self,
        reporter: _Reporter,
        parts: Sequence[str] | Mapping[str, float] | None = None,
        total: float = 100.0,
    ) -> None:
        self.total = _size(total, "total")
        self._reporter = reporter
        self._parts: dict[str, ProgressPart] = {}
        self._all_added = False
        self._ended = False
        self._lock = asyncio.Lock()
        # The stream's mapping from the estimated fraction f to a value: value(f) is
        # base + (total - base) * (f - start) / (1 - start); a fall of f moves base and start.
        self._base = 0.0
        self._start = 0.0
        self._fraction = 0.0
        self.value: float | None = None
        if parts is not None:
            weights = dict(parts) if isinstance(parts, Mapping) else dict.fromkeys(parts, 1.0)
            for name, weight in weights.items():
                self.add(name, weight)
            self.all_added()

    async def __aenter__(self) -> ProgressParts:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if kind is None:
            await self.finish()
        self._ended = True

    def __getitem__(self, name: str) -> ProgressPart:
        return self._parts[name]

    def __iter__(self) -> Iterator[ProgressPart]:
        return iter(self._parts.values())

    def __len__(self) -> int:
        return len(self._parts)

    def __contains__(self, name: object) -> bool:
        return name in self._parts

    def add(self, name: str, weight: float = 1.0, *, of: float | None = None) -> ProgressPart:
        """A new part, ``weight`` times as large as a part of weight 1, of size ``of`` (in its
        own units) when known. ``ValueError`` after ``all_added()``, or for a name in use."""
        if self._all_added or self._ended:
            raise ValueError(f"cannot add part {name!r}: all parts were added already")
        if name in self._parts:
            raise ValueError(f"there is a part named {name!r} already")
        part = ProgressPart(self, name, _size(weight, "weight"), None if of is None else _size(of))
        self._parts[name] = part
        return part

    def all_added(self) -> None:
        """No more parts will be added: the next value sent carries ``total``."""
        self._all_added = True

    async def finish(self, message: str | None = None) -> None:
        """Every part is done: sends ``total`` (unless it was sent already). Leaving the
        ``async with`` block normally does this."""
        if self._ended:
            return
        self._all_added = True
        for part in self._parts.values():
            part.finished = True
        count = len(self._parts)
        await self.moved(None, message or f"all {count} part{'s' if count != 1 else ''} done")
        self._ended = True

    # ------------------------------------------------------------------ the folding

    def check_open(self, part: ProgressPart) -> None:
        if self._ended:
            raise ValueError(f"part {part.name!r} reported after its progress_parts block ended")
        if part.finished:
            raise ValueError(f"part {part.name!r} is finished; it cannot move again")

    def count_done(self) -> str:
        done = sum(part.finished for part in self._parts.values())
        so_far = "" if self._all_added else " so far"
        return f"{done} of {len(self._parts)} part{'s' if len(self._parts) != 1 else ''}{so_far}"

    def estimate(self) -> float:
        """The fraction of all the work done, 0 to 1; exactly 1 only when every part is done and
        no more can come. While parts may still be added, the unknown rest counts as one more
        part of the average weight that has not started."""
        parts = self._parts.values()
        if self._all_added and all(part.finished for part in parts):
            return 1.0
        weights = sum(part.weight for part in parts)
        unknown = 0.0 if self._all_added else (weights / len(self._parts) if self._parts else 1.0)
        fraction = sum(part.weight * part.fraction for part in parts) / (weights + unknown)
        return min(fraction, math.nextafter(1.0, 0.0))

    def _position(self) -> float:
        fraction = self.estimate()
        if fraction < self._fraction:  # the estimate fell: hold here, spread the rest over the room left
            self._base = self._at(self._fraction)
            self._start = fraction
        self._fraction = fraction
        return self._at(fraction)

    def _at(self, fraction: float) -> float:
        if fraction >= 1.0:
            return self.total
        moved = (self.total - self._base) * (fraction - self._start) / (1.0 - self._start)
        return min(self._base + moved, self.total)

    async def moved(self, part: ProgressPart | None, message: str | None) -> None:
        """Send the folded value, if it went up. The lock keeps the computing and the sending of
        one value together, so a reporter that yields cannot let a smaller value overtake."""
        async with self._lock:
            position = self._position()
            if self.value is not None and position <= self.value:
                return
            self.value = position
            text = part.label(message) if part is not None else message
            await self._reporter.report_progress(position, self.total if self._all_added else None, text)


def _amount(value: float, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{what} must be a finite number, 0 or more, not {value!r}")
    return float(value)


def _size(value: float, what: str = "of") -> float:
    if _amount(value, what) <= 0:
        raise ValueError(f"{what} must be more than 0, not {value!r}")
    return float(value)


def _number(value: float) -> str:
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else f"{value:.4g}"
