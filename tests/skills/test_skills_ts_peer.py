"""The official TypeScript SDK's skills client (``@modelcontextprotocol/client`` 2.4.0, ``SkillsClient``)
reads our skills over Streamable HTTP at 2026-07-28: it finds the extension declared (with
``directoryRead``), takes every entry as valid, and every file it reads passes its own size,
SHA-256 and front matter checks (``ts_skills_client.mjs``)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from _skill_folders import PDF_FILES, PDF_ORDER, skills_server

from backchannel.testing import run, serve_on_loopback
from peers.paths import NODE22, have_npm_peers

pytestmark = pytest.mark.interop
DRIVER = Path(__file__).resolve().parent / "ts_skills_client.mjs"


@pytest.mark.skipif(not have_npm_peers(), reason="run tests/peers/install.sh")
def test_the_typescript_sdks_skills_client_reads_and_verifies_our_skills(tmp_path: Path) -> None:
    async def body() -> dict[str, Any]:
        async with serve_on_loopback(skills_server(tmp_path).http_app()) as base:
            process = await asyncio.create_subprocess_exec(
                str(NODE22), str(DRIVER), base + "/mcp", stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
            out, err = await asyncio.wait_for(process.communicate(), 45)
        assert process.returncode == 0, err.decode()[-3000:]
        return json.loads(out.decode().strip().splitlines()[-1])  # type: ignore[no-any-return]

    seen = run(body(), timeout=60)
    assert "error" not in seen, seen
    assert seen["supported"] is True and seen["directoryRead"] is True
    assert (seen["ttlMs"], seen["cacheScope"]) == (60_000, "private")
    assert seen["skills"] == [
        {"uri": "skill://git-workflow/SKILL.md", "name": "git-workflow", "files": 1},
        {"uri": "skill://pdf-processing/SKILL.md", "name": "pdf-processing", "files": 5},
        {"uri": "skill://release-notes/SKILL.md", "name": "release-notes", "files": 2},
    ]
    pdf = "skill://pdf-processing"
    assert seen["got"] == f"{pdf}/SKILL.md"
    assert seen["reads"] == [
        {"uri": f"{pdf}/{path}", "verified": True, "bytes": len(data)}
        for path, data in ((path, PDF_FILES[path]) for path in PDF_ORDER)
    ]
    assert seen["directory"] == [
        {"uri": f"{pdf}/SKILL.md", "mimeType": "text/markdown"},
        {"uri": f"{pdf}/assets", "mimeType": "inode/directory"},
        {"uri": f"{pdf}/references", "mimeType": "inode/directory"},
        {"uri": f"{pdf}/templates", "mimeType": "inode/directory"},
    ]
