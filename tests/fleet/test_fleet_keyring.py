"""The fleet's keyring for ``requestState``: shared by every worker, rotated, and made again when
Redis loses it, without stranding the states the older workers sealed."""

from __future__ import annotations

from collections.abc import Callable

from backchannel import Server
from backchannel.server.sharing import KEYRING, rotate_keyring
from backchannel.state.shared import SharedState
from backchannel.testing import run
from backchannel.types.errors import InvalidParams


async def _worker(new_state: Callable[[], SharedState]) -> Server:
    server = Server("ring", state=new_state())
    await server.state.start()  # type: ignore[attr-defined]
    await server.start_sharing()
    return server


def _crosses(sealer_of: Server, opener: Server) -> bool:
    token = sealer_of.state_sealer.seal({"n": 1}, "binding")
    try:
        return opener.state_sealer.open(token, "binding") == {"n": 1}
    except InvalidParams:
        return False


def test_workers_share_rotate_and_remake_the_keyring(new_state: Callable[[], SharedState]) -> None:
    async def body() -> None:
        old = await _worker(new_state)
        other = await _worker(new_state)
        servers = [old, other]
        try:
            assert _crosses(old, other) and _crosses(other, old)  # one ring for the fleet

            before = old.state_sealer.seal({"n": 1}, "binding")
            await rotate_keyring(old.state)  # type: ignore[arg-type]
            for server in servers:
                await server.sharing.check_keyring()
            assert old.state_sealer.seal({"n": 1}, "binding") != before  # a new key seals...
            assert other.state_sealer.open(before, "binding") == {"n": 1}  # ...the previous still opens

            await old.state.delete(KEYRING)  # Redis restarted without persistence: the ring is gone
            late = await _worker(new_state)  # a worker started now makes a ring of its own
            servers.append(late)
            assert not _crosses(old, late)
            for server in servers:  # every worker checks the ring every few seconds
                await server.sharing.check_keyring()
            for first in servers:
                for second in servers:
                    assert _crosses(first, second), "a state sealed on one worker must open on every other"
        finally:
            for server in servers:
                server.sharing.stop()
                await server.state.aclose()  # type: ignore[attr-defined]

    run(body)
