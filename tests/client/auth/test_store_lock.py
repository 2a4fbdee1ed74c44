"""The token store's lock and the loopback port, the parts of "several processes log in at once"
(issue #29) that need no authorization server: a lock held too long is one line naming its file;
a holder that dies frees the lock at once (the kernel drops it, so no stale lock is left); writes of
different keys by processes at once lose neither; the loopback port named in a redirect URI is
ours from that moment, so no other process can take it before the login listens on it."""

from __future__ import annotations

import asyncio
import errno
import json
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from backchannel.client.oauth import FileTokenStore, LoopbackBrowser, SharedTokenStore, StoreLocked
from backchannel.testing import run


def test_a_lock_held_too_long_is_one_line_naming_its_file(tmp_path: Path) -> None:
    store = FileTokenStore(tmp_path / "oauth.json")
    assert isinstance(store, SharedTokenStore)

    async def body() -> None:
        async with store.lock("issuer https://as.example", 5, doing="logging in to https://as.example"):
            started = time.monotonic()
            with pytest.raises(StoreLocked) as refused:
                async with store.lock("issuer https://as.example", 0.3, doing="logging in to https://as.example"):
                    raise AssertionError("a second holder got the lock")
            assert time.monotonic() - started < 5
            async with store.lock("issuer https://other.example", 0.3, doing="x"):
                pass  # another issuer's lock is another file
        async with store.lock("issuer https://as.example", 0.3, doing="x"):
            pass  # released with the block

        message = str(refused.value)
        assert "\n" not in message and refused.value.path in message
        assert Path(refused.value.path).parent == tmp_path and refused.value.path.endswith(".lock")
        assert "logging in to https://as.example" in message

    run(body, timeout=30)


def test_a_holder_that_dies_leaves_no_stale_lock(tmp_path: Path) -> None:
    store = FileTokenStore(tmp_path / "oauth.json")
    holder = textwrap.dedent(
        f"""
        import asyncio, sys
        from backchannel.client.oauth import FileTokenStore

        async def main():
            async with FileTokenStore({str(tmp_path / "oauth.json")!r}).lock("issuer x", 5, doing="x"):
                print("held", flush=True)
                await asyncio.sleep(3600)

        asyncio.run(main())
        """
    )
    process = subprocess.Popen([sys.executable, "-c", holder], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "held"

        async def refused_then_free() -> None:
            with pytest.raises(StoreLocked):
                async with store.lock("issuer x", 0.2, doing="x"):
                    pass
            process.kill()  # a crash: no release, no clean-up
            async with store.lock("issuer x", 10, doing="x"):
                pass

        run(refused_then_free, timeout=30)
    finally:
        process.kill()
        process.wait(timeout=10)


def test_processes_writing_different_keys_at_once_lose_none(tmp_path: Path) -> None:
    path = tmp_path / "oauth.json"
    writer = textwrap.dedent(
        f"""
        import asyncio, sys
        from backchannel.client.oauth import FileTokenStore

        async def main(name):
            store = FileTokenStore({str(path)!r})
            for i in range(20):
                await store.set(f"key {{name}} {{i}}", {{"n": i}})

        asyncio.run(main(sys.argv[1]))
        """
    )
    writers = [subprocess.Popen([sys.executable, "-c", writer, str(n)]) for n in range(4)]
    for process in writers:
        assert process.wait(timeout=60) == 0
    entries = json.loads(path.read_text())
    assert sorted(entries) == sorted(f"key {n} {i}" for n in range(4) for i in range(20))


def test_the_port_in_a_redirect_uri_is_held_from_the_moment_it_is_named() -> None:
    first, second = (LoopbackBrowser(open_browser=False, announce=lambda _: None) for _ in range(2))
    port = urlsplit(first.redirect_uri).port
    assert port
    assert first.redirect_uri == f"http://127.0.0.1:{port}/callback"  # named again: the same
    assert second.redirect_uri != first.redirect_uri
    intruder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        intruder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as asyncio's servers bind
        with pytest.raises(OSError) as taken:
            intruder.bind(("127.0.0.1", port))
            intruder.listen(1)
        assert taken.value.errno == errno.EADDRINUSE
    finally:
        intruder.close()

    async def login() -> None:
        # The login listens on the port it named, and the browser's redirect reaches it.
        async def browser() -> None:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /callback?code=c1&state=s1 HTTP/1.1\r\nhost: x\r\n\r\n")
            await writer.drain()
            assert b"200 OK" in await reader.read()
            writer.close()

        visit = asyncio.get_running_loop().create_task(browser())
        assert await first.authorize("http://as.example/auth") == {"code": "c1", "state": "s1"}
        await visit

    run(login, timeout=30)
