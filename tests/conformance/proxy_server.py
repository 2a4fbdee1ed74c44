"""A ``backchannel.bridge.Proxy`` serving Streamable HTTP, for ``run.py``'s through-proxy legs.

    python tests/conformance/proxy_server.py --port N URL
    python tests/conformance/proxy_server.py --port N -- COMMAND [ARGS...]

serves ``http://127.0.0.1:N/mcp``, every request answered by the upstream at ``URL``
(Streamable HTTP) or by ``COMMAND`` started over stdio: ``run.py --through-proxy`` puts it in
front of the servers it tests. (``backchannel proxy URL --serve http --port N`` is the
command-line face of the same class, with its own options and log.)
"""

from __future__ import annotations

import argparse
import sys

from backchannel.bridge import Proxy, UpstreamSpec


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, required=True, help="TCP port on 127.0.0.1")
    parser.add_argument("upstream", nargs="+", help="the upstream's URL, or -- and the command that starts it")
    args = parser.parse_args(argv)
    target: list[str] = args.upstream
    if len(target) == 1 and target[0].startswith(("http://", "https://")):
        spec = UpstreamSpec(url=target[0])
    else:
        spec = UpstreamSpec(command=target)
    Proxy(spec).run_http("127.0.0.1", args.port, "/mcp")


if __name__ == "__main__":
    main(sys.argv[1:])
