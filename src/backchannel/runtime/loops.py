"""The event loop a server that runs itself gets, and what its collector leaves out at start.

uvloop when it is installed (a dependency on Linux and macOS): its pipes and
sockets cost a fraction of asyncio's own per message, which is most of what a
busy MCP server does. ``BACKCHANNEL_LOOP=asyncio`` picks asyncio's loop anyway,
for debugging or for code that needs it. An application that owns its loop
(``asyncio.run(server.run_stdio())``, an ASGI server of its choice) decides for
itself; this only serves ``Server.run`` and ``Server.run_http``, which also call
``freeze_startup`` as they begin to serve.
"""

from __future__ import annotations

__all__ = ["freeze_startup", "loop_name", "run"]

import asyncio
import gc
import os
import stat
from collections.abc import Callable, Coroutine
from typing import Any, Literal, TypeVar

T = TypeVar("T")


def loop_name() -> Literal["uvloop", "asyncio"]:
    """``"uvloop"`` when it is installed and not turned off by ``BACKCHANNEL_LOOP=asyncio``."""
    if os.environ.get("BACKCHANNEL_LOOP", "").strip().lower() == "asyncio":
        return "asyncio"
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return "asyncio"
    return "uvloop"


def _factory() -> Callable[[], asyncio.AbstractEventLoop]:
    import uvloop

    return uvloop.new_event_loop


def run(main: Coroutine[Any, Any, T], *, stdio: bool = False) -> T:
    """``asyncio.run(main)`` on the loop ``loop_name()`` names.

    With ``stdio``, uvloop only when stdin is a pipe or a socket and stdout one of those
    or a file: how clients run servers. A terminal or ``/dev/null`` (character devices)
    keeps asyncio's loop, which reads them properly: uvloop misses the end of input a
    person types (Ctrl-D) and aborts the process on ``/dev/null``.
    """
    use_uvloop = loop_name() == "uvloop" and (not stdio or _stdio_is_piped())
    with asyncio.Runner(loop_factory=_factory() if use_uvloop else None) as runner:
        return runner.run(main)


def _stdio_is_piped() -> bool:
    try:
        stdin, stdout = os.fstat(0).st_mode, os.fstat(1).st_mode
    except OSError:
        return False
    piped = stat.S_ISFIFO(stdin) or stat.S_ISSOCK(stdin)
    return piped and (stat.S_ISFIFO(stdout) or stat.S_ISSOCK(stdout) or stat.S_ISREG(stdout))


def freeze_startup() -> None:
    """Leave the objects that exist now out of the cyclic garbage collector's passes (``gc.freeze``).

    Called when a server that runs itself starts serving: what exists then (the imported modules,
    the registered tools, the user's globals) is meant to live as long as the process. Every full
    collection walked those objects (25,000 in a small server) again, and so did the interpreter's
    at exit: 20 of the 25 ms between stdin closing and the process exiting (``docs/performance.md``).
    An object among them is still freed when its last reference goes; only a reference cycle
    among them that later becomes garbage stays (``gc.unfreeze()`` puts them back).

    At exit (``atexit``) what is left is frozen too: the interpreter's last collections (four on
    Python 3.11) then walk none of what serving made either (uvloop's module, the forms loaded by
    a first ``elicit``, the closed loop and session): 15% of the instructions between stdin
    closing and the process exiting. A reference cycle that is garbage by then is left to the
    operating system, as one among the startup objects already was: its ``__del__`` does not run.
    Exit handlers registered before this one still run, after it; a program that goes on after
    serving is not affected until it exits.
    """
    import atexit

    gc.freeze()
    atexit.unregister(gc.freeze)  # once, however many times a process starts serving
    atexit.register(gc.freeze)
