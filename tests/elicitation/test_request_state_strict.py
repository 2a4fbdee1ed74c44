"""``requestState`` is read strictly (issue 12, item 9): one sealed state has exactly one
accepted spelling. The lenient base64 decoder skips characters outside the alphabet, reads
``+``/``/`` as ``-``/``_`` and ignores the unused bits of the last character, so before
this each state below was accepted as if untouched. Each is now the documented -32602
"requestState is malformed", and the session goes on."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from _elicit_wire import RawPeer, error_of, result_of, run

from backchannel import Context, Server
from backchannel.types import meta as M

FORM = {"type": "object", "properties": {"name": {"type": "string"}}}
CAPS = {M.CLIENT_CAPABILITIES: {"elicitation": {"form": {}}}}
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def server() -> Server:
    server = Server("s", state_key=b"k" * 32)

    @server.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", FORM, key="name")
        return f"{answer.action}:{answer.data}"

    return server


def _in_middle(part: str, junk: str) -> str:
    return part[: len(part) // 2] + junk + part[len(part) // 2 :]


def _standard_alphabet(part: str) -> str:
    return part.replace("-", "+").replace("_", "/")


def _noncanonical_tail(part: str) -> str:
    # With 2 or 3 characters in the last group, the last one carries unused low bits.
    assert len(part) % 4 in (2, 3)
    return part[:-1] + ALPHABET[ALPHABET.index(part[-1]) ^ 1]


def _padded(part: str) -> str:
    return part + "=" * (-len(part) % 4)


TAMPERINGS: dict[str, Callable[[str, str], str]] = {
    # Four characters at a time, so that the padding the old decoder computed still fitted.
    "spaces in the body": lambda body, mac: f"{_in_middle(body, ' ' * 4)}.{mac}",
    "newlines after the mac": lambda body, mac: f"{body}.{mac}\r\n\r\n",
    "tabs in the mac": lambda body, mac: f"{body}.{_in_middle(mac, chr(9) * 4)}",
    "trailing garbage": lambda body, mac: f"{body}.{mac}!!",
    "junk characters in the body": lambda body, mac: f"{_in_middle(body, '*$#!')}.{mac}",
    "'+' and '/' for '-' and '_'": lambda body, mac: f"{_standard_alphabet(body)}.{_standard_alphabet(mac)}",
    "padding": lambda body, mac: f"{_padded(body)}.{_padded(mac)}",
    "non-canonical last character": lambda body, mac: f"{body}.{_noncanonical_tail(mac)}",
}


async def _first_round(peer: RawPeer) -> str:
    """A state whose parts spell differently in the standard alphabet and with padding, so
    every tampering changes it (about three tries in four succeed at once)."""
    for _ in range(64):
        state: str = result_of(await peer.modern("tools/call", {"name": "ask", "arguments": {}}, **CAPS))[
            "requestState"
        ]
        body, mac = state.split(".")
        if _standard_alphabet(state) != state and _padded(body) != body and len(mac) % 4 in (2, 3):
            return state
    raise AssertionError("no state with '-' or '_' in 64 tries")


@pytest.mark.parametrize("tampering", list(TAMPERINGS))
def test_a_respelled_state_is_malformed(tampering: str) -> None:
    async def body() -> None:
        async with RawPeer(server()) as peer:
            state = await _first_round(peer)
            spoilt = TAMPERINGS[tampering](*state.split("."))
            assert spoilt != state
            answered: dict[str, Any] = {"inputResponses": {"name": {"action": "accept", "content": {"name": "Ada"}}}}
            params = {"name": "ask", "arguments": {}, **answered}
            response = await peer.modern("tools/call", {**params, "requestState": spoilt}, **CAPS)
            error = error_of(response)
            assert error["code"] == -32602
            assert error["message"] == "requestState is malformed; send back exactly what the server sent"
            # The session goes on, and the untouched state still works.
            response = await peer.modern("tools/call", {**params, "requestState": state}, **CAPS)
            assert result_of(response)["content"][0]["text"] == "accept:{'name': 'Ada'}"

    run(body)
