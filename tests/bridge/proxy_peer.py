"""Our bridge in a process of its own, for the peer tests that need a real client to launch it or
reach it: ``Proxy(UpstreamSpec(command=CMD))`` served over stdio (as a desktop host launches it)
or over Streamable HTTP on ``127.0.0.1:PORT/mcp``.

    python tests/bridge/proxy_peer.py [--http PORT] [--upstream-era auto|handshake|stateless] -- CMD [ARG...]

(The library, not the ``backchannel proxy`` command: these tests prove what ``backchannel.bridge``
carries, whoever wraps it.) The upstream inherits this process's environment and directory.
"""

from __future__ import annotations

import argparse
import sys

from backchannel.bridge import Proxy, UpstreamSpec


def main(argv: list[str]) -> None:
    if "--" not in argv:
        sys.exit("usage: proxy_peer.py [--http PORT] [--upstream-era ERA] -- CMD [ARG...]")
    split = argv.index("--")
    parser = argparse.ArgumentParser(prog="proxy_peer.py")
    parser.add_argument("--http", type=int, metavar="PORT", default=None, help="serve HTTP on 127.0.0.1:PORT")
    parser.add_argument("--upstream-era", default="auto", choices=("auto", "handshake", "stateless"))
    ns = parser.parse_args(argv[:split])
    command = argv[split + 1 :]
    if not command:
        parser.error("the upstream's command is missing after --")
    proxy = Proxy(UpstreamSpec(command=command, era=ns.upstream_era))
    if ns.http is None:
        proxy.run()
    else:
        proxy.run_http(port=ns.http)


if __name__ == "__main__":
    main(sys.argv[1:])
