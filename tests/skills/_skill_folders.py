"""Skill folders written for a test, and the server that publishes them (tests/skills/).

``write_skills(root)`` makes ``root/skills/`` with two folder skills: ``pdf-processing`` (a
``SKILL.md`` with more front matter than ``name`` and ``description``, files in two subfolders, one
of them nested, one binary) and ``git-workflow`` (its ``SKILL.md`` alone). ``skills_server(root)``
publishes them with ``add_skills`` and adds a skill made in code, ``release-notes``, with a file.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from backchannel import Server

PDF_SKILL_MD = """---
name: pdf-processing
description: Extract, fill, and assemble PDF documents
license: Apache-2.0
metadata:
  version: "2.1.0"
  reviewed: yes
---

# PDF processing

Read `references/FORMS.md`, then pick a template from `templates/`.
"""
GIT_SKILL_MD = """---
name: git-workflow
description: Follow this team's Git conventions for branching and commits
---
Branch from main.
"""
PDF_FILES: dict[str, bytes] = {
    "SKILL.md": PDF_SKILL_MD.encode(),
    "references/FORMS.md": b"# Forms\n\nname, date, signature\n",
    "templates/invoice.md": b"# Invoice\n",
    "templates/regional/eu-invoice.md": "# Rechnung \u00fcber \u20ac\n".encode(),
    "assets/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
}
#: The order an entry lists them in: SKILL.md first, then by path.
PDF_ORDER = ["SKILL.md", *sorted(path for path in PDF_FILES if path != "SKILL.md")]
NOTES_FILE = "Keep a changelog: one line per change, newest first.\n"


def write_skills(root: Path) -> Path:
    """``root/skills`` holding the two folder skills; the folder."""
    folder = root / "skills"
    for relative, data in PDF_FILES.items():
        path = folder / "pdf-processing" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (folder / "git-workflow").mkdir(parents=True)
    (folder / "git-workflow" / "SKILL.md").write_text(GIT_SKILL_MD)
    (folder / "pdf-processing" / ".DS_Store").write_bytes(b"not part of the skill")
    return folder


def skills_server(root: Path, **options: Any) -> Server:
    """A server publishing ``write_skills(root)`` and a skill made in code (``release-notes``)."""
    server = Server("skills-test", **options)
    server.add_skills(write_skills(root))

    @server.skill(files={"references/STYLE.md": NOTES_FILE}, front_matter={"license": "MIT"})
    def release_notes() -> str:
        """Write release notes the way this project does."""
        return "# Release notes\n\nSee `references/STYLE.md`.\n"

    return server


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()
