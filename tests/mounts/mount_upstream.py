"""The upstream the mount tests mount: the bridge's test upstream (``tests/bridge/upstream_server.py``:
a form, sampling, roots, progress, a task) plus what completes (a prompt's argument, a template's
variable) and a resource that changes. In this process (``build``) or over stdio::

    python tests/mounts/mount_upstream.py [--versions handshake|stateless|all]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for bridge.upstream_server

from backchannel import Context, Server
from backchannel.types.versions import HANDSHAKE_VERSIONS, STATELESS_VERSIONS, VERSIONS
from bridge.upstream_server import build as build_bridge_upstream

ERA_VERSIONS = {"handshake": HANDSHAKE_VERSIONS, "stateless": STATELESS_VERSIONS, "all": VERSIONS}


def build(versions: tuple[str, ...] = VERSIONS) -> Server:
    server = build_bridge_upstream(versions)
    counter = {"n": 0}

    @server.prompt(completers={"city": ["Paris", "Pune", "Oslo"]})
    def trip(city: str) -> str:
        """A trip to ``city``."""
        return f"Pack for {city}"

    @server.resource("file:///{path}", completers={"path": ["alpha.txt", "beta.txt"]}, mime_type="text/plain")
    def file(path: str) -> str:
        return f"the file {path}"

    @server.resource("memo://counter", mime_type="text/plain")
    def count() -> str:
        return str(counter["n"])

    @server.tool()
    def bump(ctx: Context) -> str:
        """Change ``memo://counter``; its subscribers are told."""
        counter["n"] += 1
        server.notify_resource_updated("memo://counter")
        return str(counter["n"])

    @server.tool()
    def measure(length: int, units: str = "m", debug: bool = False) -> str:
        """A length in ``units``."""
        return f"{length}{units}{' (debug)' if debug else ''}"

    @server.tool()
    def grow(name: str) -> str:
        """Add a tool named ``name``: the tool list changes."""
        server.add_tool(lambda: name, name=name, description="grown")
        return name

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--versions", choices=sorted(ERA_VERSIONS), default="all")
    args = parser.parse_args()
    build(tuple(ERA_VERSIONS[args.versions])).run()


if __name__ == "__main__":
    main()
