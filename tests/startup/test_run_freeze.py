"""``Server.run`` leaves what existed before serving out of the cyclic GC (``runtime.loops.freeze_startup``).

The interpreter's last collection at exit walked every module object again: most of the time
between stdin closing and the process exiting (``docs/performance.md``). The program goes on
after ``run()`` returns, with the GC on, and what it frees by reference counting is freed.
At exit everything is frozen, what serving made too; the program's own exit handlers still run.
"""

from __future__ import annotations

import subprocess
import sys

from _subprocesses import checkout_env

PROGRAM = """
import gc, sys, weakref
from backchannel.server import Server

server = Server("frozen")

@server.tool()
def echo(text: str) -> str:
    return text

class Held:
    pass

held = Held()
gone = weakref.ref(held)
before = gc.get_freeze_count()
server.run()
del held  # frozen, and still freed when its last reference goes
print(before, gc.get_freeze_count(), gc.isenabled(), gone() is None, file=sys.stderr)
"""


def test_run_freezes_what_exists_before_serving() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM], input=b"", capture_output=True, env=checkout_env(), timeout=30, check=True
    )
    before, after, enabled, freed = done.stderr.decode().split()
    assert before == "0"
    assert int(after) > 10_000  # the modules, the server, its tools
    assert enabled == "True"
    assert freed == "True"


AT_EXIT = """
import atexit, gc, sys
from backchannel.server import Server

server = Server("frozen")

@server.tool()
def echo(text: str) -> str:
    return text

class Late:
    pass

def report():
    # Registered before run(): runs after the server's own exit handler.
    collectable = {id(obj) for obj in gc.get_objects()}  # the permanent generation is not listed
    print(id(late) in collectable, gc.isenabled(), file=sys.stderr)

atexit.register(report)
server.run()
late = Late()  # made after serving: the program went on, with the GC on
print("after serving", file=sys.stderr, end=" ")
"""


def test_exit_freezes_what_the_program_left_and_still_runs_its_exit_handlers() -> None:
    done = subprocess.run(
        [sys.executable, "-c", AT_EXIT], input=b"", capture_output=True, env=checkout_env(), timeout=30, check=True
    )
    assert done.stderr.decode().split() == [
        "after",
        "serving",
        "False",  # not collectable: the interpreter's last collections at exit do not walk it
        "True",  # the GC was never turned off
    ]
