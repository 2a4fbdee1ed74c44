"""The default file store keeps refresh tokens and client secrets readable by their owner only
(2026-07-28 security considerations, "Token Theft": secure token storage): the file is 0600
from its first byte and stays so when rewritten, its directory 0700, and a file found wider is
narrowed on the next write."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import pytest

from backchannel.client.oauth import FileTokenStore, MemoryTokenStore, TokenStore
from backchannel.client.oauth.store import default_token_file


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_file_is_0600_in_a_0700_directory_even_with_a_permissive_umask(tmp_path: Path) -> None:
    path = tmp_path / "config" / "backchannel" / "oauth.json"
    store = FileTokenStore(path)
    old = os.umask(0)
    try:
        asyncio.run(store.set("tokens https://as.example https://mcp.example", {"refresh_token": "r1"}))
    finally:
        os.umask(old)
    assert mode(path) == 0o600 and mode(path.parent) == 0o700
    assert asyncio.run(store.get("tokens https://as.example https://mcp.example")) == {"refresh_token": "r1"}


def test_a_wider_file_is_narrowed_on_the_next_write_and_keys_are_kept_apart(tmp_path: Path) -> None:
    path = tmp_path / "oauth.json"
    path.write_text("{}")
    path.chmod(0o644)
    store = FileTokenStore(path)

    async def body() -> None:
        await store.set("tokens https://a.example r", {"access_token": "from-a"})
        await store.set("tokens https://b.example r", {"access_token": "from-b"})
        await store.set("tokens https://a.example r", None)
        assert await store.get("tokens https://a.example r") is None
        assert await store.get("tokens https://b.example r") == {"access_token": "from-b"}

    asyncio.run(body())
    assert mode(path) == 0o600
    left = {p.name for p in tmp_path.iterdir()} - {"oauth.json", "oauth.json.lock"}  # the lock stays, 0600
    assert not left and mode(tmp_path / "oauth.json.lock") == 0o600  # no temporary file left behind


def test_a_damaged_file_reads_as_empty(tmp_path: Path) -> None:
    path = tmp_path / "oauth.json"
    path.write_text("{not json")
    assert asyncio.run(FileTokenStore(path).get("anything")) is None


def test_the_default_file_follows_xdg_config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert default_token_file() == tmp_path / "backchannel" / "oauth.json"
    assert FileTokenStore().path == tmp_path / "backchannel" / "oauth.json"


def test_both_stores_are_token_stores_and_the_memory_one_hands_out_copies() -> None:
    memory = MemoryTokenStore()
    assert isinstance(memory, TokenStore) and isinstance(FileTokenStore("x"), TokenStore)
    value = {"scopes": ["a"]}
    asyncio.run(memory.set("k", value))
    value["scopes"].append("b")
    got = asyncio.run(memory.get("k"))
    assert got == {"scopes": ["a"]}
