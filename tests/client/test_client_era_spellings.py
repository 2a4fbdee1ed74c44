"""The era a user chooses: today's names, and the old spellings ``"legacy"``/``"modern"`` still accepted."""

from __future__ import annotations

import pytest

from backchannel import Client, Server
from backchannel.testing import connected
from backchannel.testing import run as kit_run
from backchannel.transports.memory import memory_pair
from backchannel.types.versions import (
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE,
    LATEST_LEGACY,
    LATEST_MODERN,
    LATEST_STATELESS,
    LEGACY_VERSIONS,
    MODERN_VERSIONS,
    STATELESS_VERSIONS,
    era_from_user,
    negotiate_handshake,
    negotiate_legacy,
)

SPELLINGS = [
    ("auto", "auto"),
    ("handshake", "handshake"),
    ("stateless", "stateless"),
    ("legacy", "handshake"),
    ("modern", "stateless"),
]


@pytest.mark.parametrize(("written", "meant"), SPELLINGS)
def test_era_from_user_normalises_every_spelling(written: str, meant: str) -> None:
    assert era_from_user(written) == meant


def test_an_unknown_era_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="'handshake' or 'stateless'"):
        era_from_user("ancient")


@pytest.mark.parametrize(("written", "meant"), SPELLINGS)
def test_client_keeps_the_normalised_choice(written: str, meant: str) -> None:
    assert Client(memory_pair()[0], era=written).era_choice == meant  # type: ignore[arg-type]


@pytest.mark.parametrize(("written", "agreed"), [("legacy", "handshake"), ("modern", "stateless")])
def test_the_old_spellings_connect_in_their_era(written: str, agreed: str) -> None:
    server = Server("spellings")

    async def body() -> tuple[object, object]:
        async with connected(server, written) as client:  # type: ignore[arg-type]
            return client.era, client.protocol_version

    era, version = kit_run(body())
    assert era == agreed
    assert version == (LATEST_HANDSHAKE if agreed == "handshake" else LATEST_STATELESS)


def test_the_old_names_are_aliases() -> None:
    assert LEGACY_VERSIONS is HANDSHAKE_VERSIONS
    assert MODERN_VERSIONS is STATELESS_VERSIONS
    assert (LATEST_LEGACY, LATEST_MODERN) == (LATEST_HANDSHAKE, LATEST_STATELESS)
    assert negotiate_legacy is negotiate_handshake
