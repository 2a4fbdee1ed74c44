"""In-process plumbing for the elicitation wire tests.

``session(server, era, ...)`` connects a real ``Client`` to ``server`` over a memory
pair whose server end is a ``Tap``: every message each side sends is kept, as it
crossed the wire (JSON-encoded and decoded), so tests assert on the wire itself.
``RawPeer`` (from the server tests) speaks hand-written JSON-RPC for what a
well-behaved client never sends.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from backchannel import Client, Server
from backchannel import testing as kit

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from _server_harness import MODERN, RawPeer, error_of, result_of

__all__ = ["ERAS", "MODERN", "RawPeer", "Tap", "error_of", "raw_answers", "result_of", "run", "session"]

ERAS = ("handshake", "stateless")
run = kit.run


class Tap(kit.Tap):
    """The server's end, recorded both ways: ``received`` is what the client sent,
    ``written`` what the server sent. Adds the questions these tests ask most."""

    def server_requests(self, method: str = "elicitation/create") -> list[dict[str, Any]]:
        """Requests the server sent (handshake era)."""
        return self.requests_written(method)

    def client_response_to(self, request_id: Any) -> dict[str, Any]:
        """The client's one answer to the server's request ``request_id``."""
        found = self.responses_received(request_id)
        assert len(found) == 1, f"expected one answer to {request_id!r}, got {found}"
        return found[0]

    def server_response_to(self, request_id: Any) -> dict[str, Any]:
        """The server's one answer to the client's request ``request_id``."""
        found = self.responses_written(request_id)
        assert len(found) == 1, f"expected one answer to {request_id!r}, got {found}"
        return found[0]

    def forms_shown(self, era: str) -> int:
        """How many times the server asked the person: its elicitation requests (handshake
        era), or its tool-call answers that carry ``inputRequests`` (stateless era)."""
        if era == "handshake":
            return len(self.server_requests())
        return sum(
            "inputRequests" in self.server_response_to(call["id"]).get("result", {})
            for call in self.requests_received("tools/call")
        )


@contextlib.asynccontextmanager
async def session(server: Server, era: str = "handshake", **options: Any) -> AsyncIterator[tuple[Client, Tap]]:
    """A ``Client`` in ``era`` talking to ``server``; ``options`` go to ``Client``."""
    tap = Tap()
    options.setdefault("version", "9.9")
    async with kit.connected(server, era, wrap_server=tap.around, **options) as client:  # type: ignore[arg-type]
        yield client, tap


def raw_answers(client: Client, answers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Make ``client`` a misbehaving one: each server question gets the next of ``answers``
    exactly as given (no validation, no defaults). Returns the params it was asked with."""
    asked: list[dict[str, Any]] = []
    queue = list(answers)

    async def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return queue.pop(0)

    client.inputs.answer = answer  # type: ignore[method-assign]
    return asked
