"""A server whose tools take sets, for the wire tests of ``test_unique_items_wire.py``.

Run as ``python -m backchannel run tests/server/sets_server.py``: the tests speak raw NDJSON to it.
"""

from __future__ import annotations

from dataclasses import dataclass

from backchannel import Server

server = Server("sets", "1.0")


@dataclass
class Batch:
    name: str
    labels: frozenset[str]


@server.tool()
def tag(ids: set[int], batch: Batch | None = None, **extra: set[str]) -> list[int]:
    """Tag the items ``ids`` (each once)."""
    return sorted(ids)


@server.prompt()
def pick(numbers: set[int]) -> str:
    """Numbers, each once."""
    return f"picked {sorted(numbers)}"
