"""The stdio client (issue #2): spawn with env and cwd, pass stderr through, shut down cleanly.

LC-25: close the child's stdin, wait, SIGTERM, wait, SIGKILL. And when the child
dies, every pending request fails at once with ``ConnectionClosed``.
"""

from __future__ import annotations

import asyncio
import functools
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from backchannel.client import Client
from backchannel.testing import run as kit_run
from backchannel.transports.stdio import StdioClientTransport
from backchannel.types.content import TextContent
from backchannel.types.errors import ConnectionClosed

FIXTURE = str(Path(__file__).resolve().parents[1] / "fixtures" / "wire_server.py")
BOUND = 15.0


run = functools.partial(kit_run, timeout=BOUND)


def text(result: Any) -> str:
    [content] = result.content
    assert isinstance(content, TextContent)
    return content.text


def test_env_and_cwd_reach_the_child(tmp_path: Path) -> None:
    seen: dict[str, str] = {}

    async def main() -> None:
        async with Client.stdio(sys.executable, [FIXTURE], env={"BC_X": "y"}, cwd=tmp_path) as client:
            seen["BC_X"] = text(await client.call_tool("env_value", {"name": "BC_X"}))
            seen["PATH"] = text(await client.call_tool("env_value", {"name": "PATH"}))
            seen["cwd"] = text(await client.call_tool("cwd"))

    run(main)
    assert seen["BC_X"] == "y"
    assert seen["PATH"] != ""  # ``env`` adds to our environment rather than replacing it
    assert Path(seen["cwd"]).resolve() == tmp_path.resolve()


def test_child_stderr_passes_through(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import asyncio, sys
        from backchannel.client import Client

        async def main():
            async with Client.stdio(sys.executable, [{FIXTURE!r}]) as client:
                await client.call_tool("stderr_line", {{"text": "marker from the child 7f3a"}})
            print("client done", flush=True)

        asyncio.run(main())
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=BOUND, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "client done" in done.stdout
    assert "marker from the child 7f3a" in done.stderr.splitlines()
    assert "marker" not in done.stdout  # stdout is the protocol's; the child's stderr stays off it


def test_clean_shutdown_closes_stdin_and_the_child_exits_by_itself() -> None:
    """LC-25, first step: on stdin EOF the server exits 0, without a signal."""

    async def main() -> None:
        client = Client.stdio(sys.executable, [FIXTURE])
        async with client:
            await client.list_tools()
            transport = client.transport
            assert isinstance(transport, StdioClientTransport)
            assert transport.process is not None
            assert transport.process.returncode is None
        assert transport.process.returncode == 0

    run(main)


STUBBORN = textwrap.dedent(
    """
    import signal, sys, time
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sys.stdout.write('{"jsonrpc": "2.0", "method": "ready"}\\n')
    sys.stdout.flush()
    while True:
        time.sleep(60)
    """
)


def test_a_child_that_ignores_eof_and_sigterm_is_killed() -> None:
    """LC-25, last step: SIGKILL after the grace periods, within a bounded time."""

    async def main() -> None:
        transport = StdioClientTransport(sys.executable, ["-c", STUBBORN], shutdown_grace=0.2)
        await transport.start()
        # Wait until the child has installed its SIGTERM handler.
        assert await transport.receive() == [{"jsonrpc": "2.0", "method": "ready"}]
        await transport.close()
        assert transport.process is not None
        assert transport.process.returncode == -9

    run(main)


def test_a_child_that_exits_on_sigterm_is_not_killed() -> None:
    """LC-25, middle step: a child deaf to EOF but not to SIGTERM ends with SIGTERM."""
    script = STUBBORN.replace("signal.signal(signal.SIGTERM, signal.SIG_IGN)", "")

    async def main() -> None:
        transport = StdioClientTransport(sys.executable, ["-c", script], shutdown_grace=0.2)
        await transport.start()
        assert await transport.receive() == [{"jsonrpc": "2.0", "method": "ready"}]
        await transport.close()
        assert transport.process is not None
        assert transport.process.returncode == -15

    run(main)


def test_the_child_dying_fails_every_pending_request_at_once() -> None:
    async def main() -> None:
        async with Client.stdio(sys.executable, [FIXTURE]) as client:
            started = asyncio.Event()
            slow = asyncio.create_task(client.call_tool("slow", {"seconds": 30}, on_progress=lambda _: started.set()))
            await started.wait()  # the slow call is in flight: its handler reported progress
            with pytest.raises(ConnectionClosed) as died:
                await client.call_tool("die")
            assert "connection closed" in died.value.message.lower()
            with pytest.raises(ConnectionClosed, match=r"(?i)connection closed"):
                await slow
            # Later calls fail fast too; nothing waits for an answer that cannot come.
            with pytest.raises(ConnectionClosed):
                await client.call_tool("echo", {"text": "anyone?"})
            assert client.connection.pending_requests == 0
            transport = client.transport
            assert isinstance(transport, StdioClientTransport)
        assert transport.process is not None
        assert transport.process.returncode == 3

    run(main)
