"""backchannel's side of ``benchmarks/composition.py``: the contract server with one middleware, or mounted.

    python benchmarks/composition_server.py middleware   # contract_server.build() + one pass-through middleware
    python benchmarks/composition_server.py middleware2  # ... + two of them (what a further layer costs)
    python benchmarks/composition_server.py mount        # an empty server mounting contract_server.build() as "m"

Both over stdio. The middleware one is ``contract_server.py``'s server with
``server.add_middleware`` of a function that only awaits ``call_next``; the mount one serves the
contract server's tools as ``m_echo``, ``m_ask``, ... through ``Server.mount("m", inner)``, in
one process. (The proxy needs no script: it is ``backchannel proxy -- python contract_server.py stdio``.)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import contract_server

from backchannel.server import Server
from backchannel.server.middleware import Call, CallNext


async def passthrough(call: Call, call_next: CallNext) -> Any:
    """The cheapest middleware there is: pass the call on, return its result."""
    return await call_next(call)


def with_middleware(layers: int = 1) -> Server:
    server = contract_server.build()
    for _ in range(layers):
        server.add_middleware(passthrough)
    return server


def mounting() -> Server:
    main = Server("backchannel-bench-mount", "1.0.0", log_level=None, completion_rate=None)
    main.mount("m", contract_server.build())
    return main


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) == 2 else ""
    if mode in ("middleware", "middleware2"):
        with_middleware(2 if mode == "middleware2" else 1).run()
    elif mode == "mount":
        mounting().run()
    else:
        raise SystemExit(f"usage: {sys.argv[0]} middleware | middleware2 | mount")


if __name__ == "__main__":
    main()
