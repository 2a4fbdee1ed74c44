"""Run one async test body from a plain (synchronous) test function, with a hard time bound."""

from __future__ import annotations

__all__ = ["DEFAULT_BOUND", "run", "within"]

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

#: Seconds: no test body may take longer, whatever goes wrong.
DEFAULT_BOUND = 10.0


def run(main: Callable[[], Awaitable[T]] | Awaitable[T], timeout: float = DEFAULT_BOUND) -> T:
    """Run ``main`` (an async function taking no arguments, or a coroutine) in a fresh event
    loop; its result. Raises ``TimeoutError`` after ``timeout`` seconds, so a test that
    deadlocks fails instead of hanging the suite."""

    async def bounded() -> T:
        async with asyncio.timeout(timeout):
            return await (main if inspect.isawaitable(main) else main())

    return asyncio.run(bounded())


async def within(condition: Callable[[], object], what: str = "the condition", timeout: float = 5.0) -> None:
    """Wait until ``condition()`` (cheap, synchronous, plain state) is true; ``TimeoutError``
    naming ``what`` after ``timeout`` seconds. For state nothing signals; when there is an
    event to wait on, wait on the event instead."""
    try:
        async with asyncio.timeout(timeout):
            while not condition():  # noqa: ASYNC110 - the condition is plain state, not an event
                await asyncio.sleep(0.001)
    except TimeoutError:
        raise TimeoutError(f"{what} did not happen within {timeout} seconds") from None
