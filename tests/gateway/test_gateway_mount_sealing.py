"""A mounted server seals its stateless-era ``requestState`` with its mounting server's keys, bound
to the mount (``composition/mount_sealer.py``; issue #30: "an upstream's requestState is sealed inside
ours ... and can't be sent to another mount").

On the wire (hand-written JSON-RPC, 2026-07-28): a state one worker's mount sealed opens at the
same mount of another worker that shares the mounting server's key (as a fleet's workers share
their keyring), and follows a key the mounting server takes up later; sent to another mount of
the same tool name, it is refused as belonging to another request.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from typing_extensions import TypedDict

from backchannel import Context, Server
from backchannel.testing import run
from backchannel.types import meta as M

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from _server_harness import RawPeer, error_of, result_of

FORM_CAPS = {M.CLIENT_CAPABILITIES: {"elicitation": {"form": {}}}}
ANSWER = {"step1": {"action": "accept", "content": {"name": "Ada"}}}


class Name(TypedDict):
    name: str


def _asking(name: str) -> Server:
    server = Server(name)

    @server.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Your name?", Name, key="step1")
        return f"{name}:{answer.action}:{answer.data}"

    return server


def _gateway(key: bytes) -> Server:
    gateway = Server("gateway", state_key=key)
    gateway.mount("a", _asking("a"))
    gateway.mount("b", _asking("b"))
    return gateway


async def _call(peer: RawPeer, tool: str, **params: Any) -> dict[str, Any]:
    return await peer.modern("tools/call", {"name": tool, "arguments": {}, **params}, **FORM_CAPS)


def test_a_mounts_state_opens_on_another_worker_at_the_same_mount_only() -> None:
    async def body() -> None:
        async with RawPeer(_gateway(b"k" * 32)) as peer:
            state = result_of(await _call(peer, "a_ask"))["requestState"]
        async with RawPeer(_gateway(b"k" * 32)) as peer:  # another worker, the same key
            done = result_of(await _call(peer, "a_ask", inputResponses=ANSWER, requestState=state))
            assert done["content"][0]["text"] == "a:accept:{'name': 'Ada'}"
            refused = error_of(await _call(peer, "b_ask", inputResponses=ANSWER, requestState=state))
            assert refused["code"] == -32602
            assert "different request" in refused["message"]

    run(body)


def test_a_mount_follows_the_keys_its_mounting_server_takes_up() -> None:
    async def body() -> None:
        async with RawPeer(_gateway(b"k" * 32)) as peer:
            state = result_of(await _call(peer, "a_ask"))["requestState"]
        later = _gateway(b"j" * 32)
        later.state_sealer.use_keys([b"j" * 32, b"k" * 32])  # the fleet's keyring, taken up at start
        async with RawPeer(later) as peer:
            done = result_of(await _call(peer, "a_ask", inputResponses=ANSWER, requestState=state))
            assert done["content"][0]["text"].startswith("a:accept")

    run(body)
