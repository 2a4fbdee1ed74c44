"""A lock the processes of one user share: an advisory lock on a file beside the token store.

Several programs may log in to the same server at once (a desktop host starts one bridge per
window). ``FileTokenStore.lock`` hands out a ``FileLock`` per authorization server, and
``OAuth`` holds it for a whole login and for each refresh, reading the store again once it holds
it: what another process did meanwhile is used, never done twice.

The lock is ``flock`` (POSIX: Linux, macOS) or ``msvcrt.locking`` (Windows) on a file of its
own, never deleted. The kernel drops it when its process ends, however it ends, so a crashed
process leaves no stale lock behind. Taking it never blocks the event loop: ``hold`` tries, and
tries again with a growing pause, until its time is up; then ``StoreLocked`` names the file.
"""

from __future__ import annotations

__all__ = ["FileLock"]

import asyncio
import contextlib
import os
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .errors import StoreLocked

if sys.platform == "win32":
    import msvcrt

    def _try_lock(descriptor: int) -> bool:
        try:
            msvcrt.locking(descriptor, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(descriptor: int) -> None:
        os.lseek(descriptor, 0, os.SEEK_SET)
        msvcrt.locking(descriptor, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(descriptor: int) -> bool:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(descriptor: int) -> None:
        fcntl.flock(descriptor, fcntl.LOCK_UN)


#: The first pause between tries, and the longest: a lock held for a refresh is free again in
#: milliseconds, one held for a person's login in seconds.
_FIRST_PAUSE, _LONGEST_PAUSE = 0.005, 0.1


class FileLock:
    """An exclusive lock on ``path`` (created 0600 when missing), across processes and across the
    tasks of one process (each holder opens the file anew, and the lock belongs to that opening).

    ``async with lock.hold(timeout, doing=...)`` in a coroutine, ``with lock.held(timeout)`` in a
    thread; ``doing`` says in the error what the holder is probably busy with."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def _open(self) -> int:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)

    def _try(self) -> int | None:
        """The open file, locked; None (and closed) when another holder has it."""
        descriptor = self._open()
        if _try_lock(descriptor):
            return descriptor
        os.close(descriptor)
        return None

    def _release(self, descriptor: int) -> None:
        try:
            _unlock(descriptor)
        finally:
            os.close(descriptor)

    def _refused(self, timeout: float, doing: str) -> StoreLocked:
        from .errors import StoreLocked  # (an httpx2 error: loaded when one is raised, not with the store)

        return StoreLocked(
            f"{self.path} is still locked after {timeout:g} seconds: another process is {doing} "
            "(a login waits for its person); try again once it is done",
            path=str(self.path),
        )

    def _pauses(self, timeout: float, doing: str) -> Iterator[float]:
        """The waits between tries, growing, until ``timeout`` (counted from this call, before the
        first try) is up; the next one asked for then raises ``StoreLocked``. ``hold`` and ``held``
        each wait them out in their own way."""
        deadline = time.monotonic() + timeout

        def pauses() -> Iterator[float]:
            pause = _FIRST_PAUSE
            while (left := deadline - time.monotonic()) > 0:
                yield min(pause, left)
                pause = min(pause * 2, _LONGEST_PAUSE)
            raise self._refused(timeout, doing)

        return pauses()

    @contextlib.asynccontextmanager
    async def hold(self, timeout: float, *, doing: str = "using the token store") -> AsyncIterator[None]:
        """Hold the lock for the block, waiting at most ``timeout`` seconds for it (``StoreLocked`` then)."""
        pauses = self._pauses(timeout, doing)
        while (descriptor := self._try()) is None:  # noqa: ASYNC110 - another process's lock: no event to wait on
            await asyncio.sleep(next(pauses))
        try:
            yield
        finally:
            self._release(descriptor)

    @contextlib.contextmanager
    def held(self, timeout: float, *, doing: str = "using the token store") -> Iterator[None]:
        """``hold`` for a thread (``asyncio.to_thread``): it sleeps between tries."""
        pauses = self._pauses(timeout, doing)
        while (descriptor := self._try()) is None:
            time.sleep(next(pauses))
        try:
            yield
        finally:
            self._release(descriptor)
