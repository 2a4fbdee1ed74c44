"""Our client against another implementation of skills (SEP-2640): FastMCP 4.2.3's
``SkillsDirectoryProvider`` over stdio (``fastmcp_skills_server.py``), in the stateless era.

Every entry is listed and fetched, and every file read back passes our checks (size, SHA-256, front
matter), but one: FastMCP reads front matter with PyYAML's YAML 1.1, so ``reviewed: yes`` is
``true`` in its entry while the file, read as YAML 1.2's core schema (as we and the TypeScript SDK
read it), says the string ``"yes"``. The entry and the file then differ, and the client refuses the
skill's ``SKILL.md`` as the extension says a host must (§Frontmatter Verification). FastMCP does not
declare ``directoryRead``, so nothing is asked of ``resources/directory/read``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from _skill_folders import PDF_FILES, write_skills

from backchannel import Client
from backchannel.skills import SkillVerificationError
from backchannel.testing import Tap, run
from backchannel.transports.stdio import StdioClientTransport
from backchannel.types.errors import LocalProtocolError

pytestmark = pytest.mark.interop
SERVER = Path(__file__).resolve().parent / "fastmcp_skills_server.py"


def test_our_client_reads_and_checks_a_fastmcp_servers_skills(tmp_path: Path) -> None:
    pytest.importorskip("fastmcp.skills.provider")
    root = write_skills(tmp_path)

    async def body() -> None:
        tap = Tap()
        spawned = StdioClientTransport(sys.executable, [str(SERVER), str(root)])
        async with Client(tap.around(spawned)) as client:
            assert client.era == "stateless"
            skills = await client.list_skills()
            assert [skill.name for skill in skills] == ["git-workflow", "pdf-processing"]
            git, pdf = skills
            assert await client.get_skill(git.uri) == git
            assert (await client.read_skill_file(git)).text.startswith("---\nname: git-workflow\n")
            for path, data in PDF_FILES.items():
                if path != "SKILL.md":
                    assert (await client.read_skill_file(pdf, path)).data == data
            assert pdf.frontmatter["metadata"] == {"version": "2.1.0", "reviewed": True}  # YAML 1.1's "yes"
            with pytest.raises(SkillVerificationError) as refused:
                await client.read_skill_file(pdf)
            assert refused.value.reason == "frontmatter"
            assert "metadata: file {'version': '2.1.0', 'reviewed': 'yes'}" in str(refused.value)
            with pytest.raises(LocalProtocolError, match="does not declare directoryRead"):
                await client.read_skill_directory(pdf.root)
            assert not tap.requests_written("resources/directory/read")

    run(body, timeout=60)
